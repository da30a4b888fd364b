"""A full disk is one clear line from ``ingest`` and ``create_token``, not a traceback; a 503 that says so
from the sign-in page and the API (issue 13, fault 12).

The disk fills while a write runs: every INSERT (and, for the sign-in, UPDATE) raises ``OSError(ENOSPC)``
(as a storage layer does) or the database's own "disk full" error. Nothing is written; a command exits 1.
"""

from __future__ import annotations

import errno
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import OperationalError
from django.db.backends import utils

from lessons.management.base import DISK_FULL
from tests.security.builders import pile_records

ROOT = Path(__file__).resolve().parents[2]


def _fill_disk(monkeypatch, error: Exception) -> None:
    original = utils.CursorWrapper._execute

    def execute(self, sql, params, *ignored):
        if sql.lstrip().upper().startswith("INSERT"):
            raise error
        return original(self, sql, params, *ignored)

    monkeypatch.setattr(utils.CursorWrapper, "_execute", execute)


ERRORS = {
    "oserror": OSError(errno.ENOSPC, "No space left on device"),
    "sqlite": OperationalError("database or disk is full"),
}


@pytest.fixture
def batch(tmp_path) -> str:
    path = tmp_path / "batch.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in pile_records()) + "\n")
    return str(path)


@pytest.mark.parametrize("kind", sorted(ERRORS))
def test_ingest_on_a_full_disk_says_so_in_one_line_and_writes_nothing(db, monkeypatch, batch, kind):
    from lessons.models import Host, Lesson

    _fill_disk(monkeypatch, ERRORS[kind])
    with pytest.raises(CommandError) as caught:
        call_command("ingest", batch, stdout=io.StringIO(), stderr=io.StringIO())
    assert (caught.value.returncode, str(caught.value)) == (1, DISK_FULL)
    assert (Host.objects.count(), Lesson.objects.count()) == (0, 0)


@pytest.mark.parametrize("kind", sorted(ERRORS))
def test_create_token_on_a_full_disk_says_so_in_one_line(db, monkeypatch, kind):
    from review.models import ApiToken

    _fill_disk(monkeypatch, ERRORS[kind])
    out = io.StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("create_token", "t", "--scope", "read", stdout=out, stderr=io.StringIO())
    assert (caught.value.returncode, str(caught.value), out.getvalue()) == (1, DISK_FULL, "")
    assert ApiToken.objects.count() == 0


def test_the_command_line_shows_no_traceback(tmp_path, batch):
    """Through manage.py: exit 1 and one line on stderr."""
    database = tmp_path / "db.sqlite3"
    env = {"PATH": "/usr/bin:/bin", "DEBUG": "1", "DATABASE_URL": f"sqlite:///{database}"}
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
    )
    code = (
        "import errno, sys, django; from django.db.backends import utils\n"
        "original = utils.CursorWrapper._execute\n"
        "def execute(self, sql, params, *a):\n"
        "    if sql.lstrip().upper().startswith('INSERT'):\n"
        "        raise OSError(errno.ENOSPC, 'No space left on device')\n"
        "    return original(self, sql, params, *a)\n"
        "utils.CursorWrapper._execute = execute\n"
        "sys.argv = ['manage.py', 'ingest', sys.argv[1]]\n"
        "import manage; manage.main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, batch], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert (proc.returncode, proc.stderr.splitlines()[-1:], "Traceback" in proc.stderr) == (
        1,
        [f"CommandError: {DISK_FULL}"],
        False,
    )


@pytest.fixture
def lenient_client():
    """A test client that answers like the server (handler500) instead of raising the view's exception."""
    from django.test import Client

    return Client(raise_request_exception=False)


def test_signing_in_on_a_full_disk_is_a_503_page_that_says_so(lenient_client, reviewer, monkeypatch):
    original = utils.CursorWrapper._execute

    def execute(self, sql, params, *ignored):
        if sql.lstrip().upper().startswith(("INSERT", "UPDATE")):
            raise OSError(errno.ENOSPC, "No space left on device")
        return original(self, sql, params, *ignored)

    monkeypatch.setattr(utils.CursorWrapper, "_execute", execute)
    response = lenient_client.post("/accounts/login/", {"username": "rita", "password": "rita-pass"})
    html = response.content.decode()
    assert (response.status_code, response["Retry-After"]) == (503, "60")
    assert "<h1>The server&#x27;s disk is full</h1>" in html or "<h1>The server's disk is full</h1>" in html


@pytest.mark.parametrize("kind", sorted(ERRORS))
def test_an_api_ingest_on_a_full_disk_is_a_json_503(lenient_client, db, monkeypatch, kind):
    from review.services.tokens import token_create

    raw = token_create(name="t", host=None, can_ingest=True, can_read=True)[1]
    _fill_disk(monkeypatch, ERRORS[kind])
    body = "\n".join(json.dumps(r) for r in pile_records()).encode()
    response = lenient_client.post(
        "/api/v1/ingest", data=body, content_type="application/x-ndjson", HTTP_AUTHORIZATION=f"Bearer {raw}"
    )
    assert (response.status_code, response["Retry-After"], response.json()) == (
        503,
        "60",
        {
            "error": "disk full",
            "details": ["the server's disk is full; nothing was written; try again later"],
        },
    )
