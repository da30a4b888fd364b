"""``read_signals``: the user corrections and exposures of the sessions asked, nothing else; on SQLite its
correction look-up searches the host's corrections by session, not every user correction of the host.
spec: lessons/recurrence/attributing.py (``read_signals``, ``_user_corrections``)."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lessons.ingest.passes import ingest_sources
from lessons.ingest.reading import file_source
from lessons.models import Correction, Host
from lessons.recurrence.attributing import read_signals
from tests import builders

DAY = "2026-03-02"
T0 = 1772409600000  # 2026-03-02T00:00:00Z in epoch milliseconds


def _ingest(tmp_path) -> int:
    lesson = {"host": "h1", "namespace": "ns", "subject": "s", "store": "st", "lesson_id": "L1"}
    records = [
        builders.host(name="h1"),
        builders.lesson(text="Use `col_a` with care in staging.", created_at=1000, **lesson),
        builders.exposure(
            host="h1", session="A", shown_at=builders.at("10:00", day=DAY), store="st", lesson_id="L1"
        ),
        builders.exposure(
            host="h1", session="C", shown_at=builders.at("11:00", day=DAY), store="st", lesson_id="L1"
        ),
    ]
    for session, ext_id, kind, clock in [
        ("A", "c1", "user_correction", "10:01"),
        ("A", "c2", "tool_error", "10:02"),
        ("B", "c3", "user_correction", "10:03"),
        ("C", "c4", "user_correction", "11:01"),
    ]:
        records.append(
            builders.correction(
                host="h1",
                session=session,
                id=ext_id,
                kind=kind,
                text=f"`col_a` {ext_id}",
                corrected_at=builders.at(clock, day=DAY),
                turn_started_at=builders.at("10:00", day=DAY) if ext_id == "c1" else None,
            )
        )
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    report = ingest_sources(sources=[file_source(str(path))])
    assert report.error_count == 0
    return Host.objects.get(name="h1").id


def test_read_signals_gives_the_user_corrections_and_exposures_of_the_sessions_asked(db, tmp_path):
    host_id = _ingest(tmp_path)
    ids = dict(Correction.objects.values_list("ext_id", "id"))
    corrections, exposures = read_signals(host_id, ["A", "B"])
    minute = 60_000
    assert sorted(corrections) == [
        (ids["c1"], "A", "`col_a` c1", T0 + 10 * 3_600_000 + minute, T0 + 10 * 3_600_000),
        (ids["c3"], "B", "`col_a` c3", T0 + 10 * 3_600_000 + 3 * minute, None),
    ]
    assert [(session, key, ms) for session, key, _digest, ms in exposures] == [
        ("A", "id:st\u001fL1", T0 + 10 * 3_600_000)
    ]


@pytest.mark.skipif("connection.vendor != 'sqlite'")
def test_on_sqlite_the_correction_look_up_searches_by_session(db, tmp_path):
    host_id = _ingest(tmp_path)
    with CaptureQueriesContext(connection) as queries:
        read_signals(host_id, ["A", "B"])
    [sql] = [q["sql"] for q in queries.captured_queries if '"lessons_correction"' in q["sql"]]
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {sql}")
        plan = " ".join(row[-1] for row in cursor.fetchall())
    assert "USING INDEX correction_session (host_id=? AND session=?)" in plan
