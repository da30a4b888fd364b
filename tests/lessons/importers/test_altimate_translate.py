"""The altimate translation alone (no database): files in, interchange record dicts out.

spec: importers.md, "altimate-code learn store". The corpus is read, never written.
"""

from __future__ import annotations

import json

import pytest

from lessons.core.text import lesson_hash
from lessons.importers.altimate import (
    ERROR_NO_APPROVED,
    ERROR_NO_STORE,
    ERROR_NOT_FOUND,
    KnownVersion,
    translate_learn_dir,
)
from lessons.importers.common import SourceError
from tests.fixtures.importers import ALTIMATE

LEARN = ALTIMATE / ".altimate-code" / "learn"
L8201_NOW = "Convert `*_at` timestamp columns with `to_utc` in staging models."
L8201_BEFORE = "Convert `*_at` timestamp columns with `to_utc`."
L2FE6 = "Convert `*_cents` columns to dollars with `cents_to_dollars` in staging models."


def records(translation, rtype):
    return [item.record for item in translation.items if item.record["type"] == rtype]


def by_id(translation):
    """Lesson records by id (the first of each id: approved and retired come before earlier versions)."""
    found = {}
    for r in records(translation, "lesson"):
        found.setdefault(r["lesson_id"], r)
    return found


def test_the_corpus_translates_into_15_lessons_14_exposures_and_9_corrections():
    t = translate_learn_dir(ALTIMATE)
    # 15 lessons: 12 approved, 2 retired, and L-8201's earlier text from ses_d01's snapshot.
    assert (len(records(t, "lesson")), len(records(t, "exposure")), len(records(t, "correction"))) == (
        15,
        14,
        9,
    )
    assert t.counts == {
        "stores": 1,
        "candidates": 1,
        "skipped lines": 2,
        "skipped snapshots": 1,
        "skipped symlinks": 0,
        "earlier versions from snapshots": 1,
        "shown lines matched by a snapshot": 12,
    }


def test_a_project_root_and_its_learn_folder_translate_the_same():
    assert translate_learn_dir(ALTIMATE).items == translate_learn_dir(LEARN).items


def test_an_approved_lesson_becomes_a_live_lesson_of_the_store_entity():
    assert by_id(translate_learn_dir(ALTIMATE))["L-8201"] == {
        "type": "lesson",
        "namespace": "team-playbook",
        "subject": "project",
        "text": L8201_NOW,
        "hash": lesson_hash("team-playbook", "project", L8201_NOW),
        "created_at": "2026-08-25T08:00:00.000Z",
        "lesson_id": "L-8201",
        "store": "team-playbook",
        "origin": "llm",
        "status": "live",
        "helpful": 1,
        "harmful": 0,
        "applied": 9,
        "tags": [],  # applied: max(0, usage.json's 9)
    }


def test_a_retired_lesson_with_superseded_by_is_superseded_by_the_successors_hash():
    lesson = by_id(translate_learn_dir(ALTIMATE))["L-1a2b"]
    assert (lesson["status"], lesson["superseded_by"]) == (
        "superseded",
        lesson_hash("team-playbook", "project", L2FE6),
    )


def test_a_retired_lesson_without_superseded_by_is_retracted_and_keeps_its_reason():
    t = translate_learn_dir(ALTIMATE)
    lesson = by_id(t)["L-3c4d"]
    assert (lesson["status"], "superseded_by" in lesson) == ("retracted", False)
    assert t.retired_reasons[lesson["hash"]] == "auto: harmful outweighs helpful"


def test_a_successor_id_the_store_does_not_have_makes_the_retired_lesson_retracted(tmp_path):
    learn = tmp_path / "learn"
    (learn / "ops").mkdir(parents=True)
    (learn / "ops" / "approved.json").write_text("[]")
    retired = [
        {
            "id": "L-0001",
            "text": "Old rule.",
            "tags": [],
            "scope": "project",
            "helpful": 0,
            "harmful": 0,
            "applied": 0,
            "created": "2026-01-01T00:00:00.000Z",
            "updated": "2026-01-01T00:00:00.000Z",
            "reason": "r",
            "supersededBy": "L-ffff",
        }
    ]
    (learn / "ops" / "retired.json").write_text(json.dumps(retired))
    assert by_id(translate_learn_dir(learn))["L-0001"]["status"] == "retracted"


def test_an_earlier_text_a_snapshot_shows_becomes_a_version_superseded_by_the_current_one():
    versions = [r for r in records(translate_learn_dir(ALTIMATE), "lesson") if r["lesson_id"] == "L-8201"]
    assert versions[1] == {
        "type": "lesson",
        "namespace": "team-playbook",
        "subject": "project",
        "text": L8201_BEFORE,
        "hash": lesson_hash("team-playbook", "project", L8201_BEFORE),
        "created_at": "2026-08-25T08:00:00.000Z",
        "lesson_id": "L-8201",
        "store": "team-playbook",
        "origin": "llm",
        "status": "superseded",
        "superseded_by": lesson_hash("team-playbook", "project", L8201_NOW),
    }


