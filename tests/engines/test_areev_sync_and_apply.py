"""``sync_areev`` and ``apply_decisions --areev`` against a real areev memory file (the binding, no
mocks): the incremental feed, dry runs, a missing package, a locked file, and each decision kind
applied back and acknowledged. spec: importers.md ("areev"), decisions.md ("Hosts apply decisions").
"""

from __future__ import annotations

import json
import sys
import time

import pytest

from lessons.models import AreevCursor, Draft, Lesson
from review.models import DecisionAck, DecisionOutcome
from review.services.consolidation import draft_approve, draft_reject
from review.services.decisions import lesson_restore, lessons_retire
from tests.engines.conftest import (
    DAY_MS,
    EVAL_FIELD,
    EVALSET,
    HOST,
    LESSONS,
    TRIGGER,
    journal_eval,
    lesson_fields,
    loop_live,
    needs_areev,
    open_memory,
    recalled,
    release,
)
from tests.fixtures.importers import run_command

pytestmark = pytest.mark.postgres
REASON = "Restates the Advertiser rule."


def sync(path, *extra):
    return run_command("sync_areev", str(path), "--host", HOST, "--triggered-by", TRIGGER, *extra)


def apply(path, *extra):
    return run_command("apply_decisions", "--areev", str(path), "--host", HOST, *extra)


def report(out: str) -> tuple[str, str]:
    """The ingest summary line and the feed line of a sync's output."""
    lines = out.splitlines()
    return next(line for line in lines if line.startswith("imported: ")), lines[-1]


def engine_status(path, rec_hash: str) -> str:
    db = open_memory(path, "user:reader")
    status = json.loads(db.recommendation(rec_hash))["status"]
    del db
    release()
    return status


def test_a_second_sync_reads_only_what_changed_and_says_so(memory):
    path, hashes = memory
    code, out, err = sync(path)
    assert code == 0, err
    first = AreevCursor.objects.get().op_seq
    assert report(out) == (
        "imported: 6 line(s); 6 created, 0 unchanged, 0 updated, 0 held, 0 rejected",
        f"changes since op 0: {first}",
    )

    code, out, _err = sync(path)
    assert (code, report(out)) == (
        0,
        (
            "imported: 0 line(s); 0 created, 0 unchanged, 0 updated, 0 held, 0 rejected",
            f"changes since op {first}: 0",
        ),
    )

    db = open_memory(path, TRIGGER)
    db.add(
        "fact",
        json.dumps({**lesson_fields(0), "object": "Copy the Contract Number character for character."}),
    )
    del db
    release()
    code, out, _err = sync(path)
    # the changed entity is read whole: the new lesson is created, the five others are unchanged
    assert (code, report(out)) == (
        0,
        (
            "imported: 6 line(s); 1 created, 5 unchanged, 0 updated, 0 held, 0 rejected",
            f"changes since op {first}: 1",
        ),
    )
    assert AreevCursor.objects.get().op_seq == first + 1
    assert Lesson.objects.filter(host__name=HOST, status="live").count() == 6


def test_a_dry_run_sync_writes_nothing_and_keeps_no_cursor(memory):
    path, _hashes = memory
    code, out, _err = sync(path, "--dry-run")
    assert (code, out.splitlines()[3]) == (
        0,
        "dry run, nothing written: 6 line(s); 6 created, 0 unchanged, 0 updated, 0 held, 0 rejected",
    )
    assert (Lesson.objects.count(), Draft.objects.count(), AreevCursor.objects.count()) == (0, 0, 0)


@pytest.mark.parametrize("command", [("sync_areev", "{path}"), ("apply_decisions", "--areev", "{path}")])
def test_without_the_areev_package_the_command_says_so_in_one_line_and_exits_2(
    db, tmp_path, monkeypatch, command
):
    monkeypatch.setitem(sys.modules, "areev", None)  # what an environment without the extra sees
    args = [a.format(path=tmp_path / "m.db") for a in command]
    code, out, err = run_command(*args, "--host", HOST)
    assert (code, out, err) == (
        2,
        "",
        "the areev package is not installed: pip install -e '.[areev]' (areev==1.13.2)",
    )


@pytest.mark.parametrize("command", [("sync_areev", "{path}"), ("apply_decisions", "--areev", "{path}")])
def test_a_missing_memory_file_exits_1_naming_it(db, tmp_path, command):
    needs_areev()
    code, _out, err = run_command(*[a.format(path=tmp_path / "no.db") for a in command], "--host", HOST)
    assert (code, err) == (1, f"{tmp_path / 'no.db'}: no such areev memory file")


def test_a_memory_file_another_handle_holds_is_refused_with_the_engines_message(memory):
    path, _hashes = memory
    db = open_memory(path, TRIGGER)
    try:
        code, _out, err = sync(path)
    finally:
        del db
        release()
    assert code == 1 and err.startswith(f"{path}: cannot open: STO-E002")
    assert AreevCursor.objects.count() == 0


