"""The altimate importer accepts exactly what altimate-code's own readers accept.

Stores under ``data/altimate-small`` are in altimate's canonical format (checked once with altimate's
readers); each test changes a copy the way a real store can be, and asserts what is imported.
spec: importers.md, "altimate-code"; issue 11, item 4.
"""

from __future__ import annotations

import hashlib
import json

import pytest

from lessons.core.interchange import RecordError, parse_object
from lessons.core.text import lesson_hash
from lessons.importers.altimate import translate_learn_dir
from lessons.importers.altimate_lesson import canonical
from lessons.models import Correction
from tests.engines.conftest import team_store
from tests.fixtures.importers import run_command

HOST = "small-dbt"


def lessons(translation):
    return [
        (r["lesson_id"], r["status"]) for r in (i.record for i in translation.items) if r["type"] == "lesson"
    ]


def corrections(translation):
    return [r["id"] for r in (i.record for i in translation.items) if r["type"] == "correction"]


def edit(path, change):
    value = json.loads(path.read_text())
    change(value)
    path.write_text(canonical(value))


def test_the_small_store_translates_its_lessons_and_its_one_valid_signal(small):
    t = translate_learn_dir(small)
    assert lessons(t) == [("L-a1b2", "live"), ("L-c3d4", "live"), ("L-e5f6", "superseded")]
    assert corrections(t) == ["sig_0a0000000001"]


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda v: v[1].update(color="red"), "[1] unknown key 'color'"),
        (lambda v: v[1].update(trigger={"glob": "*"}), '[1] trigger: wrong type or value {"glob": "*"}'),
        (lambda v: v[0].update(id="L-ABCD"), '[0] id: expected ids matching ^L-[0-9a-f]{4,}$, got "L-ABCD"'),
        (lambda v: v[0].update(id="L-abc"), '[0] id: expected ids matching ^L-[0-9a-f]{4,}$, got "L-abc"'),
        (lambda v: v[1].update(id="L-a1b2"), "[1] repeats lesson id L-a1b2"),
        (lambda v: v[0].pop("tags"), "[0] tags: required"),
        (lambda v: v[0].update(helpful=1.5), "[0] helpful: wrong type or value 1.5"),
        (lambda v: v[0].update(pinned=None), "[0] pinned: wrong type or value null"),
        (lambda v: v[0].update(scope="global"), '[0] scope: wrong type or value "global"'),
    ],
)
def test_an_approved_file_altimate_refuses_is_skipped_whole(small, change, problem):
    edit(team_store(small) / "approved.json", change)
    t = translate_learn_dir(small)
    assert lessons(t) == [("L-e5f6", "retracted")]  # its successor is in no file altimate reads
    assert f"team-playbook/approved.json: altimate refuses it, skipped whole ({problem})" in t.problems
    assert t.counts["skipped lesson files"] == 1


def test_a_counter_written_as_1_0_is_an_integer_to_altimate(small):
    edit(team_store(small) / "approved.json", lambda v: v[0].update(helpful=2.0))
    records = [i.record for i in translate_learn_dir(small).items if i.record.get("lesson_id") == "L-a1b2"]
    assert (records[0]["status"], records[0]["helpful"]) == ("live", 2)


def test_a_file_with_a_byte_order_mark_is_refused_as_altimates_json_parse_refuses_it(small):
    path = team_store(small) / "approved.json"
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    t = translate_learn_dir(small)
    assert [x for x in lessons(t) if x[1] == "live"] == []
    assert t.counts["skipped lesson files"] == 1


def test_one_bad_retired_record_refuses_retired_json_whole(small):
    edit(team_store(small) / "retired.json", lambda v: v[0].pop("reason"))
    t = translate_learn_dir(small)
    assert lessons(t) == [("L-a1b2", "live"), ("L-c3d4", "live")]
    assert (
        "team-playbook/retired.json: altimate refuses it, skipped whole ([0] reason: required)" in t.problems
    )


def test_a_repeated_id_in_retired_json_is_accepted_as_altimate_accepts_it(small):
    edit(team_store(small) / "retired.json", lambda v: v.append(dict(v[0], text="Run everything first.")))
    assert ("L-e5f6", "superseded") in lessons(translate_learn_dir(small))


