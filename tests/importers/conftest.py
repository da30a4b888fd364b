"""Fixtures of the importer tests: a writable copy of the altimate corpus and a command runner."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from tests.conftest import CORPORA
from tests.engines.conftest import store_copy

ALTIMATE = CORPORA / "altimate-dbt-project"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
BUDGET_HOST = {"type": "host", "name": "dbt-project", "max_active": 8, "budget_enabled": True}


@pytest.fixture
def project(tmp_path) -> Path:
    """A writable copy of the altimate-dbt-project corpus (importers write beside the store; tests/data
    stays as committed)."""
    return store_copy(ALTIMATE, tmp_path / "altimate-dbt-project")


@pytest.fixture
def learn(project) -> Path:
    return project / ".altimate-code" / "learn"


@pytest.fixture
def budget_host(ingest):
    """Host dbt-project with its budget enabled at 8, stated by a host record before the import."""
    report = ingest([BUDGET_HOST])
    assert report.ok, report.error_lines()


def run_command(name: str, *args) -> tuple[int, str, str]:
    """``call_command`` returning ``(exit status, stdout, stderr)`` as the shell would see them."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    try:
        call_command(name, *args, stdout=out, stderr=err)
    except CommandError as exc:
        code = exc.returncode
        err.write(str(exc))
    return code, out.getvalue(), err.getvalue()
