"""SQLite on a really full disk (issue 21, fault 11): pages and the API still read, a decision and a sign-in
answer 503 with Retry-After and the disk-full page, a command says so in one line.

The database lives on a small tmpfs that a file then fills to the last byte. No WAL files are left when
the last connection closes, so every new connection has to create them and cannot: before the fix its
startup ``PRAGMA journal_mode=WAL`` failed with "disk I/O error", and a pile's page, a retire and a sign-in
answered 500, ``create_token`` printed a traceback. config/sqlite opens such a database read-only.

Needs to mount a tmpfs (root, or a container allowed to mount): skipped otherwise. SQLite's fault: the
PostgreSQL run skips it (the server it starts uses SQLite either way).
"""

from __future__ import annotations

import http.cookiejar
import json
import os
import re
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.db import connection

from lessons.management.base import DISK_FULL
from tests.security.builders import HOST, NS, SUBJECT, ingest_records, pile_records
from tests.servers import ROOT, gunicorn

ENTITY = f"host={HOST}&namespace={NS}&subject={SUBJECT}"
PASSWORD = "rita-full-disk-pass"

pytestmark = [
    pytest.mark.skipif(
        connection.vendor != "sqlite", reason="a fault of SQLite's WAL files; PostgreSQL reads on a full disk"
    ),
    # committed rows: SQLite's backup waits forever for the test's open transaction to end
    pytest.mark.django_db(transaction=True),
]


@pytest.fixture
def tmpfs(tmp_path) -> Iterator[Path]:
    """A 16 MiB tmpfs at a fresh folder, unmounted afterwards; skips when this machine cannot mount one."""
    mount = tmp_path / "small"
    mount.mkdir()
    tried = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m,mode=0700", "tmpfs", str(mount)],
        capture_output=True,
        text=True,
    )
    if tried.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here (root in a container allowed to mount): {tried.stderr}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.fixture
def full_disk_world(tmpfs, reviewer) -> dict:
    """The builders' pile, the reviewer ``rita`` (a real password hash the server checks) and a read token,
    copied from the test database into ``db.sqlite3`` on the tmpfs, in WAL mode as the server keeps it."""
    from django.contrib.auth.hashers import PBKDF2PasswordHasher

    from review.services.tokens import token_create

    ingest_records(pile_records())
    reviewer.password = PBKDF2PasswordHasher().encode(PASSWORD, PBKDF2PasswordHasher().salt())
    reviewer.save(update_fields=["password"])
    raw = token_create(name="reader", host=None, can_ingest=False, can_read=True)[1]
    path = tmpfs / "db.sqlite3"
    connection.ensure_connection()
    target = sqlite3.connect(path)
    connection.connection.backup(target)
    target.execute("PRAGMA journal_mode=WAL")
    target.close()
    env = {
        "PATH": "/usr/bin:/bin",
        "DEBUG": "0",
        "SECRET_KEY": "a-test-key-" + "x" * 50,
        "DATABASE_URL": f"sqlite:///{path}",
    }
    return {"path": path, "env": env, "token": raw}


def _fill(folder: Path) -> None:
    """Write ``folder``'s filesystem full, once the server's last connection has closed and taken the WAL
    files with it (after its answer was sent), so that the next connection has to make them."""
    for _ in range(100):
        if sorted(p.name for p in folder.iterdir() if p.name.startswith("db.sqlite3")) == ["db.sqlite3"]:
            break
        time.sleep(0.1)
    assert sorted(p.name for p in folder.iterdir() if p.name.startswith("db.sqlite3")) == ["db.sqlite3"]
    try:
        with open(folder / "filler", "wb") as handle:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
    except OSError as exc:
        assert exc.errno == 28  # ENOSPC
    assert os.statvfs(folder).f_bavail == 0


class Browser:
    """Cookies and CSRF for one person at ``base``; answers are ``(status, headers, body)``."""

    def __init__(self, base: str):
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def _open(self, request) -> tuple[int, dict, str]:
        try:
            answer = self.opener.open(request, timeout=60)
        except urllib.error.HTTPError as exc:
            answer = exc
        return answer.status, dict(answer.headers), answer.read().decode()

    def get(self, path: str, **headers) -> tuple[int, dict, str]:
        return self._open(urllib.request.Request(self.base + path, headers=headers))

    def post(self, path: str, data: dict) -> tuple[int, dict, str]:
        token = next(c.value for c in self.jar if c.name == "csrftoken")
        body = urllib.parse.urlencode({**data, "csrfmiddlewaretoken": token}, doseq=True).encode()
        return self._open(urllib.request.Request(self.base + path, data=body, headers={"Referer": self.base}))

    def sign_in(self) -> tuple[int, dict, str]:
        self.get("/accounts/login/")
        return self.post("/accounts/login/", {"username": "rita", "password": PASSWORD})


def _heading(html: str) -> list[str]:
    return re.findall(r"<h1>(.*?)</h1>", html)


DISK_FULL_HEADING = ["The server's disk is full"]


def test_a_full_disk_reads_pages_and_refuses_writes_with_503(full_disk_world):
    from review.models import Decision

    with gunicorn(full_disk_world["env"]) as port:
        rita = Browser(f"http://127.0.0.1:{port}")
        assert rita.sign_in()[0] == 200
        before = rita.get(f"/pile/?{ENTITY}")[2]
        version = before.split('name="pile_version" value="', 1)[1].split('"', 1)[0]
        members = re.findall(r'name="members" value="([0-9a-f]{64})"', before)
        _fill(full_disk_world["path"].parent)

        status, _headers, page = rita.get(f"/pile/?{ENTITY}")
        assert (status, re.findall(r'name="members" value="([0-9a-f]{64})"', page)) == (200, members)
        api = rita.get("/api/v1/decisions", Authorization=f"Bearer {full_disk_world['token']}")
        assert (api[0], json.loads(api[2])["decisions"], json.loads(api[2])["head"]["seq"]) == (200, [], 0)

        data = {"members": members[:1], "reason": "Restates another lesson.", "pile_version": version}
        status, headers, page = rita.post(f"/pile/retire/?{ENTITY}", data)
        assert (status, headers.get("Retry-After"), _heading(page)) == (503, "60", DISK_FULL_HEADING)

        newcomer = Browser(rita.base)
        status, headers, page = newcomer.sign_in()
        assert (status, headers.get("Retry-After"), _heading(page)) == (503, "60", DISK_FULL_HEADING)
    assert Decision.objects.count() == 0


def test_a_command_on_a_full_disk_says_so_in_one_line(full_disk_world):
    _fill(full_disk_world["path"].parent)
    proc = subprocess.run(
        [sys.executable, "manage.py", "create_token", "t", "--scope", "read"],
        cwd=ROOT,
        env=full_disk_world["env"],
        capture_output=True,
        text=True,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, "", f"CommandError: {DISK_FULL}\n")
