"""``/host-names/``: the names a host search box offers (issue 25): prefix matches first, then names
containing the typed text, at most 20, escaped; two queries at most whatever the number of hosts."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lessons.models import Host
from review.hosts.selectors import HOST_NAMES_LIMIT, host_names_matching
from tests.html import parse

pytestmark = pytest.mark.django_db


@pytest.fixture
def hosts():
    names = [f"desk-{i:02d}" for i in range(30)] + ["ops-desk", "b.side", "aa-deskside"]
    Host.objects.bulk_create([Host(name=n) for n in names])
    return names


def test_prefix_matches_first_then_containing_at_most_the_limit(hosts):
    assert host_names_matching("ops") == ["ops-desk"]
    assert host_names_matching("side") == ["aa-deskside", "b.side"]
    found = host_names_matching("DESK")
    assert len(found) == HOST_NAMES_LIMIT == 20
    assert found == [f"desk-{i:02d}" for i in range(20)]  # case-insensitive; prefixes fill the list
    assert host_names_matching("desk-2")[:1] == ["desk-20"]
    assert host_names_matching("sk-0")[:2] == ["desk-00", "desk-01"]  # containing, when no prefix
    assert host_names_matching("desk-2") == [f"desk-{i}" for i in range(20, 30)]
    assert host_names_matching("eskside") == ["aa-deskside"]
    assert host_names_matching("nothing") == []
    assert host_names_matching("") == sorted(hosts)[:20]


def test_the_view_answers_options_in_two_queries_at_most(hosts, as_viewer):
    with CaptureQueriesContext(connection) as queries:
        response = as_viewer.get("/host-names/?host=b.s")
    options = parse(response.content).find_all("option")
    assert [o.attrs["value"] for o in options] == ["b.side"]
    assert len([q for q in queries if 'FROM "lessons_host"' in q["sql"]]) == 2  # prefixes, then the rest
    response = as_viewer.get('/host-names/?host="><x-inj>')
    assert response.status_code == 200 and b"x-inj" not in response.content
    response = as_viewer.get("/host-names/?host=%00desk-0")
    assert [o.attrs["value"] for o in parse(response.content).find_all("option")][:2] == [
        "desk-00",
        "desk-01",
    ]
