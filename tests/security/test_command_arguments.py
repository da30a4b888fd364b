"""Command-line arguments that are not text: a terminal in Latin-1 passes bytes that are not UTF-8, which
Python keeps as lone surrogates (``\\udcff``), and no database takes them. Every command answered them
with a traceback (UnicodeEncodeError) where it stored or looked them up; now wrong usage, exit 2, one
line naming the option. Options that name files still take any bytes. README.md, "Commands" (exit
codes).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lessons.management.base import NOT_TEXT
from tests.fixtures.importers import run_command

ROOT = Path(__file__).resolve().parents[2]
HASH = "a" * 64
LATIN1 = "caf\udce9"  # "café" typed in Latin-1: the byte 0xE9 is not UTF-8


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("review", "retire", HASH, "--as", "reviewer", "--reason", LATIN1), "--reason"),
        (("review", "retire", HASH, "--as", LATIN1, "--reason", "Duplicate."), "--as"),
        (("budget", "acme", "--max-active", "5", "--as", "admin", "--reason", LATIN1), "--reason"),
        (("budget", LATIN1, "--max-active", "5", "--as", "admin", "--reason", "Tighter."), "HOST"),
        (("create_token", LATIN1), "name"),
        (("create_token", "ci", "--host", LATIN1), "--host"),
        (("piles", "--host", LATIN1), "--host"),
        (("recurrence", "--host", LATIN1), "--host"),
        (("outcomes", "--host", LATIN1), "--host"),
        (("export_decisions", "--host", LATIN1), "--host"),
        (("export_outcomes", "--host", LATIN1), "--host"),
        (("export_restatements", "--host", LATIN1), "--host"),
        (("review", "retire", HASH, "--as", "reviewer", "--reason", "a\x00b"), "--reason"),
    ],
)
def test_an_argument_that_is_not_text_is_wrong_usage_naming_it(db, args, option):
    value = args[args.index(option) + 1] if option.startswith("--") else args[1]
    assert run_command(*args) == (2, "", NOT_TEXT.format(option=option, value=value))


def test_a_file_name_that_is_not_utf8_is_still_read(db, tmp_path):
    path = tmp_path / f"{LATIN1}.jsonl"
    path.write_text('{"type": "host", "name": "acme", "max_active": 8, "budget_enabled": true}\n')
    code, out, err = run_command("ingest", str(path), "--dry-run")
    assert (code, err) == (0, "")
    assert out.splitlines()[-1] == (
        "dry run, nothing written: 1 line(s); 1 created, 0 unchanged, 0 updated, 0 held, 0 rejected"
    )


def test_through_manage_py_the_bytes_are_one_line_and_exit_2(tmp_path):
    env = {"PATH": "/usr/bin:/bin", "DEBUG": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    argv = [sys.executable, "manage.py", "piles", "--host", os.fsencode(LATIN1)]
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True)
    expected = "UsageError: " + NOT_TEXT.format(option="--host", value=LATIN1)
    assert (proc.returncode, proc.stderr.decode().splitlines()) == (2, [expected])
