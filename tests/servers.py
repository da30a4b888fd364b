"""A real gunicorn serving the project, for the tests that need a server process of its own (chunked
bodies, connections kept between requests)."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUNICORN = Path(sys.executable).with_name("gunicorn")


def free_port() -> int:
    """A local TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def gunicorn(env: dict[str, str]) -> Iterator[int]:
    """One gunicorn worker serving ``config.wsgi`` with environment ``env`` on a free port; yields the port
    once it accepts connections (at most ~20 s), and stops the server afterwards."""
    port = free_port()
    process = subprocess.Popen(
        [str(GUNICORN), "config.wsgi", "-b", f"127.0.0.1:{port}", "-w", "1", "--timeout", "30"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield port
    finally:
        process.terminate()
        process.wait(timeout=10)