def test_retire_and_restore_are_applied_as_a_tombstone_and_the_same_lesson_again(memory, reviewer):
    path, hashes = memory
    assert sync(path)[0] == 0
    lesson = Lesson.objects.get(hash=hashes[3])
    (retire,) = lessons_retire(host=lesson.host, hashes=[lesson.hash], actor=reviewer, reason=REASON)
    code, out, _err = apply(path)
    assert (code, out.splitlines()) == (
        0,
        [
            f"applied: #{retire.seq} retire: lesson {hashes[3][:8]}… forgotten as user:rita; its fields kept in a lesson_retired marker",
            "1 applied, 0 refused, 0 skipped",
        ],
    )
    assert [g["hash"] for g in recalled(path)] == [h for h in reversed(hashes) if h != hashes[3]]
    assert loop_live(path) == sorted(set(hashes) - {hashes[3]})

    lesson.refresh_from_db()
    restore = lesson_restore(lesson=lesson, actor=reviewer, reason="It was not a duplicate after all.")
    code, out, _err = apply(path)
    assert out.splitlines()[0] == (
        f"applied: #{restore.seq} restore: lesson {hashes[3][:8]}… added again as user:rita; its lesson_retired marker forgotten"
    )
    assert loop_live(path) == sorted(hashes)
    assert DecisionAck.objects.filter(status="applied").count() == 2


def test_a_reject_is_applied_as_a_dismissal_and_its_dry_run_changes_nothing(memory, reviewer):
    path, hashes = memory
    assert sync(path)[0] == 0
    draft = Draft.objects.get()
    rejection = draft_reject(draft=draft, actor=reviewer, reason="Drops the Flight rule.")
    code, out, _err = apply(path, "--dry-run")
    assert out.splitlines() == [
        f"applied: #{rejection.seq} reject_consolidation: recommendation {draft.ext_id[:8]}… dismissed as user:rita",
        "1 applied, 0 refused, 0 skipped (dry run: nothing changed)",
    ]
    assert (DecisionAck.objects.count(), engine_status(path, draft.ext_id)) == (0, "pending")
    assert apply(path)[0] == 0
    assert engine_status(path, draft.ext_id) == "rejected"
    assert DecisionAck.objects.get().status == "applied"


def test_an_approval_whose_member_the_engine_no_longer_holds_is_acknowledged_failed(memory, reviewer):
    path, hashes = memory
    assert sync(path)[0] == 0
    draft = Draft.objects.get()
    approval = draft_approve(draft=draft, actor=reviewer, reason="Five rules say three things; keep one.")
    db = open_memory(path, TRIGGER)
    db.forget(hashes[0])  # the host retired a member on its own meanwhile
    del db
    release()
    code, out, _err = apply(path)
    detail = f"member {hashes[0][:8]}… is no longer a live lesson in the engine; not applied"
    assert (code, out.splitlines()) == (
        0,
        [f"refused: #{approval.seq} approve_consolidation: {detail}", "0 applied, 1 refused, 0 skipped"],
    )
    assert (DecisionAck.objects.get().status, DecisionAck.objects.get().detail) == ("failed", detail)
    assert engine_status(path, draft.ext_id) == "pending"  # nothing half-applied
    assert len(recalled(path)) == len(LESSONS) - 1
    assert apply(path)[1].splitlines() == ["0 applied, 0 refused, 0 skipped"]


def test_a_lesson_the_host_forgot_in_the_engine_is_retracted_by_the_next_sync(memory):
    path, hashes = memory
    assert sync(path)[0] == 0
    db = open_memory(path, TRIGGER)
    db.forget(hashes[1])
    del db
    release()
    code, out, _err = sync(path)
    assert code == 0 and "1 lessons the engine no longer holds" in out
    assert sorted(Lesson.objects.filter(host__name=HOST).values_list("hash", "status")) == sorted(
        (h, "retracted" if h == hashes[1] else "live") for h in hashes
    )


def test_outcome_rows_are_read_and_those_of_a_recommendation_that_created_no_lesson_counted_unmapped(memory):
    from areev.helpers import days_later

    path, _hashes = memory
    db = open_memory(path, TRIGGER)
    db.add_fact("acme", "deploy_target", "us-east-1", 0.9)
    db.add_fact("acme", "deploy_target", "eu-west-1", 0.9)
    db.loop_run()
    del db
    release()
    db = open_memory(path, "user:erin")
    (fix,) = [r for r in json.loads(db.recommendations()) if r["analyzer"] == "loop.contradiction_sweep/1"]
    db.apply_recommendation(fix["hash"], "The latest value wins.")
    with days_later(2):
        db.loop_run()
    outcomes = json.loads(db.loop_outcomes())
    del db
    release()
    assert [(o["rec_hash"], o["horizon_ms"]) for o in outcomes] == [(fix["hash"], 86_400_000)]
    code, out, _err = sync(path)
    assert code == 0 and "1 outcome rows, 1 unmapped outcome rows" in out


