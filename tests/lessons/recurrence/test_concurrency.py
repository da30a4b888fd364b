"""Two ingests at once, each adding a correction charged to the same lesson, lose neither count.

Counts are sums read back from the stored rows; on PostgreSQL (READ COMMITTED) two writers would
each miss the other's uncommitted rows, so every writer locks the host row first. spec:
docs/piles-and-recurrence.md, "Per-lesson counts".
"""

from __future__ import annotations

import threading

import pytest
from django.db import connection, connections

from lessons.recurrence.refresh import recurrence_recompute
from tests.builders import correction, exposure, host, lesson
from tests.lessons.recurrence.builders import (
    ENTITY,
    HOST,
    OCT_1,
    clock,
    correction_id,
    counts,
    hash_of,
    snapshot,
    stored_counts,
)

postgres_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")
TEXT = "Convert `*_at` timestamp columns with `to_utc` in staging models."
ADVICE = "No, convert the `created_at` timestamps with `to_utc`."
WRITERS = 4


@postgres_only
@pytest.mark.postgres
def test_concurrent_ingests_of_corrections_on_one_lesson_keep_every_count(transactional_db):
    from lessons.ingest.passes import ingest_sources
    from lessons.ingest.reading import bytes_source

    def ingest(records):
        import json

        data = "\n".join(json.dumps(r) for r in records).encode()
        return ingest_sources(sources=[bytes_source(data, name="batch.jsonl")])

    setup = [host(name=HOST), lesson(host=HOST, **ENTITY, text=TEXT, created_at=OCT_1)]
    setup += [
        exposure(host=HOST, session=f"s{i}", shown_at=clock("10:00"), lesson=hash_of(TEXT))
        for i in range(WRITERS)
    ]
    assert ingest(setup).ok
    barrier = threading.Barrier(WRITERS)
    errors: list[str] = []

    def writer(i: int) -> None:
        try:
            barrier.wait(timeout=10)
            report = ingest(
                [
                    correction(
                        host=HOST,
                        session=f"s{i}",
                        id=correction_id(f"s{i}", "10:01"),
                        text=ADVICE,
                        corrected_at=clock("10:01"),
                        turn_started_at=clock("10:00:30"),
                    )
                ]
            )
            if not report.ok:
                errors.append(str(report.error_lines()))
        except Exception as exc:  # noqa: BLE001 - reported, and the test fails on it
            errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            connections.close_all()

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    assert stored_counts()[("desk", hash_of(TEXT))] == counts(
        sessions_shown=WRITERS, recurred=WRITERS, recurred_sessions=WRITERS
    )
    kept = snapshot()
    recurrence_recompute()
    assert snapshot() == kept
