"""A consolidation written by a reviewer, approved by another and applied back with ``apply_decisions``:
to a real altimate store layout (the files altimate writes, byte for byte) and to a real areev memory file
through the binding (the lesson and markers areev's loop writes); a re-import or re-sync afterwards gives
the same pile, and a roll back is applied the same way. spec: docs/engines/altimate.md and
docs/engines/areev.md ("What is applied back"); docs/reviewing.md, "Writing a consolidation".
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from lessons.core.text import lesson_hash
from lessons.models import Draft, Host, Lesson
from lessons.selectors.piles import piles_json
from review.services.consolidation import consolidation_rollback, draft_approve
from review.services.decisions import lessons_retire
from review.services.written import consolidation_write
from tests.engines.conftest import (
    LESSONS,
    NS,
    SUBJECT,
    lesson_fields,
    loop_live,
    needs_areev,
    open_memory,
    recalled,
    release,
)
from tests.fixtures.importers import run_command

DECIDED = datetime(2026, 10, 6, 9, 0, 0, 250000, tzinfo=UTC)
WRITTEN_AT = datetime(2026, 10, 6, 8, 0, 0, tzinfo=UTC)


def write(host: str, namespace: str, subject: str, members: list[str], text: str, actor) -> Draft:
    return consolidation_write(
        host=Host.objects.get(name=host),
        namespace=namespace,
        subject=subject,
        text=text,
        supersedes=members,
        waivers={},
        actor=actor,
        pile_version=None,
        now=WRITTEN_AT,
    )


# --- altimate -------------------------------------------------------------------------------------

ALT = "dbt-project"
STORE = "team-playbook"
CONSOLIDATED = (
    "Convert `*_at` columns with `to_utc` and `*_cents` columns with `cents_to_dollars` in staging models."
)


def alt_lesson(lesson_id: str) -> Lesson:
    return Lesson.objects.get(host__name=ALT, lesson_id=lesson_id, status__in=["live", "retracted"])


def alt_apply(project):
    return run_command("apply_decisions", "--altimate", str(project), "--host", ALT)


@pytest.fixture
def alt_written(db, altimate_project, reviewer, second_reviewer):
    """The store imported, L-f5a8 retired by rita, and rita's consolidation of L-8201 and L-2fe6 approved
    by rob: the decisions of tests/engines/test_altimate_apply.py, but the consolidation written by hand."""
    code, _out, err = run_command("import_altimate", str(altimate_project), "--host", ALT)
    assert code == 0, err
    host = Host.objects.get(name=ALT)
    lessons_retire(
        host=host,
        hashes=[alt_lesson("L-f5a8").hash],
        actor=reviewer,
        reason="Marts config lives in dbt_project.yml.",
        now=DECIDED,
    )
    members = [alt_lesson("L-8201").hash, alt_lesson("L-2fe6").hash]
    draft = write(ALT, STORE, "project", members, CONSOLIDATED, reviewer)
    draft_approve(draft=draft, actor=second_reviewer, reason="One rule for staging conversions.", now=DECIDED)
    return altimate_project, draft


def test_an_approved_written_consolidation_writes_the_files_altimate_writes(alt_written):
    from tests.engines.conftest import DATA

    project, _draft = alt_written
    code, out, err = alt_apply(project)
    assert (code, err) == (0, "")
    new_id = "L-" + lesson_hash(STORE, "project", CONSOLIDATED)[:4]
    assert out.splitlines()[2] == (
        f"applied #2 approve_consolidation: {new_id} added to team-playbook/approved.json, superseding L-8201, L-2fe6"
    )
    store = project / ".altimate-code" / "learn" / STORE
    for name in ("approved.json", "retired.json", "candidate.json"):  # what altimate writes, to the byte
        assert (store / name).read_bytes() == (DATA / "altimate-applied" / name).read_bytes(), name
    retired = {x["id"]: x for x in json.loads((store / "retired.json").read_text())}
    assert (retired["L-8201"]["reason"], retired["L-8201"]["supersededBy"]) == (
        f"superseded by {new_id}",
        new_id,
    )


def test_the_reimported_store_gives_the_same_pile_and_a_roll_back_is_applied_back(alt_written, reviewer):
    project, draft = alt_written
    before = piles_json(host=ALT)
    alt_apply(project)
    code, out, err = run_command("import_altimate", str(project), "--host", ALT)
    assert code == 0, err
    assert piles_json(host=ALT) == before
    assert " 0 held," in out
    created = Lesson.objects.get(host__name=ALT, hash=lesson_hash(STORE, "project", CONSOLIDATED))
    assert (created.kind, created.origin, created.status) == ("consolidation", "human", "live")

    consolidation_rollback(draft=draft, actor=reviewer, reason="Two rules read better.", now=DECIDED)
    code, out, _err = alt_apply(project)
    assert out.splitlines()[0] == "1 applied, 0 skipped, 0 refused"
    code, _out, err = run_command("import_altimate", str(project), "--host", ALT)
    assert code == 0, err
    assert alt_lesson("L-8201").status == alt_lesson("L-2fe6").status == "live"
    assert Lesson.objects.get(pk=created.pk).status == "retracted"


# --- areev ----------------------------------------------------------------------------------------

AREEV = "adbuy-desk"
ADVERTISER = "Fill Advertiser with the sponsoring committee or candidate named on the order, from its Advertiser or Client line."


@pytest.fixture
def areev_written(db, tmp_path, reviewer, second_reviewer):
    """A memory file of the five lessons (no loop run: no model is attached), synced; rita's
    consolidation of the two Advertiser lessons approved by rob. ``(path, hashes, draft)``."""
    needs_areev()
    path = tmp_path / "memory.db"
    handle = open_memory(path, "user:host")
    hashes = [handle.add("fact", json.dumps(lesson_fields(i))) for i in range(len(LESSONS))]
    del handle
    release()
    code, _out, err = run_command("sync_areev", str(path), "--host", AREEV)
    assert code == 0, err
    draft = write(AREEV, NS, SUBJECT, [hashes[1], hashes[3]], ADVERTISER, reviewer)
    draft_approve(draft=draft, actor=second_reviewer, reason="Two Advertiser rules, one line.", now=DECIDED)
    return path, hashes, draft


def areev_apply(path):
    return run_command("apply_decisions", "--areev", str(path), "--host", AREEV)


@pytest.mark.postgres
def test_an_approved_written_consolidation_is_written_to_areev_as_its_loop_writes_one(areev_written):
    path, hashes, _draft = areev_written
    code, out, err = areev_apply(path)
    assert (code, err) == (0, "")
    served = {g["fields"]["object"]: g for g in recalled(path)}
    line = served[ADVERTISER]
    assert line["fields"]["consolidates"] == [hashes[1], hashes[3]]
    assert line["fields"]["written_by"] == "user:rita"
    assert out.splitlines()[0] == (
        f"applied: #1 approve_consolidation: written consolidation added as {line['hash'][:8]}… by user:rob, "
        "superseding 2 lessons"
    )
    assert loop_live(path) == sorted([hashes[0], hashes[2], hashes[4], line["hash"]])
    db = open_memory(path, "user:reader")
    grains = json.loads(
        db.cal(f'RECALL facts WHERE namespace = "{NS}" AND subject = "{SUBJECT}" LIMIT 100 WITH superseded')
    )["grains"]
    del db
    release()
    by_hash = {g["hash"]: g for g in grains}
    for member in (hashes[1], hashes[3]):
        marker = by_hash[by_hash[member]["fields"]["superseded_by"]]["fields"]
        assert (marker["relation"], marker["object"], marker["derived_from"]) == (
            "mg:lesson_consolidated",
            ADVERTISER,
            member,
        )


@pytest.mark.postgres
def test_a_resync_gives_the_same_pile_and_a_roll_back_is_applied_back(areev_written, reviewer):
    path, hashes, draft = areev_written
    before = piles_json(host=AREEV)
    areev_apply(path)
    code, out, err = run_command("sync_areev", str(path), "--host", AREEV)
    assert code == 0, err
    assert "1 consolidations the dashboard already holds" in out
    assert piles_json(host=AREEV) == before
    created = Lesson.objects.get(pk=Draft.objects.get(pk=draft.pk).created_lesson_id)
    assert (
        list(Lesson.objects.filter(hash__in=[hashes[1], hashes[3]]).values_list("status", "superseded_by"))
        == [("superseded", created.hash)] * 2
    )

    consolidation_rollback(draft=draft, actor=reviewer, reason="Two rules read better.", now=DECIDED)
    code, out, err = areev_apply(path)
    assert (code, err) == (0, "")
    assert out.splitlines()[0].startswith("applied: #2 rollback_consolidation: written consolidation ")
    assert out.splitlines()[0].endswith("and its 2 markers forgotten by user:rita; the members are live")
    assert loop_live(path) == sorted(hashes)
    code, _out, err = run_command("sync_areev", str(path), "--host", AREEV)
    assert code == 0, err
    assert set(Lesson.objects.filter(hash__in=hashes).values_list("status", flat=True)) == {"live"}
    assert Lesson.objects.get(pk=created.pk).status == "retracted"


@pytest.mark.postgres
def test_a_rejected_written_consolidation_changes_nothing_in_areev(db, tmp_path, reviewer, second_reviewer):
    from review.models import DecisionAck
    from review.services.consolidation import draft_reject

    needs_areev()
    path = tmp_path / "memory.db"
    handle = open_memory(path, "user:host")
    hashes = [handle.add("fact", json.dumps(lesson_fields(i))) for i in range(len(LESSONS))]
    del handle
    release()
    assert run_command("sync_areev", str(path), "--host", AREEV)[0] == 0
    draft = write(AREEV, NS, SUBJECT, [hashes[1], hashes[3]], ADVERTISER, reviewer)
    draft_reject(draft=draft, actor=second_reviewer, reason="Keep the two rules.", now=DECIDED)
    code, out, err = areev_apply(path)
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == (
        "applied: #1 reject_consolidation: a consolidation written in the dashboard: nothing in the engine to dismiss"
    )
    assert DecisionAck.objects.get().status == "applied"
    assert loop_live(path) == sorted(hashes)
