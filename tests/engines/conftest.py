"""Fixtures of the engine tests: writable copies of the altimate stores under ``data/``.

The stores are data in altimate-code's own format (canonical JSON), carried by the repository.
"""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
ALTIMATE_CORPUS = DATA / "altimate-dbt-project"


def store_copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, symlinks=True)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return target


@pytest.fixture
def altimate_project(tmp_path) -> Path:
    """A writable copy of the altimate-dbt-project store (a dbt team's learn store)."""
    return store_copy(ALTIMATE_CORPUS, tmp_path / "altimate-dbt-project")


def team_store(project: Path) -> Path:
    """The default store folder (``team-playbook``) of an altimate project."""
    return project / ".altimate-code" / "learn" / "team-playbook"


@pytest.fixture
def small(tmp_path) -> Path:
    """A writable copy of ``altimate-small``: two approved lessons, one retired, four signal lines."""
    return store_copy(DATA / "altimate-small", tmp_path / "small")


@pytest.fixture
def history(tmp_path) -> Path:
    """A writable copy of ``altimate-history``: an edit promoted as version 1, then a pin."""
    return store_copy(DATA / "altimate-history", tmp_path / "history")


@pytest.fixture
def team(tmp_path) -> Path:
    """A writable copy of ``altimate-team``: team lessons in remote.json and a legacy signals file."""
    return store_copy(DATA / "altimate-team", tmp_path / "team")
