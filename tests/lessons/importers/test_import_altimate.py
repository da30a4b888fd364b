"""``manage.py import_altimate`` on the altimate-dbt-project corpus. spec: importers.md, README.md ("Commands"), docs/piles-and-recurrence.md.

Every test that changes the store works on a copy in ``tmp_path`` (fixture ``project``).
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime

from lessons.core.text import lesson_hash, text_hash
from lessons.importers.altimate import ERROR_NO_STORE
from lessons.importers.altimate_sessions import ALREADY_STORED
from lessons.importers.run import REASONS_NOT_COUNTED
from lessons.models import Correction, Exposure, Host, Lesson, RecurrenceCount
from lessons.selectors.piles import piles_json
from tests.fixtures.importers import run_command

HOST = "dbt-project"
L8201_NOW = "Convert `*_at` timestamp columns with `to_utc` in staging models."
L8201_BEFORE = "Convert `*_at` timestamp columns with `to_utc`."
L2FE6 = "Convert `*_cents` columns to dollars with `cents_to_dollars` in staging models."
APPROVED_ORDER = [  # oldest first (docs/piles-and-recurrence.md, rule 5): approved.json's "created"
    "L-8201",
    "L-2fe6",
    "L-5c1d",
    "L-77a0",
    "L-91b3",
    "L-a4c2",
    "L-b0de",
    "L-c3f1",
    "L-d9e4",
    "L-e12b",
    "L-f5a8",
    "L-0c7e",
]
FIRST_SUMMARY = "imported: 38 line(s); 38 created, 0 unchanged, 0 updated, 0 held, 0 rejected"
FIRST_COUNTS = (
    "importer: 1 stores, 1 candidates, 2 skipped lines, 1 skipped snapshots, 0 skipped symlinks, "
    "1 earlier versions from snapshots, 12 shown lines matched by a snapshot, 2 retirement reasons kept"
)

# The same store imported again: L-8201's earlier text is counted as already stored, not sent.
AGAIN_COUNTS = (
    "importer: 1 stores, 1 candidates, 2 skipped lines, 1 skipped snapshots, 0 skipped symlinks, "
    f"1 earlier versions from snapshots {ALREADY_STORED}, 12 shown lines matched by a snapshot"
)


def import_altimate(path, *extra):
    return run_command("import_altimate", str(path), "--host", HOST, *extra)


def lesson(lesson_id: str, text: str | None = None) -> Lesson:
    """The version of ``lesson_id`` with ``text``, else its live version, else its only version."""
    qs = Lesson.objects.filter(host__name=HOST, lesson_id=lesson_id)
    if text:
        return qs.get(hash=lesson_hash("team-playbook", "project", text))
    return qs.get(status="live") if qs.filter(status="live").exists() else qs.get()


def edit_store(learn, change):
    """Apply ``change(approved, retired)`` to team-playbook's lesson files."""
    store = learn / "team-playbook"
    approved = json.loads((store / "approved.json").read_text())
    retired = json.loads((store / "retired.json").read_text())
    change(approved, retired)
    (store / "approved.json").write_text(json.dumps(approved))
    (store / "retired.json").write_text(json.dumps(retired))


def move_to_retired(lesson_id, **extra):
    def change(approved, retired):
        entry = next(e for e in approved if e["id"] == lesson_id)
        approved.remove(entry)
        retired.append({**entry, **extra})

    return change


def test_the_import_prints_the_report_and_the_importers_counts(budget_host, project):
    code, out, _err = import_altimate(project)
    assert code == 0
    assert out.splitlines() == [
        "type          created unchanged   updated      held  rejected",
        "lesson             15         0         0         0         0",
        "exposure           14         0         0         0         0",
        "correction          9         0         0         0         0",
        FIRST_SUMMARY,
        FIRST_COUNTS,
    ]


def test_the_import_flags_exactly_one_pile_with_the_twelve_approved_lessons(budget_host, project):
    import_altimate(project)
    piles = piles_json(host=HOST)["piles"]
    assert [(p["target"], p["count"], p["max_active"]) for p in piles] == [
        ("entity:team-playbook/project", 12, 8)
    ]
    assert [m["lesson_id"] for m in piles[0]["members"]] == APPROVED_ORDER
    assert {m["store"] for m in piles[0]["members"]} == {"team-playbook"}


