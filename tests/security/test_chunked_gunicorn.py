"""A chunked ingest through a real gunicorn (issue 13, fault 1: ``curl -T -`` once stored nothing).

gunicorn de-chunks the body and marks its end; the API must read it to that end and store every record.
Runs a real server process on a free local port against a SQLite file of its own.
"""

from __future__ import annotations

import http.client
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.security.builders import pile_records
from tests.servers import gunicorn

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def server(tmp_path):
    """``(port, token, database path)`` of a gunicorn serving the project on a migrated SQLite file."""
    database = tmp_path / "db.sqlite3"
    env = {"PATH": "/usr/bin:/bin", "DEBUG": "1", "DATABASE_URL": f"sqlite:///{database}"}
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput"], cwd=ROOT, env=env, check=True, capture_output=True)
    made = subprocess.run(
        [*manage, "create_token", "t", "--scope", "ingest,read"],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    with gunicorn(env) as port:
        yield port, made.stdout.strip(), database


def _send_chunked(port: int, token: str, pieces: list[bytes]) -> tuple[int, dict]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.putrequest("POST", "/api/v1/ingest")
    connection.putheader("Authorization", f"Bearer {token}")
    connection.putheader("Content-Type", "application/x-ndjson")
    connection.putheader("Transfer-Encoding", "chunked")
    connection.endheaders()
    for piece in pieces:
        connection.send(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
    connection.send(b"0\r\n\r\n")
    response = connection.getresponse()
    return response.status, json.loads(response.read())


def test_a_chunked_ingest_through_gunicorn_stores_every_record(server):
    port, token, database = server
    body = "\n".join(json.dumps(r) for r in pile_records()).encode()
    pieces = [body[i : i + 100] for i in range(0, len(body), 100)]  # chunks cut through lines
    status, report = _send_chunked(port, token, pieces)
    assert (status, report["written"], report["lines"]) == (200, True, 8)
    with sqlite3.connect(database) as db:
        assert db.execute("select count(*) from lessons_lesson").fetchone() == (4,)


def test_an_empty_chunked_ingest_through_gunicorn_is_refused(server):
    port, token, _database = server
    status, answer = _send_chunked(port, token, [])
    assert (status, answer["error"]) == (400, "empty batch: the body holds no records; nothing was written")
