"""``manage.py apply_decisions --altimate``: reviewers' decisions written back to an altimate store.

A retire and an approved consolidation are decided in the dashboard on an imported copy of the
altimate-dbt-project store, applied back, checked byte for byte against the files altimate would
write (``data/altimate-applied/``), and re-imported to the same piles. spec: decisions.md, "Hosts
apply decisions"; issue 11, item 3.
"""

from __future__ import annotations

import json

import pytest

from lessons.core.text import lesson_hash
from lessons.importers.altimate_lesson import canonical
from lessons.models import Draft, Lesson
from lessons.selectors.piles import piles_json
from review.apply.altimate_store import E_UNWRITABLE, LOCK_NAME
from review.models import DecisionAck
from review.services.budget import host_set_budget
from review.services.consolidation import consolidation_rollback, draft_reject
from review.services.decisions import lesson_restore, lessons_retire
from tests.engines.altimate_decided import CONSOLIDATED, DECIDED, HOST, NEW_ID, STORE, decide, lesson
from tests.engines.conftest import ALTIMATE_CORPUS, DATA
from tests.fixtures.importers import run_command

APPLIED = DATA / "altimate-applied"
ORIGINAL = ALTIMATE_CORPUS / ".altimate-code" / "learn" / STORE


def digest(text: str) -> str:
    return lesson_hash(STORE, "project", text)


@pytest.fixture
def decided(db, altimate_project, reviewer, second_reviewer):
    """The store imported, L-f5a8 retired, and a consolidation of L-8201 and L-2fe6 approved."""
    return decide(altimate_project, reviewer)


def apply(project, *extra):
    return run_command("apply_decisions", "--altimate", str(project), "--host", HOST, *extra)


def store_of(project):
    return project / ".altimate-code" / "learn" / STORE


def test_a_retire_and_a_consolidation_write_the_files_altimate_writes(decided):
    code, out, err = apply(decided)
    assert (code, err) == (0, "")
    store = store_of(decided)
    for name in ("approved.json", "retired.json", "candidate.json"):
        assert (store / name).read_bytes() == (APPLIED / name).read_bytes(), name
    # learn promote's archive: the replaced approved.json, byte for byte, as the next version
    assert (store / "versions" / "v1.json").read_bytes() == (ORIGINAL / "approved.json").read_bytes()
    history = [json.loads(x) for x in (store / "history.jsonl").read_text().splitlines()]
    assert history[0] == {"ts": "2026-10-01T08:00:00.000Z", "action": "promote", "version": 4}
    assert {k: v for k, v in history[1].items() if k != "ts"} == {
        "action": "promote",
        "version": 1,
        "source": "lesson-pile-review",
        "decisions": [1, 2],
    }
    assert sorted(p.name for p in store.iterdir()) == [
        "approved.json",
        "candidate.json",
        "history.jsonl",
        "retired.json",
        "shown.jsonl",
        "signals.jsonl",
        "usage.json",
        "versions",
    ]  # no temporary file left, and altimate's learn lock released
    assert not (store.parent / LOCK_NAME).exists()
    assert out.splitlines() == [
        "2 applied, 0 skipped, 0 refused",
        "applied #1 retire: L-f5a8 moved to team-playbook/retired.json",
        f"applied #2 approve_consolidation: {NEW_ID} added to team-playbook/approved.json, "
        "superseding L-8201, L-2fe6",
        "wrote team-playbook/versions/v1.json",
        "wrote team-playbook/approved.json",
        "wrote team-playbook/retired.json",
        "wrote team-playbook/candidate.json",
        "wrote team-playbook/history.jsonl",
    ]


def test_the_new_id_is_the_consolidations_hash_prefix(decided):
    apply(decided)
    approved = json.loads((store_of(decided) / "approved.json").read_text())
    assert approved[0]["id"] == NEW_ID == "L-3dda"
    assert lesson_hash(STORE, "project", approved[0]["text"]).startswith("3dda")


