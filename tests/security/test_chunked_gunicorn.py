"""A chunked ingest through a real gunicorn (issue 13, fault 1: ``curl -T -`` once stored nothing).

gunicorn de-chunks the body and marks its end; the API must read it to that end and store every record.
Runs a real server process on a free local port against a SQLite file of its own.
"""

from __future__ import annotations

import http.client
import json
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.security.builders import pile_records

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = Path(sys.executable).with_name("gunicorn")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


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
    port = _free_port()
    process = subprocess.Popen(
        [str(GUNICORN), "config.wsgi", "-b", f"127.0.0.1:{port}", "-w", "1", "--timeout", "30"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield port, made.stdout.strip(), database
    finally:
        process.terminate()
        process.wait(timeout=10)


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
