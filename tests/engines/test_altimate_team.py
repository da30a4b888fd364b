"""Team lessons from ``remote.json`` and the legacy project-wide ``learn/signals.jsonl``.

``data/altimate-team``: two local lessons, three team lessons for this store (one new, one that
replaces the local L-c3d4, one workspace-wide whose key a visible local lesson holds, so delivery
gives it an alias) and one for another store; session ses_t1 was shown all four. The legacy signals
file repeats the store's signal (by id, and by dedupe key) and adds two. spec: importers.md,
"altimate-code"; issue 11, item 4.
"""

from __future__ import annotations

import json

from lessons.core.text import lesson_hash, text_hash
from lessons.importers.altimate import translate_learn_dir
from lessons.importers.altimate_lesson import canonical
from lessons.models import Correction, Exposure
from tests.engines.conftest import team_store
from tests.fixtures.importers import run_command

HOST = "team-dbt"
ALIAS = "L-a3f0636e7dd1ca36"  # "L-" + sha256("alias\0" "0" "\0" '[null,"team-playbook","L-a1b2"]')[:16]
TEAM_C3D4 = "Keep one staging model per source table."
LOCAL_C3D4 = "Keep one model per source table."


def records(translation, rtype):
    return [i.record for i in translation.items if i.record["type"] == rtype]


def test_team_lessons_are_live_lessons_under_the_ids_delivery_gives_them(team):
    t = translate_learn_dir(team)
    assert [(r["lesson_id"], r["text"]) for r in records(t, "lesson")] == [
        ("L-a1b2", "Quote identifiers with double quotes in Snowflake models."),
        ("L-9f9f", "Run `dbt deps` after changing packages.yml."),
        ("L-c3d4", TEAM_C3D4),
        (ALIAS, "Prefer `ref` over hard-coded schema names."),
    ]
    assert t.counts["team lessons"] == 3
    assert t.counts["local lessons hidden by team lessons"] == 1


def test_exposures_to_team_lessons_resolve(db, team):
    code, out, err = run_command("import_altimate", str(team), "--host", HOST)
    assert code == 0, err
    assert "references to unknown lessons" not in out
    shown = {e.lesson.lesson_id: e.lesson.text for e in Exposure.objects.select_related("lesson")}
    assert shown == {
        "L-a1b2": "Quote identifiers with double quotes in Snowflake models.",
        "L-c3d4": TEAM_C3D4,
        "L-9f9f": "Run `dbt deps` after changing packages.yml.",
        ALIAS: "Prefer `ref` over hard-coded schema names.",
    }


def test_a_team_text_in_a_snapshot_is_no_earlier_version_of_the_local_lesson(team):
    (team_store(team) / "remote.json").unlink()  # sync off: the local L-c3d4 is shown again
    t = translate_learn_dir(team)
    c3d4 = [(r["text"], r["status"]) for r in records(t, "lesson") if r["lesson_id"] == "L-c3d4"]
    assert c3d4 == [(LOCAL_C3D4, "live")]
    assert "earlier versions from snapshots" not in t.counts


def test_a_store_with_only_remote_json_is_imported(team):
    (team_store(team) / "approved.json").unlink()
    t = translate_learn_dir(team)
    assert [r["lesson_id"] for r in records(t, "lesson")] == ["L-9f9f", "L-c3d4", "L-a1b2"]


def test_a_malformed_remote_json_reads_as_absent(team):
    path = team_store(team) / "remote.json"
    path.write_text(canonical({**json.loads(path.read_text()), "version": 2}))
    t = translate_learn_dir(team)
    assert [r["lesson_id"] for r in records(t, "lesson")] == ["L-a1b2", "L-c3d4"]
    assert (
        "team-playbook/remote.json: read as absent, as altimate reads it (expected an object with version 1)"
    ) in t.problems


def test_legacy_signals_are_migrated_into_the_default_store_as_altimate_migrates_them(db, team):
    t = translate_learn_dir(team)
    assert [r["id"] for r in records(t, "correction")] == [
        "sig_0b0000000001",
        "sig_0b0000000002",
        "sig_0b0000000003",
    ]
    assert (t.counts["legacy signals migrated"], t.counts["legacy signals the store already has"]) == (2, 2)
    assert "learn/signals.jsonl:5: skipped as altimate skips it: kind: expected one of " in "\n".join(
        t.problems
    )
    code, _out, err = run_command("import_altimate", str(team), "--host", HOST)
    assert code == 0, err
    assert sorted(Correction.objects.values_list("ext_id", flat=True)) == [
        "sig_0b0000000001",
        "sig_0b0000000002",
        "sig_0b0000000003",
    ]


def test_the_hash_of_a_team_lesson_is_its_stores(team):
    lesson = next(r for r in records(translate_learn_dir(team), "lesson") if r["lesson_id"] == "L-9f9f")
    assert lesson["hash"] == lesson_hash("team-playbook", "project", lesson["text"])


def test_a_session_without_snapshot_shown_a_hidden_id_was_shown_the_team_text(team):
    sessions = team / ".altimate-code" / "learn" / ".sessions"
    for path in sessions.iterdir():
        path.unlink()
    shown = {r["lesson_id"]: r for r in records(translate_learn_dir(team), "exposure")}
    assert shown["L-c3d4"]["text_hash"] == text_hash(TEAM_C3D4)