def test_an_approval_that_resolves_the_pile_dismisses_the_engines_pile_finding(memory, reviewer):
    """Issue 24, Build 3: after apply_decisions applied the consolidation, the engine's pending
    ``loop.lesson_pile/1`` finding on the entity is dismissed, naming the decision; a dry run says it
    would; nothing else is dismissed."""
    path, hashes = memory
    assert sync(path)[0] == 0
    draft = Draft.objects.get()
    approval = draft_approve(draft=draft, actor=reviewer, reason="Five rules say three things; keep one.")

    def pile_findings(status: str) -> list[dict]:
        db = open_memory(path, "user:reader")
        rows = json.loads(db.recommendations(json.dumps({"status": status})))
        del db
        release()
        return [r for r in rows if r.get("analyzer") == "loop.lesson_pile/1"]

    (finding,) = pile_findings("pending")
    code, out, _err = apply(path, "--dry-run")
    lines = out.splitlines()
    assert lines[1].startswith(
        f"dismissed: #{approval.seq} lesson_pile finding: pile finding {finding['hash'][:8]}… "
    )
    assert "would be dismissed as user:rita: pile resolved by the reviewers' decisions" in lines[1]
    assert pile_findings("pending") == [finding]  # the dry run changed nothing
    code, out, _err = apply(path)
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith(f"applied: #{approval.seq} approve_consolidation")
    assert lines[1].startswith(
        f"dismissed: #{approval.seq} lesson_pile finding: pile finding {finding['hash'][:8]}… "
    )
    assert f"decisions #{approval.seq} in Lesson Pile Review" in lines[1]
    assert lines[-1] == "1 applied, 0 refused, 0 skipped"
    assert pile_findings("pending") == []
    assert engine_status(path, finding["hash"]) in ("dismissed", "rejected")


def test_a_retire_that_leaves_the_entity_over_budget_dismisses_nothing(memory, reviewer):
    path, hashes = memory
    assert sync(path)[0] == 0
    lesson = Lesson.objects.get(hash=hashes[0])
    lessons_retire(host=lesson.host, hashes=[lesson.hash], actor=reviewer, reason=REASON)
    code, out, _err = apply(path)
    assert [line.split(":")[0] for line in out.splitlines()] == ["applied", "1 applied, 0 refused, 0 skipped"]


@pytest.mark.parametrize(
    ("after", "verdict", "outcome"), [(95, "held", "supported"), (60, "regressed", "contradicted")]
)
def test_the_engines_re_measurement_of_an_applied_consolidation_is_the_approvals_outcome(
    measured_memory, reviewer, after, verdict, outcome
):
    """Issue 24: a host policy names an evaluation set; the consolidation a reviewer approved is applied
    by ``apply_decisions``, the host's harness journals a pass of the set a day later, and the engine's
    loop re-measures the applied consolidation against the pass before the apply (90 of 100). The next
    sync brings that verdict onto the consolidation, and the approval's outcome follows it."""
    from areev.helpers import days_later

    path, _hashes, policy = measured_memory
    assert sync(path)[0] == 0
    approval = draft_approve(draft=Draft.objects.get(), actor=reviewer, reason="Five rules say three things.")
    code, out, err = apply(path)
    assert code == 0 and out.splitlines()[-1] == "1 applied, 0 refused, 0 skipped", err
    db = open_memory(path, TRIGGER)
    journal_eval(db, "eval-after", after, int(time.time() * 1000) + DAY_MS + 60_000)
    with days_later(2):
        db.loop_run(policy=str(policy))
    measured = json.loads(db.loop_outcomes())
    del db
    release()
    assert [(o["rec_hash"], o["metric"], o["baseline"], o["current"], o["verdict"]) for o in measured] == [
        (approval.draft_id, f"evalset:{EVALSET}:{EVAL_FIELD}", 90.0, float(after), verdict)
    ]

    code, out, err = sync(path)
    assert code == 0 and "1 outcome rows, 0 unmapped outcome rows" in out, err
    consolidation = Lesson.objects.get(hash=approval.created_hash)
    assert list(consolidation.verdicts.values_list("verdict", flat=True)) == [verdict]
    row = DecisionOutcome.objects.get(decision=approval)
    assert (row.outcome, row.evidence["why"], row.evidence["verdicts"]) == (
        outcome,
        f"the consolidation: {verdict} when re-measured",
        [{"lesson": approval.created_hash, "verdict": verdict, "at_ms": measured[0]["measured_at_ms"]}],
    )
