"""The queue's total from the stored pile counts (``HostCount.pile_count``) when no filter but the host is
set: the same number the COUNT over the over-budget rows gives (issue 10: one query fewer a page)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lessons.models import Host
from review.piles.selectors import host_pile_counts, queue_page, queue_rows
from review.services.decisions import lessons_retire
from tests.builders import numbered_lesson

FILTERS = [
    {"host": None, "namespace": None, "text": None},
    {"host": "acme", "namespace": None, "text": None},
    {"host": "zeta", "namespace": None, "text": None},
    {"host": "off", "namespace": None, "text": None},
    {"host": "empty", "namespace": None, "text": None},
    {"host": None, "namespace": "desk", "text": None},
    {"host": "acme", "namespace": None, "text": "number 2"},
]


@pytest.fixture
def hosts(ingest):
    records = [
        {"type": "host", "name": "acme", "max_active": 2, "budget_enabled": True},
        {"type": "host", "name": "zeta", "max_active": 1, "budget_enabled": True},
        {"type": "host", "name": "off", "max_active": 1, "budget_enabled": False},
        {"type": "host", "name": "empty", "max_active": 1, "budget_enabled": True},
    ]
    for host, subjects in (("acme", ("a", "b", "c")), ("zeta", ("a",)), ("off", ("a", "b"))):
        for subject in subjects:
            records += [numbered_lesson(i, namespace="desk", subject=subject, host=host) for i in range(4)]
    report = ingest(records)
    assert report.ok, report.error_lines()


def _totals() -> list[tuple[int, int]]:
    out = []
    for filters in FILTERS:
        counts = host_pile_counts(filters.get("host") or "")
        page = queue_page(**filters, per_page=2, pile_counts=counts)
        out.append((page.total, queue_rows(**filters).count()))
    return out


def test_the_stored_total_is_the_count_for_every_filter(hosts, reviewer):
    assert [stored for stored, _counted in _totals()] == [4, 3, 1, 0, 0, 4, 3]
    assert all(stored == counted for stored, counted in _totals())
    acme = Host.objects.get(name="acme")
    from lessons.models import Lesson

    members = Lesson.objects.filter(host=acme, subject="a", status="live").order_by("hash")
    lessons_retire(host=acme, hashes=[members[0].hash, members[1].hash], actor=reviewer, reason="dup")
    assert [stored for stored, _counted in _totals()] == [3, 2, 1, 0, 0, 3, 2]
    assert all(stored == counted for stored, counted in _totals())


def test_no_count_query_without_a_filter_but_the_host(hosts):
    assert host_pile_counts() == {"": 4} and host_pile_counts("acme") == {"acme": 3}
    assert host_pile_counts("empty") == {"empty": 0} and host_pile_counts("nowhere") == {}
    for filters, counted in ((FILTERS[0], False), (FILTERS[1], False), (FILTERS[5], True)):
        counts = host_pile_counts(filters.get("host") or "")
        with CaptureQueriesContext(connection) as captured:
            queue_page(**filters, per_page=2, pile_counts=counts)
        assert [("COUNT(" in q["sql"]) for q in captured] == ([True, False] if counted else [False]), filters
