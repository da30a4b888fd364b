"""A host rebuilt whole with the attribution worker stores what it stores without one: the same attribution
rows in the same order (ids included on SQLite), the same counts, the same report; and a worker that fails
leaves its chunks to this process. spec: lessons/recurrence/attributing.py; docs/piles-and-recurrence.md.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time

import pytest
from django.db import connection, transaction

import lessons.ingest.passes as passes
import lessons.recurrence.refresh as refresh
from lessons.ingest.forked import ForkedWorker
from lessons.ingest.passes import ingest_sources
from lessons.ingest.reading import file_source
from lessons.models import CorrectionAttribution, RecurrenceCount
from lessons.recurrence import attributing
from tests import builders

DAY = "2026-03-02"


def batch(seed: int, host: str = "h1") -> list[dict]:
    """Lessons of ``host`` with two versions of some keys, then sessions of exposures (some with a text no
    version has) and corrections on the lessons' topics (some on two at once, some of another kind, some
    early)."""
    rng = random.Random(seed)
    records: list[dict] = [builders.host(name=host)]
    for i in range(12):
        text = f"Use `col_{i}` with care in staging models rule {i}."
        common = {
            "host": host,
            "namespace": "ns",
            "subject": f"s{i % 3}",
            "store": "st",
            "lesson_id": f"L{i}",
        }
        records.append(builders.lesson(text=text, created_at=1000 + i, **common))
        if i % 4 == 0:  # a newer version: the older text is an earlier version
            records.append(
                builders.lesson(
                    text=f"Keep `col_{i}` out of staging models, rule {i}.", created_at=5000 + i, **common
                )
            )
    for s in range(40):
        session = f"ses_{s}"
        for n in range(rng.randint(1, 6)):
            i = rng.randrange(12)
            ref = {"store": "st", "lesson_id": f"L{i}"}
            text = f"Use `col_{i}` with care in staging, as shown {s}." if rng.random() < 0.1 else None
            shown = builders.at(f"10:{n:02d}", day=DAY)
            records.append(builders.exposure(host=host, session=session, shown_at=shown, text=text, **ref))
        for c in range(rng.randint(0, 3)):
            i, j = rng.randrange(12), rng.randrange(12)
            text = rng.choice(
                [f"Use `col_{i}` in staging.", f"`col_{i}` and `col_{j}` in staging models, care.", "No."]
            )
            kind = "user_correction" if rng.random() < 0.85 else "tool_error"
            records.append(
                builders.correction(
                    host=host,
                    session=session,
                    id=f"c{s}-{c}",
                    text=text,
                    kind=kind,
                    corrected_at=builders.at(f"10:{rng.randint(0, 9):02d}:30", day=DAY),
                    turn_started_at=builders.at(f"10:{rng.randint(0, 9):02d}", day=DAY) if c % 2 else None,
                )
            )
    return records


def stored() -> tuple:
    """The attribution rows and the counts. On SQLite the rows in id order, ids themselves: each run gets
    the same ids. On PostgreSQL a rolled-back sequence keeps its values, so a second run's corrections get
    other ids, and corrections of one session at the same time are attributed (and stored) in their ids'
    order as text ("1000" before "999"): there the rows are compared sorted."""
    fields = ["session", "correction__key", "lesson__hash", "outcome"]
    if connection.vendor == "sqlite":
        rows = list(
            CorrectionAttribution.objects.order_by("pk").values_list(
                "pk", "correction_id", "lesson_id", *fields
            )
        )
    else:
        rows = sorted(CorrectionAttribution.objects.values_list(*fields), key=repr)
    return (
        rows,
        sorted(
            RecurrenceCount.objects.values_list(
                "lesson__hash",
                "sessions_shown",
                "recurred",
                "during",
                "unknown",
                "ambiguous",
                "earlier_version",
            )
        ),
    )


def ingested(path, workers: int) -> tuple:
    with transaction.atomic():
        report = ingest_sources(sources=[file_source(str(path))], workers=workers)
        rows = stored()
        transaction.set_rollback(True)
    return report.as_dict(), rows


@pytest.fixture
def rebuilt_in_worker(monkeypatch):
    """Every host rebuilt whole, in chunks of 3 sessions, with a worker for any batch; returns the list of
    workers the rebuilds used (live ones)."""
    monkeypatch.setattr(refresh, "REBUILD_FLOOR", 1)
    monkeypatch.setattr(refresh, "WORKER_CHUNK", 3)
    monkeypatch.setattr(passes, "WORKER_RECORDS", 0)
    used = []

    def worker():
        found = attributing.attribution_worker()
        used.append(found)
        return found

    monkeypatch.setattr(refresh, "attribution_worker", worker)
    return used


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_host_rebuilt_with_the_worker_stores_what_it_stores_without(db, tmp_path, rebuilt_in_worker, seed):
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in batch(seed)))
    without = ingested(path, workers=1)
    assert rebuilt_in_worker == [None]
    assert len(without[1][0]) > 30  # attributed: the batch exercises the rebuild
    with_worker = ingested(path, workers=2)
    assert isinstance(rebuilt_in_worker[1], ForkedWorker)
    assert with_worker == without


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_host_rebuilt_whole_stores_what_the_refresh_session_by_session_stores(
    db, tmp_path, monkeypatch, seed
):
    # The rebuild attributes through Attributor (profiles kept for the host), the refresh of the changed
    # sessions through attribute_corrections (each chunk's versions): the same rows, in the same order.
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in batch(seed)))
    monkeypatch.setattr(refresh, "REBUILD_FLOOR", 10**9)
    by_session = ingested(path, workers=1)
    monkeypatch.setattr(refresh, "REBUILD_FLOOR", 1)
    monkeypatch.setattr(refresh, "ATTRIBUTE_CHUNK", 3)
    assert ingested(path, workers=1) == by_session


def test_two_hosts_rebuilt_one_after_the_other_with_one_worker(db, tmp_path, rebuilt_in_worker):
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [*batch(6, "h1"), *batch(7, "h2")]))
    without = ingested(path, workers=1)
    with_worker = ingested(path, workers=2)
    assert rebuilt_in_worker[:2] == [None, None]
    assert isinstance(rebuilt_in_worker[2], ForkedWorker) and rebuilt_in_worker[3] is rebuilt_in_worker[2]
    assert with_worker == without


def test_a_worker_killed_part_way_leaves_the_chunk_in_flight_and_the_rest_here(
    db, tmp_path, rebuilt_in_worker, monkeypatch
):
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in batch(4)))
    without = ingested(path, workers=1)
    parent = os.getpid()
    attribute = attributing.Attributor.__call__
    chunks = []

    def slow_third_chunk_in_the_child(self, request):
        if os.getpid() != parent and request[0] == "chunk":
            chunks.append(request)  # the child's own list
            if len(chunks) == 3:
                time.sleep(30)  # killed meanwhile
        return attribute(self, request)

    send = ForkedWorker.send
    sent = []

    def send_then_kill(self, request):
        send(self, request)
        sent.append(request[0])
        if len(sent) == 4:  # the host and two chunks answered, the third chunk in flight
            os.kill(self._pid, signal.SIGKILL)

    monkeypatch.setattr(attributing.Attributor, "__call__", slow_third_chunk_in_the_child)
    monkeypatch.setattr(ForkedWorker, "send", send_then_kill)
    assert ingested(path, workers=2) == without
    assert sent == ["host", "chunk", "chunk", "chunk"]
    assert not rebuilt_in_worker[1].alive


def test_a_worker_whose_attribution_raises_leaves_it_here(db, tmp_path, rebuilt_in_worker, monkeypatch):
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in batch(5)))
    without = ingested(path, workers=1)
    parent = os.getpid()
    attribute = attributing.Attributor.__call__

    def fails_in_the_child(self, request):
        if os.getpid() != parent and request[0] == "chunk":
            raise MemoryError
        return attribute(self, request)

    monkeypatch.setattr(attributing.Attributor, "__call__", fails_in_the_child)
    assert ingested(path, workers=2) == without
    assert not rebuilt_in_worker[1].alive
