"""``import_areev`` on output recorded from the real areev 1.13.2 binding (no engine needed here).

Fixtures (tests/engines/fixtures/, recorded by running the binding on the five lessons of
``tests.engines.conftest`` with the scripted model): ``lessons.jsonl`` (the five lesson grains, CAL
``WITH superseded``), ``loop_show.json`` (the pile finding and the consolidation recommendation as
``loop show`` prints them: pretty-printed JSON objects one after another), ``recall_after_apply.json``
(``recall`` once the consolidation was applied: one grain with ``fields.consolidates``),
``applied_consolidation.json`` (that recommendation, now ``applied``) and
``pile_with_consolidation.json`` (the next pile finding, three lessons later: the consolidation
``unmeasured``). spec: importers.md, "areev".
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from lessons.core.text import format_datetime
from lessons.importers.areev import translate_files
from lessons.models import Draft, Lesson, Verdict
from tests.fixtures.importers import run_command

FIXTURES = Path(__file__).resolve().parent / "fixtures"
HOST = "adbuy-desk"
MEMBERS = [  # the five lessons, oldest first (created 2026-01-15 .. 2026-01-19)
    "2fe77d12f092fb79aa64ee147c9d5ba1f2853c8e6922d1533c20c4abcec174b9",
    "ee00520832df1864d9fc3c33bca39e921078a9e711efae2ad8b2e05459e7b03c",
    "56401275ca980c1e0e57e52fab064a90a16bff4bc32419ab7484018f42ac421a",
    "c704502f4d825e9b4b1000fe63010b1442ab67080b0a41fc1447caef1c934a19",
    "35d3c0e0054594de0317030d213c297b0af366e87da4097fcb509d8f59b061ff",
]
CONSOLIDATION = "71eef47297b4f8420d8dc8ef472cfd27d204beaab9cd6986cd72cf1b55f1d6ec"
REC = "4896435687a5ac907208f663a5f341cfc550c711476ad636fd733d80e9f1adec"
TEXT = "Fill Advertiser with the sponsor on the order; write flight dates as YYYY-MM-DD; write Gross Amount bare."


def import_areev(*paths):
    return run_command("import_areev", *(str(p) for p in paths), "--host", HOST)


def statuses() -> list[tuple[str, str, str | None, str]]:
    rows = Lesson.objects.filter(host__name=HOST).order_by("created_at")
    return [(lesson.hash, lesson.status, lesson.superseded_by, lesson.kind) for lesson in rows]


def test_loop_show_output_gives_the_pile_finding_and_the_consolidation_draft(db):
    code, out, err = import_areev(FIXTURES / "lessons.jsonl", FIXTURES / "loop_show.json")
    assert (code, err) == (0, "note: host adbuy-desk created with the defaults (budget off)\n")
    assert (
        "importer: 5 lessons, 0 grains not lessons, 1 findings, 0 verdicts, 0 outcome rows, "
        "0 unmapped outcome rows, 1 drafts, 0 skipped lines"
    ) in out
    draft = Draft.objects.get()
    assert (
        draft.ext_id,
        draft.namespace,
        draft.subject,
        draft.text,
        draft.supersedes,
        (draft.gate_ground, draft.gate_verify),
        draft.drafted_by,
        draft.triggered_by,
        draft.confidence,
        format_datetime(draft.created_at),
    ) == (
        REC,
        "desk.adbuy",
        "invoice_capture",
        TEXT,
        sorted(MEMBERS),
        ("pass", "pass"),
        "llm:scripted-consolidator",
        None,
        0.88,
        "2026-01-19T00:00:00.000Z",  # no created_at_ms: the newest member's created_at
    )


def test_a_recommendation_the_engine_already_decided_is_counted_not_drafted(db):
    translation = translate_files([FIXTURES / "applied_consolidation.json"])
    assert (translation.items, translation.counts["recommendations the engine already decided"]) == ([], 1)
    assert translation.problems == [
        f"applied_consolidation.json: skipped: recommendation '{REC}' is applied in the engine"
    ]


def test_a_recalled_consolidation_supersedes_its_members_already_imported(db):
    assert import_areev(FIXTURES / "lessons.jsonl")[0] == 0
    code, _out, err = import_areev(FIXTURES / "recall_after_apply.json")
    assert (code, err) == (0, "")
    assert statuses() == [
        *((h, "superseded", CONSOLIDATION, "lesson") for h in MEMBERS),
        (CONSOLIDATION, "live", None, "consolidation"),
    ]
    assert sorted(Lesson.objects.get(hash=CONSOLIDATION).consolidates) == sorted(MEMBERS)


def test_members_and_their_consolidation_in_one_import_point_at_it_not_at_areevs_marker(db):
    assert import_areev(FIXTURES / "lessons.jsonl", FIXTURES / "recall_after_apply.json")[0] == 0
    assert [s[1:3] for s in statuses()] == [("superseded", CONSOLIDATION)] * 5 + [("live", None)]


def test_the_same_finding_from_copies_written_at_different_times_adds_one_verdict(db, tmp_path):
    assert import_areev(FIXTURES / "recall_after_apply.json")[0] == 0
    copies = []
    for name, mtime in (("a", 1770000000), ("b", 1790000000)):
        copy = tmp_path / name / "pile.json"
        copy.parent.mkdir()
        shutil.copy(FIXTURES / "pile_with_consolidation.json", copy)
        os.utime(copy, (mtime, mtime))
        copies.append(copy)
    assert import_areev(copies[0])[0] == 0
    code, out, _err = import_areev(copies[1])
    assert code == 0 and "verdict             0         1" in out
    rows = [
        (v.lesson.hash, v.verdict, v.metric, format_datetime(v.measured_at)) for v in Verdict.objects.all()
    ]
    # measured at the newest member the database knows: the consolidation, created when it was applied
    assert rows == [(CONSOLIDATION, "unmeasured", "lesson_pile", "2026-12-01T09:05:48.605Z")]


def test_cal_whose_add_and_supersede_lines_disagree_is_skipped_with_the_reason(tmp_path):
    rec = json.loads((FIXTURES / "applied_consolidation.json").read_text())
    rec["status"] = "pending"
    rec["cal"] = rec["cal"].rsplit("\n", 1)[0]  # drop the last SUPERSEDE line
    path = tmp_path / "rec.json"
    path.write_text(json.dumps(rec, indent=2))
    translation = translate_files([path])
    assert (translation.items, translation.problems) == (
        [],
        ["rec.json: skipped: the ADD line's consolidates and the SUPERSEDE lines must name the same lessons"],
    )


def test_pretty_printed_objects_with_a_broken_one_keep_the_ones_before_it(tmp_path):
    text = (FIXTURES / "loop_show.json").read_text()
    path = tmp_path / "show.json"
    path.write_text(text + '{\n  "analyzer": "loop.lesson_pile/1",\n  "data": \n')
    translation = translate_files([path])
    lines = text.count("\n")
    assert (
        translation.counts["findings"],
        translation.counts["drafts"],
        translation.counts["skipped lines"],
    ) == (
        1,
        1,
        1,
    )
    # the file holds no lessons, so the two untimed objects are dropped too (their notes come after)
    assert translation.problems[0] == (
        f"show.json:{lines + 1}: skipped the rest of the file: Expecting value at line {lines + 4} column 1"
    )
