"""Issue 13, acceptance: while a large ingest runs in the background worker, a reviewer on another
connection signs in, reads the queue and a pile and retires, with no 500 — on PostgreSQL and on SQLite.
The scenario pauses the worker inside the ingest's write phase so the requests land mid-ingest
(tests/review/jobs/concurrency_scenario.py); the 200k-line run with its wait times is
bench/concurrency_bench.py (docs/benchmarks.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from tests.review.jobs.concurrency_scenario import run

BASE_DIR = Path(__file__).resolve().parents[3]
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


def test_on_sqlite_reviewers_read_during_a_large_ingest_and_writes_say_busy_never_500(tmp_path):
    env = {
        **os.environ,
        "DEBUG": "1",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'acceptance.sqlite3'}",
        "ALLOWED_HOSTS": "testserver",
        "INGEST_BACKGROUND_BYTES": "1",
        "WEB_LOCK_TIMEOUT_SECONDS": "1",
    }
    done = subprocess.run(
        [sys.executable, "-m", "tests.review.jobs.concurrency_scenario", str(LINES)],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    check_common(result)
    # SQLite has one writer: while the batch is being written a sign-in still succeeds (it writes
    # nothing that waits for the write lock: review/signin.py), reads are answered, and a retire answers
    # 503 with Retry-After (never "database is locked") and goes through afterwards.
    assert result["during"]["sign_in"] == {"status": 302, "retry_after": None}
    assert result["during"]["retire"] == {"status": 503, "retry_after": "5"}
    assert result["after"]["retire"] == {"status": 302, "retry_after": None}
