"""Database connections kept between requests (``CONN_MAX_AGE`` > 0, config/settings.py): a kept connection
the server has dropped (a PostgreSQL restart, an idle timeout, ``pg_terminate_backend``) must not fail
the next request on it. Django checks a kept connection at a request's first query only with
``CONN_HEALTH_CHECKS``; without it each server thread answered its next request 503/500.
"""

from __future__ import annotations

import http.client
import subprocess
import sys
import time

import pytest
from django.db import connection

from tests.servers import ROOT, gunicorn


def _settings_value(expression: str, **env: str) -> str:
    code = f"from django.conf import settings; print({expression})"
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "DEBUG": "1", "DATABASE_URL": "sqlite:///:memory:", **env},
    )
    return done.stdout.strip().splitlines()[-1]


PG_URL = "postgres://nobody@127.0.0.1:5432/nowhere"  # never connected to: the settings only


@pytest.mark.parametrize(
    ("database", "max_age", "expected"),
    [
        ("sqlite:///:memory:", "", "0 False"),
        ("sqlite:///:memory:", "0", "0 False"),
        ("sqlite:///:memory:", "60", "60 True"),
        (PG_URL, "", "60 True"),  # PostgreSQL keeps connections by default
        (PG_URL, "0", "0 False"),
        (PG_URL, "5", "5 True"),
        ("POSTGRES://nobody@127.0.0.1:5432/nowhere", "", "60 True"),  # the engine decides, not the spelling
    ],
)
def test_kept_connections_are_health_checked(database, max_age, expected):
    value = _settings_value(
        "settings.DATABASES['default']['CONN_MAX_AGE'], settings.DATABASES['default']['CONN_HEALTH_CHECKS']",
        CONN_MAX_AGE=max_age,
        DATABASE_URL=database,
    )
    assert value == expected


def _status(port: int) -> int:
    """An API request that reads the database (the token lookup) and is refused: 401."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    conn.request("GET", "/api/v1/jobs/1", headers={"Authorization": "Bearer lpr_nosuchtoken"})
    status = conn.getresponse().status
    conn.close()
    return status


@pytest.mark.postgres
@pytest.mark.skipif(connection.vendor != "postgresql", reason="drops the server's connections: PostgreSQL")
@pytest.mark.django_db
def test_a_kept_connection_the_server_dropped_does_not_fail_the_next_request():
    s = connection.settings_dict
    url = f"postgres://{s['USER']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"
    env = {"PATH": "/usr/bin:/bin", "DEBUG": "1", "DATABASE_URL": url, "CONN_MAX_AGE": "600"}
    with gunicorn(env) as port:
        assert _status(port) == 401  # the worker's connection is open and kept
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            assert cursor.fetchone()[0] >= 1
        time.sleep(0.3)
        assert [_status(port) for _ in range(3)] == [401, 401, 401]
