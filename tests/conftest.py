"""Shared fixtures: the personas (viewer, reviewer, admin, outsider) and small builders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

# The example inputs the tests read: the three interchange corpora and the altimate-dbt-project store.
# They live in the repository so a clone alone passes (nothing outside it is read).
CORPORA = Path(__file__).resolve().parent / "data"


@pytest.fixture(autouse=True, scope="session")
def _fast_password_hashing():
    """Persona fixtures create users in nearly every test; the production hasher is slow on purpose."""
    from django.conf import settings

    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def _user(username: str, group: str | None):
    from django.contrib.auth.models import Group, User

    from review.roles import roles_ensure

    if group and not Group.objects.filter(name=group).exists():
        roles_ensure()
    user = User.objects.create_user(username=username, password=f"{username}-pass")
    if group:
        user.groups.add(Group.objects.get(name=group))
    return user


@pytest.fixture
def viewer(db):
    return _user("vera", "viewer")


@pytest.fixture
def reviewer(db):
    return _user("rita", "reviewer")


@pytest.fixture
def second_reviewer(db):
    return _user("rob", "reviewer")


@pytest.fixture
def admin_user(db):
    return _user("ada", "admin")


@pytest.fixture
def outsider(client):
    """An anonymous visitor: the Django test client, signed in as nobody."""
    return client


@pytest.fixture
def ingest(db):
    """Ingest records (dicts or raw lines) through the real ingest service; returns the report."""
    from lessons.services.ingest import ingest_sources
    from lessons.services.reading import bytes_source

    def run(records, **options):
        lines = [r if isinstance(r, str) else json.dumps(r) for r in records]
        return ingest_sources(
            sources=[bytes_source("\n".join(lines).encode(), name="batch.jsonl")], **options
        )

    return run


@pytest.fixture
def corpora(db):
    """Ingest the three interchange corpora of tests/data; returns the report."""
    from lessons.services.ingest import ingest_sources
    from lessons.services.reading import file_source

    names = ("adbuy-desk.jsonl", "support-triage.jsonl", "warehouse-sql.jsonl")
    report = ingest_sources(sources=[file_source(str(CORPORA / n)) for n in names])
    assert report.ok, report.error_lines()
    return report
