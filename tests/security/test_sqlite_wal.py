"""SQLite runs in WAL mode with a busy timeout (issue 13, fault 9 and Build 3): readers never wait for a
writer, and a writer waits for another instead of failing at once. Checked on a real file (the test
database of SQLite is in memory, where there is no journal to choose)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROBE = (
    "import django; django.setup(); from django.db import connection; "
    "c = connection.cursor(); "
    "print(c.execute('PRAGMA journal_mode').fetchone()[0], c.execute('PRAGMA busy_timeout').fetchone()[0], "
    "connection.transaction_mode)"
)


def test_a_sqlite_file_is_opened_in_wal_mode_with_a_20_second_busy_timeout(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={
            "PATH": "/usr/bin:/bin",
            "DEBUG": "1",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        },
    )
    assert (proc.stdout, proc.stderr) == ("wal 20000 IMMEDIATE\n", "")
