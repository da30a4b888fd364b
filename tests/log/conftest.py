"""Builders of the decision log tests: decisions of several hosts, actors, actions and reason codes."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest


def at(day: str) -> datetime:
    """``"2026-03-02"`` -> that day at 12:00 UTC."""
    return datetime.fromisoformat(day).replace(hour=12, tzinfo=UTC)


def row_seqs(html: str) -> list[int]:
    """The seqs of the log table's rows, in page order."""
    return [int(s) for s in re.findall(r'data-seq="(\d+)"', html)]


@pytest.fixture
def two_hosts(db):
    """Hosts ``alpha`` (3 live lessons on ns/s, budget 2, enabled) and ``beta`` (budget off)."""
    from lessons.ingest.passes import ingest_sources
    from lessons.ingest.reading import bytes_source
    from lessons.models import Host

    alpha = Host.objects.create(name="alpha", max_active=2, budget_enabled=True)
    beta = Host.objects.create(name="beta", max_active=8, budget_enabled=False)
    lines = "\n".join(
        f'{{"type": "lesson", "host": "alpha", "namespace": "ns", "subject": "s", "text": "rule {i}", '
        f'"created_at": {1767225600000 + i}}}'
        for i in range(3)
    )
    report = ingest_sources(sources=[bytes_source(lines.encode())])
    assert report.ok
    return alpha, beta


@pytest.fixture
def budget_steps(admin_user):
    """``budget_steps(host, n, start=...)``: n set_budget decisions on ``host`` alternating max_active."""
    from review.services.budget import host_set_budget

    def run(host, n, *, now=None, code=None, reason="budget step"):
        out = []
        for i in range(n):
            target = 100 + (host.max_active + 1) % 50  # always differs from the current value
            out.append(
                host_set_budget(
                    host=host,
                    actor=admin_user,
                    max_active=target,
                    budget_enabled=host.budget_enabled,
                    reason=f"{reason} {i}",
                    reason_code=code,
                    now=now,
                )
            )
        return out

    return run
