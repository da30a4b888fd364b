"""Web writes give up waiting for a lock after ``WEB_LOCK_TIMEOUT_SECONDS`` and answer 503 with
Retry-After and a clear sentence (pages, htmx, the API's JSON body), on PostgreSQL and SQLite; reads are
answered meanwhile; nothing is written. spec: issue 13, Build 3 ("web decisions wait at most a few
seconds for a lock") and fault 9. The scenario: tests/review/web/lock_scenario.py.
"""

from __future__ import annotations

import contextlib
import json
import threading

import pytest
from django.db import connection, connections, transaction

from review.locking import BUSY_SENTENCE, E_BUSY_DETAIL, is_lock_timeout
from tests.review.web.lock_scenario import run_scenario
from tests.scenarios import run_sqlite_scenario

BUSY_PAGE = "Busy: nothing was saved"
HTMX_BUSY = f'<div class="notice notice-error" role="alert">{BUSY_SENTENCE}</div>'
API_BUSY = {"error": "busy", "details": [E_BUSY_DETAIL.format(seconds=5)]}


def check(result: dict, *, sign_in_waits: bool = True) -> None:
    assert (result["retire"]["status"], result["retire"]["retry_after"]) == (503, "5")
    assert BUSY_PAGE in result["retire"]["body"]
    assert "database is locked" not in result["retire"]["body"]
    assert result["retire_htmx"] == {"status": 503, "retry_after": "5", "body": HTMX_BUSY}
    assert (result["api_ingest"]["status"], result["api_ingest"]["retry_after"]) == (503, "5")
    assert json.loads(result["api_ingest"]["body"]) == API_BUSY
    if sign_in_waits:  # PostgreSQL: the user's row is locked, and last_login is written as before
        assert (result["sign_in"]["status"], result["sign_in"]["retry_after"]) == (503, "5")
        assert BUSY_PAGE in result["sign_in"]["body"]
    else:  # SQLite: a sign-in writes nothing that waits for the write lock (review/signin.py)
        assert (result["sign_in"]["status"], result["sign_in"]["retry_after"]) == (302, None)
    assert result["read_pile"] == {"status": 200, "retry_after": None, "body": ""}
    assert result["api_read"] == {"status": 200, "retry_after": None, "body": ""}
    assert result["decisions_while_held"] == 0
    # released: the same retire goes through
    assert result["retire_after"]["status"] == 302
    assert result["decisions_after"] == 1


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks of PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_a_write_behind_a_row_lock_is_a_503_with_retry_after(settings):
    from django.contrib.auth.models import User

    from lessons.models import Lesson
    from review.models import ApiToken

    settings.WEB_LOCK_TIMEOUT_SECONDS = 1

    @contextlib.contextmanager
    def hold():
        locked, release = threading.Event(), threading.Event()

        def holder():
            try:
                with transaction.atomic():  # this thread's own connection
                    list(Lesson.objects.select_for_update().filter(host__name="acme"))
                    list(ApiToken.objects.select_for_update())
                    list(User.objects.select_for_update())
                    locked.set()
                    release.wait(60)
            finally:
                connections.close_all()

        thread = threading.Thread(target=holder)
        thread.start()
        assert locked.wait(30)
        try:
            yield
        finally:
            release.set()
            thread.join(60)

    check(run_scenario(hold, connection.close))


def test_on_sqlite_a_write_behind_the_write_lock_is_a_503_with_retry_after(tmp_path):
    env = {"WEB_LOCK_TIMEOUT_SECONDS": "1", "ALLOWED_HOSTS": "testserver"}
    result = run_sqlite_scenario(
        "tests.review.web.lock_scenario", database=tmp_path / "locks.sqlite3", env=env
    )
    check(result, sign_in_waits=False)


def test_a_lock_timeout_is_told_from_other_database_errors():
    from django.db import OperationalError

    class PgError(Exception):
        sqlstate = "55P03"

    wrapped = OperationalError("canceling statement due to lock timeout")
    wrapped.__cause__ = PgError()
    assert is_lock_timeout(wrapped)
    assert is_lock_timeout(OperationalError("database is locked"))
    assert not is_lock_timeout(OperationalError("connection refused"))
    assert not is_lock_timeout(ValueError("database is locked"))


@pytest.mark.django_db
def test_a_connection_kept_between_requests_gets_the_short_wait_for_a_write(client, reviewer, monkeypatch):
    """CONN_MAX_AGE > 0: the connection is already open when a write request starts, so no
    ``connection_created`` fires; the middleware bounds it at the start and restores it at the end."""
    from django.test.utils import CaptureQueriesContext

    from review.locking import _wait_statement

    client.force_login(reviewer)
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 60)
    with CaptureQueriesContext(connection) as queries:
        assert client.post("/accounts/logout/").status_code == 302
    sql = [q["sql"] for q in queries.captured_queries]
    assert sql[0] == _wait_statement(connection, 3)
    assert sql[-1] == _wait_statement(connection, None)
    assert _wait_statement(connection, 3) in (
        "SET lock_timeout = '3000ms'",
        "PRAGMA busy_timeout = 3000",
    )
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 0)  # the default: nothing added
    client.force_login(reviewer)
    with CaptureQueriesContext(connection) as queries:
        assert client.post("/accounts/logout/").status_code == 302
    assert not any("lock_timeout" in q["sql"] or "busy_timeout" in q["sql"] for q in queries.captured_queries)