def test_the_retired_lessons_are_not_live_and_keep_their_reasons(budget_host, project):
    import_altimate(project)
    superseded, retracted = lesson("L-1a2b"), lesson("L-3c4d")
    assert (superseded.status, superseded.superseded_by, superseded.source_note) == (
        "superseded",
        lesson("L-2fe6").hash,
        "superseded by L-2fe6",
    )
    assert (retracted.status, retracted.superseded_by, retracted.source_note) == (
        "retracted",
        None,
        "auto: harmful outweighs helpful",
    )


def test_candidates_are_counted_and_not_imported(budget_host, project):
    _code, out, _err = import_altimate(project)
    assert "1 candidates" in out.splitlines()[-1]
    # 12 approved + 2 retired + L-8201's earlier text, shown in ses_d01's snapshot
    assert Lesson.objects.filter(host__name=HOST).count() == 15
    assert lesson("L-8201").helpful == 1  # the candidate's helpful 3 is not imported


def test_applied_is_the_greater_of_the_lessons_and_usage_json(budget_host, project):
    import_altimate(project)
    applied = {i: lesson(i).applied for i in ("L-8201", "L-2fe6", "L-91b3", "L-1a2b", "L-5c1d")}
    assert (
        applied["L-8201"],
        applied["L-2fe6"],
        applied["L-91b3"],
        applied["L-1a2b"],
        applied["L-5c1d"],
    ) == (9, 6, 4, 4, 0)


def test_the_torn_shown_line_and_the_non_json_signal_line_are_skipped_and_counted(budget_host, project):
    code, out, err = import_altimate(project)
    assert code == 0
    assert "2 skipped lines" in out.splitlines()[-1]
    assert "note: team-playbook/shown.jsonl:15: skipped: not valid JSON" in err
    assert "note: team-playbook/signals.jsonl:10: skipped: not valid JSON" in err
    assert Correction.objects.filter(host__name=HOST).count() == 9  # 10 lines, the last not JSON


def test_importing_twice_changes_nothing(budget_host, project):
    import_altimate(project)
    code, out, _err = import_altimate(project)
    assert code == 0
    # 37 lines: L-8201's earlier text (from a snapshot) is stored now, so it is not sent again; the
    # importer line says so, and the two retired lessons still keep their reasons.
    assert out.splitlines()[-2:] == [
        "imported: 37 line(s); 0 created, 37 unchanged, 0 updated, 0 held, 0 rejected",
        AGAIN_COUNTS + ", 2 retirement reasons kept",
    ]


def test_a_dry_run_after_an_import_reconciles_with_it(budget_host, project):
    """The newcomer run's item 13: 38 lines, then 37 in the dry run, and the snapshot's earlier version
    gone from the counts; now the dry run counts it as already stored (37 + 1 = 38) and says why it has
    no retirement reasons count."""
    import_altimate(project)
    code, out, err = import_altimate(project, "--dry-run")
    assert code == 0
    assert out.splitlines()[-2:] == [
        "dry run, nothing written: 37 line(s); 0 created, 37 unchanged, 0 updated, 0 held, 0 rejected",
        AGAIN_COUNTS,
    ]
    assert f"note: {REASONS_NOT_COUNTED}" in err.splitlines()


def test_the_learn_folder_itself_can_be_the_path(budget_host, learn):
    code, out, _err = import_altimate(learn)
    assert (code, out.splitlines()[-2]) == (0, FIRST_SUMMARY)


def test_a_lesson_moved_from_approved_to_retired_stops_being_live(budget_host, project, learn):
    import_altimate(project)
    edit_store(learn, move_to_retired("L-77a0", reason="obsolete"))
    code, out, _err = import_altimate(project)
    assert code == 0
    assert (
        out.splitlines()[-2] == "imported: 37 line(s); 0 created, 36 unchanged, 1 updated, 0 held, 0 rejected"
    )
    moved = lesson("L-77a0")
    assert (moved.status, moved.source_note) == ("retracted", "obsolete")
    assert piles_json(host=HOST)["piles"][0]["count"] == 11