def test_each_applied_decision_is_acknowledged_applied_with_what_changed(decided):
    apply(decided)
    acks = list(
        DecisionAck.objects.order_by("decision__seq").values_list(
            "decision__seq", "status", "detail", "token_name"
        )
    )
    assert acks == [
        (1, "applied", "L-f5a8 moved to team-playbook/retired.json", "apply_decisions --altimate"),
        (
            2,
            "applied",
            f"{NEW_ID} added to team-playbook/approved.json, superseding L-8201, L-2fe6",
            "apply_decisions --altimate",
        ),
    ]


def test_the_reimported_store_shows_the_piles_the_dashboard_shows(decided):
    before = piles_json(host=HOST)
    apply(decided)
    code, out, err = run_command("import_altimate", str(decided), "--host", HOST)
    assert code == 0, err
    assert piles_json(host=HOST) == before
    assert " 0 held," in out  # the store agrees with every decision: none had to be held
    created = Lesson.objects.get(host__name=HOST, hash=digest(CONSOLIDATED))
    assert (created.kind, created.lesson_id, created.store, created.status) == (
        "consolidation",
        NEW_ID,
        STORE,
        "live",
    )


def test_a_rerun_applies_nothing_twice(decided):
    apply(decided)
    store = store_of(decided)
    files = {p.name: p.read_bytes() for p in store.iterdir() if p.is_file()}
    code, out, _err = apply(decided)
    assert (code, out) == (0, "0 applied, 0 skipped, 0 refused\n")
    assert {p.name: p.read_bytes() for p in store.iterdir() if p.is_file()} == files


def test_a_decision_the_store_already_shows_is_acknowledged_without_a_change(decided):
    apply(decided)
    DecisionAck.objects.all().delete()  # as if the acknowledgements were lost after the write
    code, out, _err = apply(decided)
    assert code == 0
    assert out.splitlines() == [
        "2 applied, 0 skipped, 0 refused",
        "applied #1 retire: L-f5a8 is already in team-playbook/retired.json",
        f"applied #2 approve_consolidation: {NEW_ID} is already in team-playbook/approved.json",
    ]
    assert (store_of(decided) / "versions" / "v2.json").exists() is False


def test_a_dry_run_writes_no_file_and_no_acknowledgement(decided):
    store = store_of(decided)
    files = {p.name: p.read_bytes() for p in store.iterdir() if p.is_file()}
    code, out, _err = apply(decided, "--dry-run")
    assert code == 0
    assert out.splitlines()[0] == "dry run, nothing written: 2 applied, 0 skipped, 0 refused"
    assert {p.name: p.read_bytes() for p in store.iterdir() if p.is_file()} == files
    assert not (store / "versions").exists()
    assert DecisionAck.objects.count() == 0


def test_a_rollback_puts_the_members_back_in_the_consolidations_place(decided, second_reviewer):
    apply(decided)
    draft = Draft.objects.get(ext_id="rec-stg-1")
    consolidation_rollback(draft=draft, actor=second_reviewer, reason="Two rules read better.", now=DECIDED)
    code, out, _err = apply(decided)
    assert out.splitlines()[:2] == [
        "1 applied, 0 skipped, 0 refused",
        f"applied #3 rollback_consolidation: {NEW_ID} moved to team-playbook/retired.json, "
        "its members back to approved.json",
    ]
    store = store_of(decided)
    assert (store / "approved.json").read_bytes() == canonical(
        [x for x in json.loads((ORIGINAL / "approved.json").read_text()) if x["id"] != "L-f5a8"]
    ).encode()
    retired = json.loads((store / "retired.json").read_text())
    assert [(x["id"], x["reason"]) for x in retired] == [
        ("L-1a2b", "superseded by L-2fe6"),
        ("L-3c4d", "auto: harmful outweighs helpful"),
        ("L-f5a8", "Marts config lives in dbt_project.yml. (review decision #1 by rita)"),
        (NEW_ID, "Two rules read better. (review decision #3 by rob)"),
    ]
    code, _out, err = run_command("import_altimate", str(decided), "--host", HOST)
    assert code == 0, err
    assert lesson("L-8201").status == lesson("L-2fe6").status == "live"


