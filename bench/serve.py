"""Helpers of the HTTP benchmarks: our app on gunicorn (DEBUG off), signing in, timed GETs.

Used by ``datasette_compare.py`` and ``locust_run.py``. The server listens on 127.0.0.1:8110 (this
worktree's port) unless ``LPR_BENCH_PORT`` says otherwise; other servers use Unix sockets.
"""

from __future__ import annotations

import http.client
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlencode

from generate import ROOT, USERS, _env

PORT = int(os.environ.get("LPR_BENCH_PORT", "8110"))
CSRF_INPUT = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')
REVIEWER = next((u, p) for u, p, g in USERS if g == "reviewer")


def bin_path(name: str) -> str:
    """A console script of this virtualenv (gunicorn, datasette, locust)."""
    return str(Path(sys.executable).parent / name)


def wait_until(ready, *, seconds: float = 60, what: str = "server") -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if ready():
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit(f"{what} did not come up within {seconds:.0f} s")


@contextmanager
def gunicorn(db_url: str, *, workers: int = 1, access_log: str | None = None) -> Iterator[str]:
    """Serve the app on 127.0.0.1:PORT with ``workers`` sync workers (DEBUG off); yields the base URL.

    ``access_log``: a file gunicorn writes a line per request to, ``METHOD PATH?QUERY STATUS MICROSECONDS``
    (the time in the worker, from reading the request to the response written; not the time queued)."""
    with gunicorn_process(db_url, workers=workers, access_log=access_log) as (base, _proc):
        yield base


@contextmanager
def gunicorn_process(
    db_url: str, *, workers: int = 1, access_log: str | None = None
) -> Iterator[tuple[str, subprocess.Popen]]:
    """As ``gunicorn``, yielding ``(base URL, the master's Popen)`` (its workers are its children)."""
    env = {**_env(db_url), "ALLOWED_HOSTS": "127.0.0.1,localhost"}
    logging = ["--access-logfile", access_log, "--access-logformat", "%(m)s %(U)s?%(q)s %(s)s %(D)s"]
    proc = subprocess.Popen(
        [bin_path("gunicorn"), "config.wsgi:application", "-b", f"127.0.0.1:{PORT}", "-w", str(workers)]
        + ["--timeout", "600", "--log-level", "warning"]
        + (logging if access_log else []),
        cwd=ROOT,
        env=env,
    )
    try:
        wait_until(lambda: socket.create_connection(("127.0.0.1", PORT), timeout=1).close() or True)
        yield f"http://127.0.0.1:{PORT}", proc
    finally:
        proc.terminate()
        proc.wait(timeout=30)


class UnixHTTPConnection(http.client.HTTPConnection):
    """``http.client`` over a Unix socket (Datasette's ``--uds``)."""

    def __init__(self, path: str, timeout: float = 600):
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.socket_path)


def tcp(timeout: float = 600) -> http.client.HTTPConnection:
    return http.client.HTTPConnection("127.0.0.1", PORT, timeout=timeout)


def timed_get(connect, path: str, headers: dict | None = None) -> tuple[int, int, float]:
    """``(status, body bytes, milliseconds)`` of one GET on a fresh connection, the body read in full."""
    conn = connect()
    started = time.perf_counter()
    conn.request("GET", path, headers=headers or {})
    response = conn.getresponse()
    body = response.read()
    elapsed = (time.perf_counter() - started) * 1000
    conn.close()
    return response.status, len(body), elapsed


def get_body(connect, path: str, headers: dict | None = None) -> tuple[int, bytes]:
    """``(status, body)`` of one GET on a fresh connection (untimed: for finding the pages to time)."""
    conn = connect()
    conn.request("GET", path, headers=headers or {})
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, body


def _cookies(response: http.client.HTTPResponse) -> dict[str, str]:
    jar = {}
    for header in response.headers.get_all("Set-Cookie") or []:
        name, _, rest = header.partition("=")
        jar[name.strip()] = rest.split(";", 1)[0]
    return jar


def sign_in(connect=tcp, user: tuple[str, str] = REVIEWER) -> dict[str, str]:
    """Sign in through the login form; returns the ``Cookie`` header to send with later requests."""
    conn = connect()
    conn.request("GET", "/accounts/login/")
    response = conn.getresponse()
    html = response.read().decode()
    jar = _cookies(response)
    body = urlencode(
        {"username": user[0], "password": user[1], "csrfmiddlewaretoken": CSRF_INPUT.search(html)[1]}
    )
    cookie = "; ".join(f"{k}={v}" for k, v in jar.items())
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "Cookie": cookie,
        "Referer": "http://127.0.0.1/",
    }
    conn.request("POST", "/accounts/login/", body=body, headers=headers)
    response = conn.getresponse()
    response.read()
    jar |= _cookies(response)
    conn.close()
    if response.status != 302 or "sessionid" not in jar:
        raise SystemExit(f"sign-in as {user[0]} failed: HTTP {response.status}")
    return {"Cookie": "; ".join(f"{k}={v}" for k, v in jar.items())}
