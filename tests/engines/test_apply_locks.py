"""The locks of ``apply_decisions`` (issue 21, items 1 and 3), each with a deterministic holder: one run per
host (``ApplyLock``: a second run waits, then is refused in one line; a run whose process is gone, or
that was silent too long, is taken over), altimate's store refused whole when a file changed between
the read and the write or the learn lock was taken over, and an applied acknowledgement that stays
applied. The races of real runs are in test_apply_races.py.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from datetime import timedelta

import pytest
from django.utils import timezone

from lessons.core.text import format_datetime
from lessons.importers.altimate_lesson import canonical
from review.apply.altimate_store import E_LOCK_LOST, E_MOVED_ON, LOCK_NAME, StoreState
from review.apply.host_lock import E_HELD, STALE_AFTER, WAITING
from review.models import ApplyLock, Decision, DecisionAck
from review.services.acks import ACK_ALREADY_APPLIED, AckAlreadyApplied, decision_ack
from tests.engines.altimate_decided import HOST, STORE, decide
from tests.fixtures.importers import run_command


@pytest.fixture
def decided(db, altimate_project, reviewer):
    """The altimate-dbt-project store imported, L-f5a8 retired and a consolidation approved."""
    return decide(altimate_project, reviewer)


@pytest.fixture
def sleeper():
    """A live process of this machine (its pid holds a lock in the tests)."""
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield proc
    proc.kill()
    proc.wait()


def hold(host: str, *, pid: int, machine: str | None = None, renewed: timedelta = timedelta(0)) -> ApplyLock:
    at = timezone.now() - renewed
    return ApplyLock.objects.create(
        host=host,
        holder="a" * 32,
        engine="altimate",
        pid=pid,
        machine=machine or socket.gethostname(),
        acquired_at=at,
        renewed_at=at,
    )


def apply(project, *extra):
    return run_command("apply_decisions", "--altimate", str(project), "--host", HOST, *extra)


def store_files(project) -> dict[str, bytes]:
    store = project / ".altimate-code" / "learn" / STORE
    return {p.name: p.read_bytes() for p in store.iterdir() if p.is_file()}


def who(row: ApplyLock) -> str:
    return f"altimate, pid {row.pid} on {row.machine}, since {format_datetime(row.acquired_at)}"


# --- one run per host --------------------------------------------------------------------------


def test_a_run_while_another_holds_the_host_is_refused_in_one_line_and_applies_nothing(decided, sleeper):
    row = hold(HOST, pid=sleeper.pid)
    before = store_files(decided)
    code, out, err = apply(decided, "--wait", "0")
    assert (code, out, err) == (1, "", E_HELD.format(host=HOST, who=who(row)))
    assert store_files(decided) == before
    assert DecisionAck.objects.count() == 0
    assert ApplyLock.objects.get().holder == "a" * 32  # the other run's lock is left alone


def test_a_run_that_waits_says_so_once_on_stderr_before_it_is_refused(decided, sleeper):
    row = hold(HOST, pid=sleeper.pid)
    code, _out, err = apply(decided, "--wait", "0.3")
    assert code == 1
    assert err.splitlines() == [
        WAITING.format(host=HOST, who=who(row)),
        E_HELD.format(host=HOST, who=who(row)),
    ]


def test_the_lock_of_a_run_whose_process_is_gone_is_taken_over_at_once(decided):
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    hold(HOST, pid=done.pid)
    code, out, err = apply(decided, "--wait", "0")
    assert (code, err, out.splitlines()[0]) == (0, "", "2 applied, 0 skipped, 0 refused")
    assert ApplyLock.objects.count() == 0  # released at the end


def test_a_lock_silent_longer_than_the_stale_time_is_taken_over_from_another_machine(decided):
    hold(HOST, pid=1, machine="elsewhere.example", renewed=STALE_AFTER + timedelta(seconds=1))
    code, out, _err = apply(decided, "--wait", "0")
    assert (code, out.splitlines()[0]) == (0, "2 applied, 0 skipped, 0 refused")


def test_a_fresh_lock_of_another_machine_is_respected(decided):
    row = hold(HOST, pid=1, machine="elsewhere.example", renewed=STALE_AFTER - timedelta(minutes=1))
    assert apply(decided, "--wait", "0")[2] == E_HELD.format(host=HOST, who=who(row))


def test_another_hosts_run_does_not_wait(decided, sleeper):
    hold("another-host", pid=sleeper.pid)
    assert apply(decided, "--wait", "0")[0] == 0


def test_a_negative_wait_is_wrong_usage(decided):
    assert apply(decided, "--wait", "-1") == (2, "", "--wait: expected seconds, 0 or more, got -1")


# --- altimate's store under one hold of its lock ------------------------------------------------


def test_a_store_file_changed_between_read_and_write_refuses_the_whole_run(decided, monkeypatch):
    """A writer that ignores altimate's lock changes approved.json right after the run read it."""
    load = StoreState.load

    def read_then_changed(path):
        state = load(path)
        approved = path / "approved.json"
        approved.write_text(approved.read_text().replace("L-77a0", "L-77a1"))
        return state

    monkeypatch.setattr(StoreState, "load", staticmethod(read_then_changed))
    changed = store_files(decided)
    code, out, err = apply(decided)
    monkeypatch.undo()
    changed["approved.json"] = changed["approved.json"].replace(b"L-77a0", b"L-77a1")
    assert (code, out) == (1, "")
    assert err == E_MOVED_ON.format(file=f"{STORE}/approved.json")
    assert store_files(decided) == changed  # the other writer's change stands; nothing of the run
    assert not (decided / ".altimate-code" / "learn" / STORE / "versions").exists()
    assert DecisionAck.objects.count() == 0
    assert not (decided / ".altimate-code" / "learn" / LOCK_NAME).exists()
    assert apply(decided)[0] == 0  # run again: applied on the store as it now is