def test_a_restore_moves_the_lesson_back_to_approved(decided, reviewer):
    apply(decided)
    lesson_restore(lesson=lesson("L-f5a8"), actor=reviewer, reason="Still true for marts.", now=DECIDED)
    code, out, _err = apply(decided)
    assert out.splitlines()[1] == "applied #3 restore: L-f5a8 moved back to team-playbook/approved.json"
    store = store_of(decided)
    approved = json.loads((store / "approved.json").read_text())
    assert approved[-1] == next(
        x for x in json.loads((ORIGINAL / "approved.json").read_text()) if x["id"] == "L-f5a8"
    )
    assert "L-f5a8" not in [x["id"] for x in json.loads((store / "retired.json").read_text())]


def test_a_lesson_edited_in_the_store_since_the_decision_is_refused_and_acknowledged_failed(decided):
    path = store_of(decided) / "approved.json"
    approved = json.loads(path.read_text())
    next(x for x in approved if x["id"] == "L-f5a8")["text"] = "Marts are tables."
    path.write_text(canonical(approved))
    code, out, _err = apply(decided)
    assert code == 1
    assert out.splitlines()[:3] == [
        "1 applied, 0 skipped, 1 refused",
        f"applied #2 approve_consolidation: {NEW_ID} added to team-playbook/approved.json, "
        "superseding L-8201, L-2fe6",
        "refused #1 retire: L-f5a8 in team-playbook/approved.json has other text than the lesson "
        "decided on (edited since)",
    ]
    ack = DecisionAck.objects.get(decision__seq=1)
    assert (ack.status, ack.detail) == (
        "failed",
        "L-f5a8 in team-playbook/approved.json has other text than the lesson decided on (edited since)",
    )


def test_a_store_file_altimate_refuses_is_never_written(decided):
    path = store_of(decided) / "retired.json"
    path.write_text(path.read_text().replace('"tags"', '"labels"', 1))
    before = path.read_bytes()
    code, out, _err = apply(decided)
    assert code == 1
    assert out.splitlines()[1] == (
        "refused #1 retire: team-playbook/retired.json: altimate refuses this file ([0] unknown key 'labels')"
    )
    assert path.read_bytes() == before
    assert not (store_of(decided) / "versions").exists()


@pytest.mark.parametrize(("name", "field"), [("approved.json", "text"), ("retired.json", "updated")])
def test_a_store_file_holding_a_lone_surrogate_is_refused_by_name_and_nothing_written(decided, name, field):
    """JSON's "\\ud800" decodes to a lone surrogate, which has no UTF-8: the store was written up to the
    file that could not be encoded (a UnicodeEncodeError traceback), now refused before any write."""
    store = store_of(decided)
    lessons = json.loads((store / name).read_text())
    lessons[0][field] = lessons[0][field][:4] + "\ud800"
    (store / name).write_text(json.dumps(lessons, indent=2))  # ASCII: the escape as it is in the file
    before = {p.name: p.read_bytes() for p in store.iterdir() if p.is_file()}
    code, out, err = apply(decided)
    refusal = E_UNWRITABLE.format(file=f"{STORE}/{name}", field=f"[0].{field}")
    assert (code, "Traceback" in err) == (1, False)
    assert out.splitlines()[:3] == [
        "0 applied, 0 skipped, 2 refused",
        f"refused #1 retire: {refusal}",
        f"refused #2 approve_consolidation: {refusal}",
    ]
    assert {p.name: p.read_bytes() for p in store.iterdir() if p.is_file()} == before
    assert not (store / "versions").exists()
    assert list(DecisionAck.objects.order_by("decision__seq").values_list("status", "detail")) == [
        ("failed", refusal),
        ("failed", refusal),
    ]


