"""Fixtures of the decision tests: a small pile on one host, users with a role."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from tests.builders import numbered_lesson

NS = "desk.test"
SUBJECT = "invoice_capture"
NOW = datetime(2026, 3, 1, 12, 0, 0, 123456, tzinfo=UTC)


@pytest.fixture
def pile(ingest):
    """Host ``acme`` (budget 3, enabled) with five live lessons on desk.test/invoice_capture.

    Returns the five hashes, oldest first; lesson 0 has verdict ``held``.
    """
    records = [{"type": "host", "name": "acme", "max_active": 3, "budget_enabled": True}]
    records += [numbered_lesson(i, namespace=NS) for i in range(5)]
    records.append(
        {
            "type": "verdict",
            "host": "acme",
            "lesson": records[1]["hash"],
            "verdict": "held",
            "measured_at": "2026-01-20T00:00:00Z",
        }
    )
    report = ingest(records)
    assert report.ok, report.error_lines()
    return [r["hash"] for r in records[1:6]]


@pytest.fixture
def user_with_role(db):
    from django.contrib.auth.models import Group, User

    def make(username: str, group: str | None = "reviewer", **extra):
        user = User.objects.create_user(username=username, password="x", **extra)
        if group:
            user.groups.add(Group.objects.get(name=group))
        return user

    return make