def test_a_learn_lock_taken_over_meanwhile_refuses_the_whole_run(decided, monkeypatch):
    load = StoreState.load
    lock = decided / ".altimate-code" / "learn" / LOCK_NAME

    def read_then_taken(path):
        state = load(path)
        (lock / "meta.json").write_text(json.dumps({"token": "someone-else"}))
        return state

    monkeypatch.setattr(StoreState, "load", staticmethod(read_then_taken))
    before = store_files(decided)
    code, _out, err = apply(decided)
    assert (code, err) == (1, E_LOCK_LOST.format(lock=LOCK_NAME))
    assert store_files(decided) == before
    assert DecisionAck.objects.count() == 0
    assert lock.is_dir()  # the new owner's to release


def test_a_run_waits_for_altimates_lock_and_goes_on_when_it_is_released(decided):
    """altimate's own writers wait for each other; a fresh lock was refused at once before."""
    lock = decided / ".altimate-code" / "learn" / LOCK_NAME
    lock.mkdir()
    (lock / "heartbeat").touch()
    release = subprocess.Popen(
        [sys.executable, "-c", f"import time, shutil; time.sleep(0.5); shutil.rmtree({str(lock)!r})"]
    )
    code, out, _err = apply(decided, "--wait", "60")
    release.wait()
    assert (code, out.splitlines()[0]) == (0, "2 applied, 0 skipped, 0 refused")


# --- an applied acknowledgement is final --------------------------------------------------------


def test_a_failed_ack_never_replaces_an_applied_one(decided):
    decision = Decision.objects.get(seq=1)
    decision_ack(decision=decision, status="applied", detail="moved", token_name="first run")
    with pytest.raises(AckAlreadyApplied, match=f"^{ACK_ALREADY_APPLIED.format(seq=1)}$"):
        decision_ack(decision=decision, status="failed", detail="not a live lesson", token_name="second run")
    ack = DecisionAck.objects.get()
    assert (ack.status, ack.detail, ack.token_name) == ("applied", "moved", "first run")


def test_a_refusal_of_a_decision_the_host_acknowledged_applied_meanwhile_keeps_the_applied_ack(
    decided, monkeypatch
):
    """The host says through the API that it applied #1 while the run works; the store refuses #1."""
    path = decided / ".altimate-code" / "learn" / STORE / "approved.json"
    approved = json.loads(path.read_text())
    next(x for x in approved if x["id"] == "L-f5a8")["text"] = "Marts are tables."
    path.write_text(canonical(approved))
    load = StoreState.load

    def read_then_acknowledged(path):
        decision_ack(decision=Decision.objects.get(seq=1), status="applied", token_name="host api")
        return load(path)

    monkeypatch.setattr(StoreState, "load", staticmethod(read_then_acknowledged))
    code, out, _err = apply(decided)
    assert code == 0
    assert out.splitlines()[:3] == [
        "1 applied, 1 skipped, 0 refused",
        "applied #2 approve_consolidation: L-3dda added to team-playbook/approved.json, superseding "
        "L-8201, L-2fe6",
        "skipped #1 retire: already acknowledged applied, which stays; the store now says: L-f5a8 in "
        "team-playbook/approved.json has other text than the lesson decided on (edited since)",
    ]
    assert list(DecisionAck.objects.order_by("decision__seq").values_list("status", "token_name")) == [
        ("applied", "host api"),
        ("applied", "apply_decisions --altimate"),
    ]
