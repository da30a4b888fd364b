"""Scenarios that need a SQLite *file* database (pytest's SQLite database is in memory, and these run a
worker, threads or a second connection against one file): each is a module run as
``python -m MODULE ARGS`` in a process of its own, printing its result as JSON on its last line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[1]


def run_sqlite_scenario(module: str, *args: str, database: Path, env: dict[str, str] | None = None) -> dict:
    """Run ``python -m module args`` from the project folder with DEBUG on and ``DATABASE_URL`` the SQLite
    file ``database`` (plus ``env``), within 300 s; returns the JSON of its last line of output. Fails the
    test (its stderr as the message) when it exits non-zero."""
    done = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=BASE_DIR,
        env={**os.environ, "DEBUG": "1", "DATABASE_URL": f"sqlite:///{database}", **(env or {})},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])
