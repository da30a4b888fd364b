"""The queue's recurring column: sortable, and a filter for piles with recurring members.

spec: docs/piles-and-recurrence.md ("recurring": recurred_sessions >= 2); docs/piles-and-recurrence.md (which entities are piles).
"""

from __future__ import annotations

import pytest

from tests.builders import host, lesson
from tests.html import parse, table_rows
from tests.lessons.recurrence.builders import ENTITY, OCT_1


@pytest.fixture
def three_piles(corpora, ingest):
    """The two corpora piles (each has a recurring member) and a pile on host qa without recurrence."""
    records = [host(name="qa", max_active=1, budget_enabled=True)]
    records += [
        lesson(host="qa", **ENTITY, text=f"Check order field {i} twice before saving.", created_at=OCT_1)
        for i in range(3)
    ]
    assert ingest(records).ok


@pytest.fixture
def signed_in(client, viewer):
    client.force_login(viewer)
    return client


def hosts(response) -> list[str]:
    assert response.status_code == 200
    return [row[0] for row in table_rows(parse(response.content), "queue-table")]


def recurring_column(response) -> list[str]:
    table = parse(response.content).find("table", cls="queue-table")
    headers = [th.text for th in table.find("thead").find_all("th")]
    index = next(i for i, name in enumerate(headers) if name.startswith("Recurring"))
    return [row[index] for row in table_rows(parse(response.content), "queue-table")]


def test_without_the_filter_every_pile_is_listed(three_piles, signed_in):
    # Worst first: warehouse over by 3; adbuy and qa over by 2, adbuy with more lessons (10 to 3).
    assert hosts(signed_in.get("/")) == ["warehouse-sql", "adbuy-desk", "qa"]


def test_the_filter_keeps_only_piles_with_recurring_members(three_piles, signed_in):
    assert hosts(signed_in.get("/?recurring=on")) == ["warehouse-sql", "adbuy-desk"]


def test_the_filter_combines_with_the_host_filter(three_piles, signed_in):
    page = parse(signed_in.get("/?recurring=on&host=qa").content)
    assert page.find("table", cls="queue-table") is None
    assert "No pile matches these filters." in page.text


def test_the_recurring_column_sorts_both_ways(three_piles, signed_in):
    assert recurring_column(signed_in.get("/?sort=recurring")) == ["\u2014", "1", "1"]
    assert hosts(signed_in.get("/?sort=recurring")) == ["qa", "adbuy-desk", "warehouse-sql"]
    assert hosts(signed_in.get("/?sort=-recurring"))[-1] == "qa"


def test_the_filter_is_a_checkbox_in_the_queue_form(three_piles, signed_in):
    form = parse(signed_in.get("/?recurring=on").content).find("form", cls="filters")
    box = form.find("input", name="recurring")
    assert (box.attrs["type"], "checked" in box.attrs) == ("checkbox", True)