def test_the_session_snapshot_gives_the_exact_text_shown():
    exposures = records(translate_learn_dir(ALTIMATE), "exposure")
    d01 = [e for e in exposures if (e["session"], e["lesson_id"]) == ("ses_d01", "L-8201")]
    assert d01 == [
        {
            "type": "exposure",
            "session": "ses_d01",
            "store": "team-playbook",
            "lesson_id": "L-8201",
            "shown_at": "2026-09-28T08:00:00.000Z",
            "text": L8201_BEFORE,
            "tier": "core",
        }
    ]


def test_a_shown_line_without_snapshot_after_the_last_promote_gives_the_current_text():
    exposures = records(translate_learn_dir(ALTIMATE), "exposure")
    d05 = [e for e in exposures if (e["session"], e["lesson_id"]) == ("ses_d05", "L-8201")]
    # history.jsonl: the last promote was 2026-10-01T08:00Z, before it was shown at 2026-10-03T22:00Z.
    assert d05 == [
        {
            "type": "exposure",
            "session": "ses_d05",
            "store": "team-playbook",
            "lesson_id": "L-8201",
            "shown_at": "2026-10-03T22:00:00.000Z",
            "tier": "core",
            "text": L8201_NOW,
        }
    ]


def test_a_snapshot_whose_file_name_is_not_the_sha256_of_its_session_is_skipped():
    t = translate_learn_dir(ALTIMATE)
    assert [e for e in records(t, "exposure") if e["session"] == "ses_d98"] == []
    assert (
        ".sessions/73321b0567f63328d3cc5bc436e227278f2888abbe056bcddf291560851bd3d1.json: "
        "skipped: sha256 of session 'ses_d98' is not the file name"
    ) in t.problems


def test_the_torn_shown_line_and_the_non_json_signal_line_are_skipped_and_listed():
    t = translate_learn_dir(ALTIMATE)
    assert t.problems[:2] == [
        "team-playbook/shown.jsonl:15: skipped: not valid JSON: Unterminated string starting at (column 27)",
        "team-playbook/signals.jsonl:10: skipped: not valid JSON: Expecting value (column 1)",
    ]


def test_a_signal_becomes_a_correction_with_corrected_at_or_else_at():
    corrections = {c["id"]: c for c in records(translate_learn_dir(ALTIMATE), "correction")}
    assert corrections["sig_000000000000"] == {
        "type": "correction",
        "id": "sig_000000000000",
        "kind": "user_correction",
        "session": "ses_d01",
        "text": "No, convert the `created_at` timestamps with `to_utc`.",
        "corrected_at": "2026-09-28T08:05:00.000Z",
        "turn_started_at": "2026-09-28T08:00:00.019Z",
    }
    older = corrections["sig_000000000004"]  # an older store: no correctedAt, no turnStartedAt
    assert (older["corrected_at"], older["turn_started_at"]) == ("2026-10-03T22:05:00.400Z", None)


def test_candidates_are_counted_and_not_translated():
    t = translate_learn_dir(ALTIMATE)
    assert t.counts["candidates"] == 1
    assert by_id(t)["L-8201"]["helpful"] == 1  # approved.json's, not candidate.json's 3


def test_an_earlier_live_version_no_longer_in_the_store_is_superseded_by_the_new_one():
    old_text = "Convert `*_cents` columns to dollars."
    old = KnownVersion(
        hash=lesson_hash("team-playbook", "project", old_text),
        store="team-playbook",
        lesson_id="L-2fe6",
        namespace="team-playbook",
        subject="project",
        text=old_text,
        created_at_ms=1787731200000,
        status="live",
        origin="llm",
        helpful=2,
        harmful=0,
        applied=6,
    )
    t = translate_learn_dir(ALTIMATE, known=[old])
    versions = [r for r in records(t, "lesson") if r["lesson_id"] == "L-2fe6"]
    assert versions[-1] == {
        "type": "lesson",
        "namespace": "team-playbook",
        "subject": "project",
        "text": old_text,
        "hash": old.hash,
        "created_at": 1787731200000,
        "lesson_id": "L-2fe6",
        "store": "team-playbook",
        "status": "superseded",
        "superseded_by": lesson_hash("team-playbook", "project", L2FE6),
        "kind": "lesson",
        "tags": [],
        "origin": "llm",
        "helpful": 2,
        "harmful": 0,
        "applied": 6,
    }
    assert t.counts["earlier versions superseded"] == 1


def test_a_missing_folder_is_a_clear_error(tmp_path):
    with pytest.raises(SourceError) as exc:
        translate_learn_dir(tmp_path / "nope")
    assert str(exc.value) == ERROR_NOT_FOUND.format(path=tmp_path / "nope")


def test_a_folder_without_any_store_is_a_clear_error(tmp_path):
    (tmp_path / "claims").mkdir()
    (tmp_path / "team.lock").mkdir()
    with pytest.raises(SourceError) as exc:
        translate_learn_dir(tmp_path)
    assert str(exc.value) == ERROR_NO_STORE.format(path=tmp_path)


def test_stores_without_approved_json_are_a_clear_error(tmp_path):
    (tmp_path / "team-playbook").mkdir()
    (tmp_path / "team-playbook" / "candidate.json").write_text("[]")
    with pytest.raises(SourceError) as exc:
        translate_learn_dir(tmp_path)
    assert str(exc.value) == ERROR_NO_APPROVED.format(path=tmp_path, stores="team-playbook")