def test_a_lesson_retired_with_superseded_by_becomes_superseded_by_that_lesson(budget_host, project, learn):
    import_altimate(project)
    edit_store(learn, move_to_retired("L-91b3", reason="merged", supersededBy="L-0c7e"))
    import_altimate(project)
    moved = lesson("L-91b3")
    assert (moved.status, moved.superseded_by) == ("superseded", lesson("L-0c7e").hash)


def test_an_edited_lesson_supersedes_its_earlier_version(budget_host, project, learn):
    import_altimate(project)
    new_text = "Convert `*_cents` columns to dollars with `cents_to_dollars` in every staging model."

    def edit(approved, _retired):
        next(e for e in approved if e["id"] == "L-2fe6")["text"] = new_text

    edit_store(learn, edit)
    code, out, _err = import_altimate(project)
    assert code == 0
    # The new version is created; the earlier version is updated to superseded (L-1a2b's successor
    # moves to the new version too): 2 updated.
    assert (
        out.splitlines()[-2] == "imported: 38 line(s); 1 created, 35 unchanged, 2 updated, 0 held, 0 rejected"
    )
    old, new = lesson("L-2fe6", L2FE6), lesson("L-2fe6", new_text)
    assert (old.status, old.superseded_by, new.status) == ("superseded", new.hash, "live")
    assert lesson("L-1a2b").superseded_by == new.hash
    assert piles_json(host=HOST)["piles"][0]["count"] == 12
    code, out, _err = import_altimate(project)
    assert (
        out.splitlines()[-2] == "imported: 37 line(s); 0 created, 37 unchanged, 0 updated, 0 held, 0 rejected"
    )


def test_a_retirement_is_held_when_a_reviewers_decision_is_newer(budget_host, project, learn):
    import_altimate(project)
    Lesson.objects.filter(lesson_id="L-77a0").update(decided_at=datetime(2026, 10, 5, tzinfo=UTC))
    edit_store(learn, move_to_retired("L-77a0", reason="obsolete"))
    _code, out, err = import_altimate(project)
    assert (
        out.splitlines()[-2] == "imported: 37 line(s); 0 created, 36 unchanged, 0 updated, 1 held, 0 rejected"
    )
    held = lesson("L-77a0")
    assert (held.status, held.source_note) == ("live", "")
    assert f"note: lesson {held.hash[:8]} on {HOST}: stays live" in err


def test_a_symlinked_store_folder_is_skipped_and_counted(budget_host, project, learn):
    other = project / "elsewhere"
    shutil.copytree(learn / "team-playbook", other)
    (learn / "other-store").symlink_to(other, target_is_directory=True)
    code, out, err = import_altimate(project)
    assert code == 0
    assert out.splitlines()[-1] == FIRST_COUNTS.replace("0 skipped symlinks", "1 skipped symlinks")
    assert "note: other-store/: symlinked store folder skipped" in err
    assert set(Lesson.objects.values_list("store", flat=True)) == {"team-playbook"}


def test_a_snapshot_whose_file_name_does_not_match_its_session_is_skipped(budget_host, project, learn):
    sessions = learn / ".sessions"
    d01 = sessions / "0d41a0391eb6f332b41cef36e9e63aca08ba9ffe30c4a54967472214a48ae58a.json"
    d01.rename(sessions / ("0" * 64 + ".json"))
    _code, out, _err = import_altimate(project)
    assert "2 skipped snapshots" in out.splitlines()[-1]  # this one and the corpus's ses_d98
    # Without its snapshot, ses_d01's exposure of L-8201 comes from shown.jsonl alone: the text at
    # shown_at is assumed, and the only stored version is the current one.
    exposure = Exposure.objects.get(session="ses_d01", lesson_key__endswith="L-8201")
    assert exposure.text_hash == text_hash(L8201_NOW)
    assert not Exposure.objects.filter(session="ses_d98").exists()


def test_a_dry_run_writes_nothing(budget_host, project):
    code, out, _err = import_altimate(project, "--dry-run")
    assert code == 0
    assert (
        out.splitlines()[-2]
        == "dry run, nothing written: 38 line(s); 38 created, 0 unchanged, 0 updated, 0 held, 0 rejected"
    )
    assert (Lesson.objects.count(), Exposure.objects.count(), Correction.objects.count()) == (0, 0, 0)


