"""The ingest's side of locking (issue 13, fault 2 and Build 3): no lesson row locks for the whole batch, a
reviewer's decision wins through a conditional update, a deadlock is retried (and reported in one line when
it persists), and validation runs before any write transaction. spec: interchange.md, "lesson".

Each other writer runs in a thread with its own connection, at a named point of the ingest
(``lessons.ingest.checkpoints.reached``): the order of events is asserted, never a duration.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext

import lessons.ingest.passes as passes
from lessons.core.text import lesson_hash
from lessons.ingest import checkpoints, state
from lessons.ingest.passes import IngestBusy
from lessons.models import Exposure, Host, Lesson
from review.services.decisions import lessons_retire
from tests import builders
from tests.conftest import ingest_records

postgres_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")
NS, SUBJECT = "ns", "pile"


def rule(i: int, **fields) -> dict:
    """Lesson ``i`` of the entity ns/pile on host h1, created at ``1000 + i`` ms."""
    return builders.lesson(
        host="h1", namespace=NS, subject=SUBJECT, text=f"Rule {i}.", created_at=1000 + i, **fields
    )


def h(i: int) -> str:
    return lesson_hash(NS, SUBJECT, f"Rule {i}.")


def other(i: int) -> dict:
    """A lesson of another entity of h1 (bulk for a batch of many chunks)."""
    return builders.lesson(
        host="h1", namespace="bulk", subject=f"s{i}", text=f"Bulk {i}.", created_at=5000 + i
    )


def in_thread(action: Callable[[], object]) -> str:
    """Run ``action`` on its own connection and wait for it: ``"ok"`` or the error it raised."""
    result: list[str] = []

    def worker() -> None:
        try:
            action()
            result.append("ok")
        except Exception as exc:  # noqa: BLE001 - reported, and the test fails on it
            result.append(f"{type(exc).__name__}: {exc}")
        finally:
            connections.close_all()

    thread = threading.Thread(target=worker)
    thread.start()
    # A guard against a hang only (the retire blocked behind the ingest's locks): no timing is asserted.
    thread.join(timeout=30)
    return result[0] if result else "still waiting (blocked behind the ingest)"


def at(name: str, action: Callable[[], None], monkeypatch) -> None:
    """Run ``action`` the first time the ingest reaches checkpoint ``name``."""
    done: list[bool] = []

    def checkpoint(point: str) -> None:
        if point == name and not done:
            done.append(True)
            action()

    monkeypatch.setattr(checkpoints, "reached", checkpoint)


def retire(i: int, actor) -> Callable[[], object]:
    return lambda: lessons_retire(host=Host.objects.get(name="h1"), hashes=[h(i)], actor=actor, reason="dup")


def statuses() -> dict[str, str]:
    return dict(Lesson.objects.filter(namespace=NS).values_list("hash", "status"))


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_retire_between_the_ingest_reading_and_writing_an_entity_out_of_order_wins(reviewer, monkeypatch):
    ingest_records([builders.host(name="h1"), rule(0), rule(1), rule(2)])
    events: list[str] = []
    at("lessons read", lambda: events.append(in_thread(retire(0, reviewer))), monkeypatch)
    # Newest first (out of the (created_at, hash) order a retire locks in); 2 and 0 change status.
    report = ingest_records([rule(2, status="superseded"), rule(1), rule(0, status="superseded")])
    assert events == ["ok"]
    assert report.ok and report.written, report.error_lines()
    assert report.counts["lesson"] == {"created": 0, "unchanged": 1, "updated": 1, "held": 1, "rejected": 0}
    assert report.held == [
        f"lesson {h(0)[:8]} on h1: stays retracted (the source says superseded; a reviewer's decision is newer)"
    ]
    assert statuses() == {h(0): "retracted", h(1): "live", h(2): "superseded"}
    assert Lesson.objects.get(hash=h(0)).decided_at is not None


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_retire_during_a_batch_of_many_chunks_finishes_before_the_batch_does(reviewer, monkeypatch):
    ingest_records([builders.host(name="h1"), rule(0), rule(1), rule(2)])
    monkeypatch.setattr(state, "CHUNK", 10)
    events: list[str] = []
    at("lessons written", lambda: events.append("retire " + in_thread(retire(1, reviewer))), monkeypatch)
    seen = [
        builders.exposure(host="h1", session=f"s{i}", shown_at="2026-01-01T00:00:00Z", lesson=h(i % 3))
        for i in range(25)
    ]
    # The entity's stored lessons, unchanged and out of order, in the first chunk; 40 new lessons after.
    report = ingest_records([rule(2), rule(0), rule(1), *(other(i) for i in range(40)), *seen])
    events.append("ingest done")
    assert events == ["retire ok", "ingest done"]
    assert report.ok and report.written, report.error_lines()
    assert report.counts["lesson"] == {"created": 40, "unchanged": 3, "updated": 0, "held": 0, "rejected": 0}
    assert report.counts["exposure"]["created"] == 25
    assert statuses() == {h(0): "live", h(1): "retracted", h(2): "live"}
    assert Exposure.objects.count() == 25


def _deadlock_partner(release: threading.Event, locked: threading.Event, results: list[str]) -> None:
    """Lock lesson 0, let the ingest block on it, then reach for lesson 2 (which the ingest holds)."""
    try:
        with transaction.atomic():
            Lesson.objects.select_for_update().filter(hash=h(0)).values_list("id").get()
            locked.set()
            release.wait(timeout=30)
            with connection.cursor() as cursor:  # wait until the ingest's backend waits for a lock
                for _ in range(3000):
                    cursor.execute(
                        "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                        "WHERE NOT l.granted AND a.pid <> pg_backend_pid() AND a.datname = current_database()"
                    )
                    if cursor.fetchone()[0]:
                        break
                    cursor.execute("SELECT pg_sleep(0.01)")
                # the ingest, waiting since before, must find the deadlock first (after its 1 s): on a
                # loaded machine this check could otherwise come first and make the partner the victim
                cursor.execute("SET LOCAL deadlock_timeout = '10s'")
            Lesson.objects.select_for_update().filter(hash=h(2)).values_list("id").get()
        results.append("ok")
    except Exception as exc:  # noqa: BLE001 - reported, and the test fails on it
        results.append(f"{type(exc).__name__}: {exc}")
    finally:
        connections.close_all()


def deadlocking_ingest(monkeypatch, attempts: int) -> tuple[object, list[str]]:
    """Ingest lessons 2 then 0 (both changed, in two chunks) while another connection holds 0 and then
    asks for 2: PostgreSQL detects the deadlock in the ingest, which waited first."""
    ingest_records([builders.host(name="h1"), rule(0), rule(1), rule(2)])
    monkeypatch.setattr(state, "CHUNK", 1)
    monkeypatch.setattr(passes, "WRITE_ATTEMPTS", attempts)
    monkeypatch.setattr(passes, "RETRY_BASE_SECONDS", 0.01)
    release, locked, results = threading.Event(), threading.Event(), []
    partner = threading.Thread(target=_deadlock_partner, args=(release, locked, results))
    reads: list[int] = []

    def checkpoint(point: str) -> None:
        if point == "lessons read":
            reads.append(1)
            if len(reads) == 2:  # lesson 2 is written: start the partner, which holds lesson 0
                partner.start()
                locked.wait(timeout=30)
                release.set()

    monkeypatch.setattr(checkpoints, "reached", checkpoint)
    try:
        report = ingest_records([rule(2, helpful=5), rule(0, helpful=7)])
    except IngestBusy as exc:
        report = exc
    partner.join(timeout=30)
    return report, results


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_an_ingest_chosen_as_a_deadlock_victim_is_written_again_from_its_spool(monkeypatch):
    report, partner = deadlocking_ingest(monkeypatch, attempts=4)
    assert partner == ["ok"]
    assert report.ok and report.written, report.error_lines()
    assert report.counts["lesson"] == {"created": 0, "unchanged": 0, "updated": 2, "held": 0, "rejected": 0}
    assert dict(Lesson.objects.filter(namespace=NS).values_list("hash", "helpful")) == {
        h(0): 7,
        h(1): None,
        h(2): 5,
    }


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_a_deadlock_that_persists_is_one_line_and_nothing_is_written(monkeypatch):
    error, partner = deadlocking_ingest(monkeypatch, attempts=1)
    assert partner == ["ok"]
    assert isinstance(error, IngestBusy)
    assert str(error) == (
        "ingest not written: the database kept reporting a deadlock after 1 attempts "
        "(other writers hold the same rows); nothing was kept, send the batch again"
    )
    assert set(Lesson.objects.filter(namespace=NS).values_list("helpful", flat=True)) == {None}


@pytest.mark.django_db(transaction=True)
def test_another_connection_writes_while_the_ingest_validates(monkeypatch):
    real = passes.parse_line
    events: list[str] = []

    def parse(text, **kwargs):
        if not events:  # the first line: validation has begun
            events.append("writer " + in_thread(lambda: Host.objects.create(name="writer")))
        return real(text, **kwargs)

    monkeypatch.setattr(passes, "parse_line", parse)
    report = ingest_records([builders.host(name="h1"), rule(0), rule(1)])
    assert events == ["writer ok"]
    assert report.ok and report.written
    assert sorted(Host.objects.values_list("name", flat=True)) == ["h1", "writer"]


@pytest.mark.django_db(transaction=True)
def test_a_batch_refused_by_validation_opens_no_transaction_and_runs_no_query():
    with CaptureQueriesContext(connection) as queries:
        report = ingest_records([builders.host(name="h1"), rule(0), {"type": "lesson", "host": "h1"}])
    assert not report.written and report.error_count == 1
    assert [q["sql"] for q in queries] == []
    assert not Host.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_refused_batch_reports_its_lines_and_a_dry_run_of_it_also_resolves_and_counts():
    ingest_records([builders.host(name="h1")])
    dangling = {"type": "verdict", "host": "h1", "lesson": "0" * 64, "verdict": "held", "measured_at": 1}
    batch = [rule(0), dangling, {"type": "lesson", "host": "h1"}]
    refused = ingest_records(batch)
    assert [e.line for e in refused.errors] == [3, 3, 3, 3] and refused.error_count == 1
    assert refused.totals() == {"created": 0, "unchanged": 0, "updated": 0, "held": 0, "rejected": 1}
    dry = ingest_records(batch, dry_run=True)
    assert [e.line for e in dry.errors] == [3, 3, 3, 3, 2] and dry.error_count == 2
    assert dry.totals() == {"created": 1, "unchanged": 0, "updated": 0, "held": 0, "rejected": 2}
    assert not refused.written and not dry.written and not Lesson.objects.exists()
