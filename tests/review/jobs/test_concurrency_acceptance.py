"""Issue 13, acceptance: while a large ingest runs in the background worker, a reviewer on another
connection signs in, reads the queue and a pile and retires, with no 500 — on PostgreSQL and on SQLite.
The scenario pauses the worker inside the ingest's write phase so the requests land mid-ingest
(tests/review/jobs/concurrency_scenario.py); the 200k-line run with its wait times is
bench/concurrency_bench.py (docs/benchmarks.md).
"""

from __future__ import annotations

import pytest
from django.db import connection

from tests.review.jobs.concurrency_scenario import run
from tests.scenarios import run_sqlite_scenario

LINES = 3000


def check_common(result: dict) -> None:
    assert result["job_state_during"] == "running"
    assert result["during"]["queue"] == {"status": 200, "retry_after": None}
    assert result["during"]["pile"] == {"status": 200, "retry_after": None}
    assert result["job"] == {"state": "succeeded", "error": "", "created": LINES - 1}
    assert result["bulk_lessons"] == LINES - 1
    assert (result["decisions"], result["retired"]) == (1, "retracted")
    assert result["after"]["sign_in"] == {"status": 302, "retry_after": None}


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the in-process run needs PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_reviewers_sign_in_read_and_retire_during_a_large_ingest(settings):
    settings.INGEST_BACKGROUND_BYTES = 1
    result = run(LINES, lambda: connection.close())  # the requesting thread's own connection
    check_common(result)
    # row locks are per row: nothing the reviewer touches is held by the ingest
    assert result["during"]["sign_in"] == {"status": 302, "retry_after": None}
    assert result["during"]["retire"] == {"status": 302, "retry_after": None}
    assert result["after"] == {"sign_in": {"status": 302, "retry_after": None}}


def test_on_sqlite_reviewers_sign_in_read_and_retire_between_the_slices_of_a_large_ingest(tmp_path):
    env = {
        "ALLOWED_HOSTS": "testserver",
        "INGEST_BACKGROUND_BYTES": "1",
        "WEB_LOCK_TIMEOUT_SECONDS": "1",
        "INGEST_SLICE_MS": "50",  # several slices in a batch of 3,000 lines
    }
    database = tmp_path / "acceptance.sqlite3"
    result = run_sqlite_scenario(
        "tests.review.jobs.concurrency_scenario", str(LINES), database=database, env=env
    )
    check_common(result)
    # SQLite has one writer: the background ingest commits its write phase in slices, and between two of
    # them the reviewer's retire takes the lock (the wait is at most about one slice: the 200k-line run
    # in bench/concurrency_bench.py measures it); a sign-in writes nothing that waits (review/signin.py).
    assert result["during"]["sign_in"] == {"status": 302, "retry_after": None}
    assert result["during"]["retire"] == {"status": 302, "retry_after": None}
    assert result["after"] == {"sign_in": {"status": 302, "retry_after": None}}
