"""``manage.py import_areev`` on composed areev output. spec: importers.md, "areev"; interchange.md.

Fixtures (tests/lessons/importers/fixtures/areev/): ``grains.jsonl`` (10 live lesson grains on
desk.adbuy/invoice_capture, one superseded, one of relation ``prefers``, one torn line),
``grains_array.json`` (2 grains as a JSON array), ``finding.json`` (a loop.lesson_pile/1 finding with
held, regressed, drifted, an unknown ``wobbled`` and a "not applied by the loop" member),
``finding_without_time.json`` (no ``created_at_ms``), ``outcomes.json`` (rows rec-1, rec-2, rec-3),
``map.json`` (rec-1 -> grains 6 and 7, rec-3 -> grain 8) and ``draft.json`` (a consolidation draft).
"""

from __future__ import annotations

import hashlib
import os
import shutil

import pytest

from lessons.core.text import format_datetime
from lessons.importers.areev import translate_files
from lessons.models import Draft, Host, Lesson, Verdict
from lessons.selectors.piles import piles_json
from tests.fixtures.importers import FIXTURES, run_command

AREEV = FIXTURES / "areev"
HOST = "adbuy-desk"
ALL = (
    "grains.jsonl",
    "grains_array.json",
    "finding.json",
    "finding_without_time.json",
    "outcomes.json",
    "draft.json",
)


def grain(n: int) -> str:
    """The hash of fixture grain ``n`` (as the fixtures were composed)."""
    return hashlib.sha256(f"areev-grain-{n}".encode()).hexdigest()


def import_areev(*names, extra=()):
    return run_command("import_areev", *(str(AREEV / n) for n in names), "--host", HOST, *extra)


def verdicts_of(n: int) -> list[tuple]:
    rows = Verdict.objects.filter(lesson__hash=grain(n)).order_by("measured_at", "metric")
    return [
        (v.verdict, v.metric, format_datetime(v.measured_at), v.baseline, v.current, v.horizon_ms)
        for v in rows
    ]


def test_lesson_grains_become_lessons_with_their_own_hashes(db):
    code, out, _err = import_areev("grains.jsonl")
    assert code == 0
    assert (
        out.splitlines()[-2] == "imported: 11 line(s); 11 created, 0 unchanged, 0 updated, 0 held, 0 rejected"
    )
    first = Lesson.objects.get(hash=grain(0))
    assert (
        first.namespace,
        first.subject,
        first.text,
        format_datetime(first.created_at),
        first.confidence,
    ) == (
        "desk.adbuy",
        "invoice_capture",
        "Rule number 0 for invoice_capture.",
        "2026-01-18T00:00:00.000Z",
        0.9,
    )


def test_a_grain_with_superseded_by_is_superseded(db):
    import_areev("grains.jsonl")
    old = Lesson.objects.get(hash=grain(10))
    assert (old.status, old.superseded_by) == ("superseded", grain(0))


def test_a_grain_of_another_relation_is_counted_and_not_imported(db):
    _code, out, _err = import_areev("grains.jsonl")
    assert "1 grains not lessons" in out.splitlines()[-1]
    assert not Lesson.objects.filter(hash=grain(11)).exists()


def test_a_malformed_line_is_skipped_and_counted(db):
    code, out, err = import_areev("grains.jsonl")
    assert code == 0
    assert "1 skipped lines" in out.splitlines()[-1]
    assert (
        "note: grains.jsonl:13: skipped: not valid JSON: Unterminated string starting at (column 116)" in err
    )


def test_grains_as_a_json_array_are_read_too(db):
    import_areev("grains_array.json")
    assert sorted(Lesson.objects.values_list("text", flat=True)) == ["Refund rule 0.", "Refund rule 1."]


def test_a_pile_finding_gives_each_member_verdict_measured_at_the_finding(db):
    import_areev("grains.jsonl", "finding.json")
    at = "2026-02-02T00:00:00.000Z"  # the finding's created_at_ms 1769990400000
    assert verdicts_of(0) == [("held", "lesson_pile", at, None, None, None)]
    assert verdicts_of(1) == [("regressed", "lesson_pile", at, None, None, None)]
    assert verdicts_of(4) == [("drifted", "lesson_pile", at, None, None, None)]


