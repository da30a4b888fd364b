"""A command's reader that goes away (`manage.py piles | head`) stops it quietly, as the exports stop
(lessons/management/base.py ``write_stream``): no traceback (manage.py). Found by a newcomer trying the
README's commands on the demo."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_piles_and_recurrence_piped_into_head_stop_quietly(tmp_path):
    # PYTHONUNBUFFERED=1 (common in containers): every line is its own write, so the demo's output is enough
    env = {
        "DEBUG": "1",
        "PATH": "/usr/bin:/bin",
        "PYTHONUNBUFFERED": "1",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'demo.sqlite3'}",
    }
    for args in (["migrate", "--verbosity", "0"], ["demo"]):
        subprocess.run(
            [sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True, capture_output=True
        )
    for command in (["piles"], ["piles", "--format", "json"], ["recurrence"]):
        read, write = os.pipe()
        fcntl.fcntl(
            read, fcntl.F_SETPIPE_SZ, 4096
        )  # the output does not fit: the writer waits for the reader
        proc = subprocess.Popen(
            [sys.executable, "manage.py", *command], cwd=ROOT, env=env, stdout=write, stderr=subprocess.PIPE
        )
        os.close(write)
        assert len(os.read(read, 10)) == 10  # the reader takes a few bytes, then goes away (`| head -c 10`)
        os.close(read)
        _out, err = proc.communicate(timeout=120)
        assert (command, err.decode()) == (command, "")
        assert proc.returncode == 0