def test_a_retired_entry_whose_id_is_still_approved_is_a_staged_removal_not_imported(small):
    approved = json.loads((team_store(small) / "approved.json").read_text())
    edit(team_store(small) / "retired.json", lambda v: v.append(dict(approved[0], reason="removed")))
    t = translate_learn_dir(small)
    assert lessons(t) == [("L-a1b2", "live"), ("L-c3d4", "live"), ("L-e5f6", "superseded")]
    assert t.counts["staged removals"] == 1


def test_signal_lines_altimate_drops_are_skipped_and_counted(small):
    t = translate_learn_dir(small)
    assert t.counts["signal lines altimate refuses"] == 3
    assert [p for p in t.problems if "signals.jsonl" in p] == [
        "team-playbook/signals.jsonl:2: skipped as altimate skips it: reason: expected a string",
        'team-playbook/signals.jsonl:3: skipped as altimate skips it: status: expected "open" or "consumed"',
        "team-playbook/signals.jsonl:4: skipped as altimate skips it: kind: expected one of "
        "user_correction, tool_retry, review, ci",
    ]


def test_usage_entries_altimate_drops_do_not_raise_applied(small):
    (team_store(small) / "usage.json").write_text(canonical({"L-a1b2": 5.0, "L-c3d4": 1.5, "lesson": 9}))
    applied = {
        i.record["lesson_id"]: i.record["applied"]
        for i in translate_learn_dir(small).items
        if "applied" in i.record
    }
    assert applied == {"L-a1b2": 5, "L-c3d4": 0, "L-e5f6": 0}


def test_a_correction_of_1500_characters_is_kept_whole(db, small):
    text = "Quote the identifiers. " * 65  # 1495 characters once trimmed
    path = team_store(small) / "signals.jsonl"
    line = json.loads(path.read_text().splitlines()[0])
    line["text"] = text
    path.write_text(json.dumps(line) + "\n")
    code, _out, err = run_command("import_altimate", str(small), "--host", HOST)
    assert code == 0, err
    assert Correction.objects.get(ext_id="sig_0a0000000001").text == text.strip()


def test_a_correction_over_2000_characters_is_shortened_to_2000_not_refused(db, small):
    path = team_store(small) / "signals.jsonl"
    line = json.loads(path.read_text().splitlines()[0])
    line["text"] = "x" * 2500
    path.write_text(json.dumps(line) + "\n")
    code, out, err = run_command("import_altimate", str(small), "--host", HOST)
    assert code == 0, err
    assert Correction.objects.get(ext_id="sig_0a0000000001").text == "x" * 1997 + "..."
    assert "1 correction texts shortened" in out


def test_the_hash_of_an_approved_lesson_is_unchanged_by_strict_reading(small):
    t = translate_learn_dir(small)
    text = "Quote identifiers with double quotes in Snowflake models."
    assert t.items[0].record["hash"] == lesson_hash("team-playbook", "project", text)


def test_the_interchange_takes_corrections_up_to_2000_characters_and_lessons_up_to_1000():
    base = {"type": "correction", "host": HOST, "session": "s", "kind": "user_correction", "corrected_at": 0}
    assert len(parse_object({**base, "text": "y" * 2000}).text) == 2000
    with pytest.raises(RecordError, match="expected 1..2000 characters after normalization, got 2001"):
        parse_object({**base, "text": "y" * 2001})
    lesson = {
        "type": "lesson",
        "host": HOST,
        "namespace": "n",
        "subject": "s",
        "created_at": 0,
        "text": "y" * 1001,
    }
    with pytest.raises(RecordError, match="expected 1..1000 characters after normalization, got 1001"):
        parse_object(lesson)


def test_a_snapshot_with_one_lesson_altimate_refuses_is_skipped_whole(altimate_project):
    path = (
        altimate_project
        / ".altimate-code/learn/.sessions"
        / (hashlib.sha256(b"ses_d01").hexdigest() + ".json")
    )
    edit(path, lambda state: state["shown"][2]["lesson"].update(note="extra"))
    t = translate_learn_dir(altimate_project)
    assert (
        f".sessions/{path.name}: skipped whole, as altimate's delivery skips it: shown[2].lesson: unknown key 'note'"
    ) in t.problems
    d01 = [r for r in (i.record for i in t.items) if r["type"] == "exposure" and r["session"] == "ses_d01"]
    assert [origin for origin in (i.origin for i in t.items) if "0d41a039" in origin] == []
    assert len(d01) == 3  # from shown.jsonl instead
    assert "earlier versions from snapshots" not in t.counts  # ses_d01's old L-8201 text is unknown now