def test_the_earlier_text_shown_in_ses_d01_is_kept_and_ses_d05_has_the_current_one(budget_host, project):
    import_altimate(project)
    by_session = {
        e.session: e.text_hash
        for e in Exposure.objects.filter(host__name=HOST, lesson_key__endswith="L-8201")
    }
    assert by_session == {
        "ses_d01": text_hash(L8201_BEFORE),  # the snapshot: the earlier text was shown
        "ses_d02": text_hash(L8201_NOW),
        "ses_d03": text_hash(L8201_NOW),
        "ses_d04": text_hash(L8201_NOW),
        "ses_d05": text_hash(L8201_NOW),  # no snapshot: the current text (not updated since 10-01)
    }


def test_the_recurrence_counts_of_l_8201(budget_host, project):
    from lessons.recurrence.refresh import recurrence_recompute

    import_altimate(project)
    recurrence_recompute(host=Host.objects.get(name=HOST))
    counts = RecurrenceCount.objects.get(lesson=lesson("L-8201"))
    # L-8201 now: "Convert `*_at` timestamp columns with `to_utc` in staging models." (full anchor
    # to_utc; content tokens convert, timestamp, columns, to_utc, staging, models). Per session:
    # - ses_d01: shown only the earlier text (snapshot); sig_..00 "No, convert the `created_at`
    #   timestamps with `to_utc`." matches it (to_utc + convert), no other candidate matches
    #   (L-2fe6: only "convert"; L-91b3: nothing)                        -> earlier_version 1
    # - ses_d02: shown the current text 08:00:00.000, turn 08:00:00.019; sig_..01 matches
    #   -> recurred; sig_..06 "Don't drop `to_utc` from the macros list." is the anchor alone: no match
    # - ses_d03: shown 08:00:00.000 <= turn 08:00:00.019; sig_..02 (to_utc + convert) -> recurred
    # - ses_d04: turn 12:00:00.019, L-8201 shown 12:00:23 (file tier); sig_..03 -> during
    # - ses_d05: no turnStartedAt; sig_..04 "you forgot to convert `created_at` with `to_utc`" -> unknown
    # - ses_d06, ses_d98 (snapshot skipped, so no exposures): L-8201 not shown there.
    # sessions_shown = d02, d03, d04, d05 (ses_d01 saw the earlier text) = 4; recurred 2 in 2
    # sessions (d02, d03): recurring.
    assert {
        f: getattr(counts, f)
        for f in (
            "sessions_shown",
            "recurred",
            "recurred_sessions",
            "during",
            "unknown",
            "ambiguous",
            "earlier_version",
        )
    } == {
        "sessions_shown": 4,
        "recurred": 2,
        "recurred_sessions": 2,
        "during": 1,
        "unknown": 1,
        "ambiguous": 0,
        "earlier_version": 1,
    }


def test_a_lesson_file_that_does_not_parse_is_reported_and_skipped_whole(budget_host, project, learn):
    (learn / "team-playbook" / "retired.json").write_text('[{"id": "L-1a2b",')
    code, out, err = import_altimate(project)
    assert code == 0
    assert "note: team-playbook/retired.json: does not parse, skipped whole" in err
    assert Lesson.objects.filter(host__name=HOST).count() == 13  # 12 approved + L-8201's earlier text
    assert "1 skipped lesson files" in out.splitlines()[-1]


def test_a_path_without_a_store_exits_1_with_a_message(db, tmp_path):
    code, out, err = import_altimate(tmp_path)
    assert (code, out) == (1, "")
    assert err == ERROR_NO_STORE.format(path=tmp_path)
    assert not Host.objects.exists()


def test_a_missing_path_exits_1_with_a_message(db, tmp_path):
    code, _out, err = import_altimate(tmp_path / "missing")
    assert code == 1
    assert (
        err
        == f"{tmp_path / 'missing'}: no such folder: give a project root or its .altimate-code/learn/ folder"
    )


def test_a_bad_host_name_exits_2(db, project):
    code, _out, err = run_command("import_altimate", str(project), "--host", "Dbt Project")
    assert code == 2
    assert "--host: expected a host name" in err