def test_an_unknown_verdict_is_kept_as_it_is(db):
    import_areev("grains.jsonl", "finding.json")
    assert verdicts_of(3) == [("wobbled", "lesson_pile", "2026-02-02T00:00:00.000Z", None, None, None)]
    assert Lesson.objects.get(hash=grain(3)).latest_verdict == "wobbled"


def test_not_applied_by_the_loop_is_no_verdict(db):
    import_areev("grains.jsonl", "finding.json")
    assert verdicts_of(2) == []


def test_a_finding_without_created_at_ms_is_measured_at_its_newest_member_not_the_files_time(db, tmp_path):
    # The pile's newest member is grain 9, created 2026-01-27; the copies' file times play no part.
    first, second = tmp_path / "a" / "finding.json", tmp_path / "b" / "finding.json"
    for path, mtime in ((first, 1770000000), (second, 1780000000)):
        path.parent.mkdir()
        shutil.copy(AREEV / "finding_without_time.json", path)
        os.utime(path, (mtime, mtime))
    import_areev("grains.jsonl")
    assert run_command("import_areev", str(first), "--host", HOST)[0] == 0
    code, out, _err = run_command("import_areev", str(second), "--host", HOST)
    assert code == 0
    assert "verdict" in out and Verdict.objects.filter(lesson__hash=grain(5)).count() == 1
    assert verdicts_of(5) == [("held_costlier", "lesson_pile", "2026-01-27T00:00:00.000Z", None, None, None)]


def test_a_finding_without_a_time_whose_members_nobody_has_is_skipped_with_a_note(db):
    code, _out, err = import_areev("finding_without_time.json")
    assert (code, Verdict.objects.count()) == (0, 0)
    assert (
        "finding_without_time.json: skipped: no created_at_ms, and none of the lessons it names is in the "
        "import or the database (its time is derived from them)"
    ) in err


def test_outcome_rows_become_verdicts_of_the_lessons_the_map_names(db):
    _code, out, err = import_areev("grains.jsonl", "outcomes.json", extra=("--map", str(AREEV / "map.json")))
    measured = "2026-02-03T00:00:00.000Z"
    assert verdicts_of(6) == [("regressed", "field_accuracy", measured, 0.92, 0.61, 604800000)]
    assert verdicts_of(7) == [("regressed", "field_accuracy", measured, 0.92, 0.61, 604800000)]
    # rec-3's verdict "sideways" is not in the known vocabulary: kept as it is.
    assert verdicts_of(8) == [("sideways", "latency_ms", "2026-02-04T00:00:00.000Z", 410.0, 395.0, 86400000)]
    assert "3 outcome rows, 1 unmapped outcome rows" in out.splitlines()[-1]
    assert "note: outcomes.json[1]: skipped: rec_hash 'rec-2' is not in the map" in err


def test_without_a_map_every_outcome_row_is_unmapped(db):
    _code, out, _err = import_areev("grains.jsonl", "outcomes.json")
    assert "3 outcome rows, 3 unmapped outcome rows" in out.splitlines()[-1]
    assert not Verdict.objects.exists()


def test_a_consolidation_draft_becomes_a_draft(db):
    import_areev("grains.jsonl", "draft.json")
    draft = Draft.objects.get()
    assert (
        draft.ext_id,
        draft.namespace,
        draft.subject,
        draft.text,
        draft.supersedes,
        draft.gates_pass,
        draft.drafted_by,
        draft.triggered_by,
        draft.confidence,
        format_datetime(draft.created_at),
    ) == (
        "rec-5be1",
        "desk.adbuy",
        "invoice_capture",
        "Fill all five invoice fields every time, as the rules 0 to 2 say.",
        [grain(0), grain(1), grain(2)],
        True,
        "llm:qwen3-30b",
        "user:dana",
        0.81,
        "2026-02-05T00:00:00.000Z",
    )


def test_a_verdict_for_a_lesson_nobody_has_is_skipped_and_counted(db):
    _code, out, err = import_areev("finding.json")  # the grains were never imported
    assert "4 verdicts, " in out and "4 references to unknown lessons" in out.splitlines()[-1]
    assert f"note: finding.json: verdicts[{grain(0)[:8]}]: verdict skipped: no lesson {grain(0)}" in err
    assert not Verdict.objects.exists()


