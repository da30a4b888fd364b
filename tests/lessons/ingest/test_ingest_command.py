"""``manage.py ingest``: exit codes, stdin, reports, no tracebacks. spec: README.md ("Commands")."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from lessons.models import Host, Lesson
from tests.conftest import CORPORA

ROOT = Path(__file__).resolve().parents[3]


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    code = 0
    try:
        call_command("ingest", *args, stdout=out, stderr=err)
    except CommandError as exc:
        code = exc.returncode
        err.write(str(exc))
    return code, out.getvalue(), err.getvalue()


def test_the_three_corpora_ingest_with_a_report(db):
    code, out, _err = run(
        *(str(CORPORA / n) for n in ("adbuy-desk.jsonl", "support-triage.jsonl", "warehouse-sql.jsonl"))
    )
    assert code == 0
    assert out.splitlines()[-1] == (
        "imported: 172 line(s); 172 created, 0 unchanged, 0 updated, 0 held, 0 rejected"
    )
    assert Lesson.objects.count() == 38 and Host.objects.count() == 3


def test_an_invalid_file_exits_1_names_line_and_field_and_writes_nothing(db, tmp_path):
    bad = tmp_path / "bad.jsonl"
    lines = (CORPORA / "warehouse-sql.jsonl").read_text().splitlines()
    lines[3] = lines[3].replace(
        '"created_at": "2026-01-17T00:00:00.000Z"', '"created_at": "2026-01-17T00:00:00"'
    )
    bad.write_text("\n".join(lines))
    code, _out, err = run(str(bad))
    assert code == 1
    assert f"{bad}:4: lesson.created_at: timestamp '2026-01-17T00:00:00' has no time zone" in err
    assert "Traceback" not in err
    assert (Host.objects.count(), Lesson.objects.count()) == (0, 0)


def test_a_missing_file_exits_1_with_a_message(db, tmp_path):
    code, _out, err = run(str(tmp_path / "nope.jsonl"))
    assert code == 1 and "nope.jsonl: cannot read: No such file or directory" in err


def test_a_bad_default_host_is_wrong_usage(db):
    code, _out, err = run("-", "--host", "Not A Host")
    assert code == 2 and "--host: expected a host name" in err


def test_dash_reads_standard_input(db, monkeypatch):
    data = json.dumps(
        {"type": "lesson", "namespace": "", "subject": "s", "text": "From stdin.", "created_at": 1}
    )
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode())))
    code, out, _err = run("-", "--host", "piped")
    assert code == 0 and Lesson.objects.get().host.name == "piped"
    assert "1 created" in out


def test_dry_run_prints_the_report_and_writes_nothing(db):
    code, out, _err = run(str(CORPORA / "adbuy-desk.jsonl"), "--dry-run")
    assert code == 0 and out.splitlines()[-1].startswith("dry run, nothing written: 136 line(s); 136 created")
    assert Lesson.objects.count() == 0


def test_json_format_report(db):
    code, out, _err = run(str(CORPORA / "support-triage.jsonl"), "--format", "json")
    report = json.loads(out)
    assert code == 0 and report["counts"] == {
        "host": {"created": 1, "unchanged": 0, "updated": 0, "held": 0, "rejected": 0},
        "lesson": {"created": 11, "unchanged": 0, "updated": 0, "held": 0, "rejected": 0},
    }


@pytest.mark.parametrize("args", [[], ["--format", "yaml", "x"]])
def test_wrong_usage_exits_2_without_a_traceback(args):
    proc = subprocess.run(
        [sys.executable, "manage.py", "ingest", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"DEBUG": "1", "PATH": "/usr/bin:/bin", "DATABASE_URL": "sqlite:///:memory:"},
    )
    assert proc.returncode == 2
    assert "usage:" in proc.stderr and "Traceback" not in proc.stderr


def test_without_debug_or_secret_key_a_command_says_so_in_one_line():
    proc = subprocess.run(
        [sys.executable, "manage.py", "piles"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert proc.returncode == 2
    assert proc.stderr == (
        "error: SECRET_KEY must be set when DEBUG is off (for local use: export DEBUG=1; make does this for you)\n"
    )


def test_a_dry_run_says_a_missing_host_would_be_created(db):
    from lessons.ingest.passes import ingest_sources
    from lessons.ingest.reading import bytes_source

    data = json.dumps(
        {"type": "lesson", "host": "newhost", "namespace": "", "subject": "s", "text": "T.", "created_at": 1}
    ).encode()
    report = ingest_sources(sources=[bytes_source(data)], dry_run=True)
    assert report.notes == ["host newhost would be created with the defaults (budget off)"]
    assert not Host.objects.exists()