def test_a_fresh_altimate_lock_refuses_the_whole_run(decided):
    lock = store_of(decided).parent / LOCK_NAME
    lock.mkdir()
    (lock / "heartbeat").touch()
    code, _out, err = apply(decided, "--wait", "0")
    assert code == 1
    assert err.endswith(f"altimate holds its learn lock ({LOCK_NAME}); try again when it is done")
    assert DecisionAck.objects.count() == 0
    assert not (store_of(decided) / "versions").exists()


def test_a_budget_is_skipped_and_a_rejected_draft_needs_no_change(decided, admin_user, reviewer):
    apply(decided)
    host = lesson("L-77a0").host
    host_set_budget(
        host=host, actor=admin_user, max_active=9, budget_enabled=True, reason="Nine fit.", now=DECIDED
    )
    draft = {
        "type": "draft",
        "id": "rec-stg-2",
        "namespace": STORE,
        "subject": "project",
        "text": "Test every primary key.",
        "supersedes": [lesson("L-77a0").hash],
        "drafted_by": "llm:claude",
        "gates": {"ground": "pass", "verify": "pass"},
        "created_at": "2026-10-06T12:00:00.000Z",
    }
    path = decided / "draft2.jsonl"
    path.write_text(json.dumps(draft) + "\n")
    assert run_command("ingest", str(path), "--host", HOST)[0] == 0
    draft_reject(
        draft=Draft.objects.get(ext_id="rec-stg-2"), actor=reviewer, reason="Too vague.", now=DECIDED
    )
    code, out, _err = apply(decided)
    assert (code, out.splitlines()) == (
        0,
        [
            "1 applied, 1 skipped, 0 refused",
            "applied #4 reject_consolidation: nothing to change in an altimate store",
            "skipped #3 set_budget: a budget is not stored in altimate",
        ],
    )
    assert list(DecisionAck.objects.filter(decision__seq__gte=3).values_list("decision__seq", "status")) == [
        (4, "applied")
    ]


def test_a_lesson_not_imported_from_altimate_is_refused_by_name(ingest, reviewer, altimate_project):
    text = "A lesson sent as interchange, not from the store."
    report = ingest(
        [
            {
                "type": "lesson",
                "host": HOST,
                "namespace": STORE,
                "subject": "project",
                "text": text,
                "created_at": 0,
            }
        ]
    )
    assert report.ok, report.error_lines()
    host = Lesson.objects.get(hash=digest(text)).host
    lessons_retire(host=host, hashes=[digest(text)], actor=reviewer, reason="Not ours.", now=DECIDED)
    code, out, _err = apply(altimate_project)
    assert code == 1
    assert out.splitlines()[1] == (
        f"refused #1 retire: lesson {digest(text)[:8]}… has no altimate id and store "
        "(it was not imported from an altimate store)"
    )
    assert DecisionAck.objects.get(decision__seq=1).status == "failed"


def test_a_missing_project_folder_exits_1_with_a_message(db, tmp_path):
    code, out, err = apply(tmp_path / "missing")
    assert (code, out) == (1, "")
    assert (
        err
        == f"{tmp_path / 'missing'}: no such folder: give a project root or its .altimate-code/learn/ folder"
    )


def test_the_new_id_avoids_ids_only_the_history_names(decided):
    history = store_of(decided) / "history.jsonl"
    line = {
        "ts": "2026-09-01T08:00:00.000Z",
        "action": "reflect",
        "applied": [{"op": "REMOVE", "id": NEW_ID}],
    }
    history.write_text(json.dumps(line, separators=(",", ":")) + "\n" + history.read_text())
    apply(decided)
    approved = json.loads((store_of(decided) / "approved.json").read_text())
    assert approved[0]["id"] == "L-" + digest(CONSOLIDATED)[:5]