def test_the_whole_output_imports_into_a_pile_with_the_verdicts_shown(ingest):
    ingest([{"type": "host", "name": HOST, "max_active": 8, "budget_enabled": True}])
    code, out, _err = import_areev(*ALL, extra=("--map", str(AREEV / "map.json")))
    assert code == 0
    assert (
        out.splitlines()[-2] == "imported: 22 line(s); 22 created, 0 unchanged, 0 updated, 0 held, 0 rejected"
    )
    pile = piles_json(host=HOST)["piles"][0]
    assert (pile["target"], pile["count"]) == ("entity:desk.adbuy/invoice_capture", 10)
    assert [m["verdict"] for m in pile["members"]][:6] == [
        "held",
        "regressed",
        "not applied by the loop",
        "wobbled",
        "drifted",
        "held_costlier",
    ]
    assert [d["id"] for d in pile["drafts"]] == ["rec-5be1"]


def test_importing_twice_changes_nothing(db):
    import_areev(*ALL, extra=("--map", str(AREEV / "map.json")))
    _code, out, _err = import_areev(*ALL, extra=("--map", str(AREEV / "map.json")))
    assert (
        out.splitlines()[-2] == "imported: 22 line(s); 0 created, 22 unchanged, 0 updated, 0 held, 0 rejected"
    )


def test_a_dry_run_writes_nothing(db):
    code, out, _err = import_areev(*ALL, extra=("--dry-run",))
    assert code == 0
    assert out.splitlines()[-2].startswith("dry run, nothing written: 19 line(s); 19 created")
    assert (Host.objects.count(), Lesson.objects.count(), Verdict.objects.count(), Draft.objects.count()) == (
        0,
        0,
        0,
        0,
    )


def test_an_unreadable_file_exits_1_with_a_message(db):
    code, out, err = import_areev("missing.json")
    assert (code, out) == (1, "")
    assert err == f"{AREEV / 'missing.json'}: cannot read: No such file or directory"


def test_a_map_that_is_not_an_object_of_hash_lists_exits_1(db, tmp_path):
    bad = tmp_path / "map.json"
    bad.write_text('{"rec-1": "not-a-hash"}')
    code, _out, err = import_areev("outcomes.json", extra=("--map", str(bad)))
    assert code == 1
    assert err.startswith(f"{bad}: expected a JSON object mapping each rec_hash to a list of lesson hashes")


@pytest.mark.parametrize(
    ("obj", "counter"),
    [
        ({"analyzer": "loop.other/1", "data": {}}, "unrecognised objects"),
        ({"draft": {"kind": "rewrite", "text": "x"}, "target_ref": "entity:a/b"}, "unrecognised objects"),
        ({"something": "else"}, "unrecognised objects"),
        ({"analyzer": "loop.lesson_pile/1", "data": {"pile": []}}, "skipped lines"),
        ({"hash": "abc", "fields": {"relation": "lesson", "subject": "s", "object": "o"}}, "skipped lines"),
    ],
)
def test_objects_of_other_shapes_are_skipped_and_counted(tmp_path, obj, counter):
    import json

    path = tmp_path / "other.json"
    path.write_text(json.dumps(obj))
    translation = translate_files([path])
    assert (translation.items, translation.counts[counter]) == ([], 1)


def test_a_draft_without_gate_results_is_recorded_as_failing_them(tmp_path):
    import json

    draft = json.loads((AREEV / "draft.json").read_text())
    draft["gates"] = {"GROUND": {"result": "passed"}}
    path = tmp_path / "draft.json"
    path.write_text(json.dumps(draft))
    (item,) = translate_files([path]).items
    assert item.record["gates"] == {"ground": "pass", "verify": "fail"}


def test_a_draft_target_ref_without_namespace_names_the_empty_namespace(tmp_path):
    import json

    draft = json.loads((AREEV / "draft.json").read_text())
    draft["target_ref"] = "entity:invoice_capture"
    path = tmp_path / "draft.json"
    path.write_text(json.dumps(draft))
    (item,) = translate_files([path]).items
    assert (item.record["namespace"], item.record["subject"]) == ("", "invoice_capture")
