"""Without a snapshot, the text a session was shown comes from the store's text history.

``data/altimate-history``: L-a1b2 was edited (staged 09-10, promoted 09-15 as version 1, whose
``versions/v1.json`` keeps the text before) and then pinned on 09-20, which moved its ``updated``.
ses_h0 (09-12) was shown the old text, ses_h2 (09-17) the new one; neither has a snapshot.
spec: importers.md, "altimate-code"; issue 11, item 4.
"""

from __future__ import annotations

import json

from lessons.core.text import lesson_hash, text_hash
from lessons.importers.altimate import translate_learn_dir
from lessons.importers.altimate_history import TextHistory
from lessons.importers.altimate_lesson import canonical
from lessons.models import Exposure, Lesson, RecurrenceCount
from tests.engines.conftest import DATA, store_copy, team_store
from tests.fixtures.importers import run_command

HOST = "history-dbt"
OLD = "Quote identifiers in Snowflake models."
NEW = "Quote identifiers with double quotes in Snowflake models."
ONE_MODEL = "Keep one model per source table in staging."
T_BEFORE_EDIT = 1_789_200_000_000  # 2026-09-12T08:00:00Z (edit staged, not yet promoted)
T_AFTER_EDIT = 1_789_632_000_000  # 2026-09-17T08:00:00Z (promoted, not yet pinned)


def exposures(translation):
    return {
        (r["session"], r["lesson_id"]): r
        for r in (i.record for i in translation.items)
        if r["type"] == "exposure"
    }


def test_the_text_live_before_a_promote_is_the_one_versions_archived():
    folder = team_store(DATA / "altimate-history")
    approved = json.loads((folder / "approved.json").read_text())
    texts = TextHistory(folder, approved)
    assert (texts.shown("L-a1b2", T_BEFORE_EDIT).text, texts.shown("L-a1b2", T_BEFORE_EDIT).certain) == (
        OLD,
        True,
    )
    assert (texts.shown("L-a1b2", T_AFTER_EDIT).text, texts.shown("L-a1b2", T_AFTER_EDIT).certain) == (
        NEW,
        True,
    )


def test_a_pin_that_moved_updated_does_not_hide_the_text_a_session_was_shown(history):
    shown = exposures(translate_learn_dir(history))
    assert shown[("ses_h2", "L-a1b2")]["text"] == NEW
    assert shown[("ses_h0", "L-a1b2")]["text"] == OLD
    assert shown[("ses_h2", "L-c3d4")]["text"] == ONE_MODEL


def test_the_archived_text_becomes_an_earlier_version_superseded_by_the_current_one(history):
    t = translate_learn_dir(history)
    versions = [
        r for r in (i.record for i in t.items) if r["type"] == "lesson" and r["lesson_id"] == "L-a1b2"
    ]
    assert [(r["text"], r["status"], r.get("superseded_by")) for r in versions] == [
        (NEW, "live", None),
        (OLD, "superseded", lesson_hash("team-playbook", "project", NEW)),
    ]
    assert t.counts["earlier versions from history"] == 1


def test_each_exposure_goes_to_the_version_the_session_was_shown(db, history, tmp_path):
    # First the store as it was before the edit (a team's earlier import), then as it is now.
    before = store_copy(DATA / "altimate-history", tmp_path / "before")
    folder = team_store(before)
    (folder / "approved.json").write_bytes((folder / "versions" / "v1.json").read_bytes())
    (folder / "history.jsonl").write_text((folder / "history.jsonl").read_text().splitlines()[0] + "\n")
    (folder / "shown.jsonl").unlink()
    for path in (folder / "versions").iterdir():
        path.unlink()
    assert run_command("import_altimate", str(before), "--host", HOST)[0] == 0
    code, _out, err = run_command("import_altimate", str(history), "--host", HOST)
    assert code == 0, err
    shown = {
        (e.session, e.lesson.lesson_id): e.lesson.text for e in Exposure.objects.select_related("lesson")
    }
    assert shown == {("ses_h0", "L-a1b2"): OLD, ("ses_h2", "L-a1b2"): NEW, ("ses_h2", "L-c3d4"): ONE_MODEL}


def test_without_history_the_current_text_is_a_guess_an_earlier_import_can_overrule(history):
    (team_store(history) / "history.jsonl").unlink()
    shown = exposures(translate_learn_dir(history))
    assert "text" not in shown[("ses_h0", "L-a1b2")]
    assert shown[("ses_h0", "L-a1b2")]["text_hash"] == text_hash(NEW)


def test_a_rolled_back_promote_restores_the_text_archived_before_it(history):
    folder = team_store(history)
    lines = (folder / "history.jsonl").read_text()
    lines += json.dumps({"ts": "2026-09-25T08:00:00.000Z", "action": "rollback", "version": 1}) + "\n"
    (folder / "history.jsonl").write_text(lines)
    approved = json.loads((folder / "versions" / "v1.json").read_text())
    (folder / "approved.json").write_text(canonical(approved))
    (folder / "versions" / "v1.json").unlink()  # altimate's rollback deletes the version it restores
    texts = TextHistory(folder, approved)
    assert texts.shown("L-a1b2", T_AFTER_EDIT).text == NEW  # live between the promote and the rollback
    assert texts.shown("L-a1b2", 1_790_323_200_000).text == OLD  # 2026-09-25T08:00:00Z, rolled back


def test_a_correction_matching_only_the_archived_text_a_session_was_shown_is_an_earlier_version(db, history):
    signal = {
        "id": "sig_0c0000000001",
        "kind": "user_correction",
        "sessionID": "ses_h0",
        "messageID": "msg_h0_2",
        "text": "Please quote identifiers in the Snowflake models.",
        "reason": "user gave a direction",
        "at": "2026-09-12T08:05:00.000Z",
        "status": "open",
    }
    (team_store(history) / "signals.jsonl").write_text(json.dumps(signal, separators=(",", ":")) + "\n")
    code, _out, err = run_command("import_altimate", str(history), "--host", HOST)
    assert code == 0, err
    current = Lesson.objects.get(host__name=HOST, lesson_id="L-a1b2", status="live")
    counts = RecurrenceCount.objects.get(lesson=current)
    assert (counts.earlier_version, counts.recurred, counts.unknown, counts.sessions_shown) == (1, 0, 0, 1)
