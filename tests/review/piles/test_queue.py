"""The pile queue at "/": rows, empty states, filters, sorting, paging, htmx partials, query counts."""

from __future__ import annotations

import pytest
from django.urls import reverse

from review.piles.views import EMPTY_NO_BUDGET, EMPTY_NO_BUDGET_HINT, EMPTY_NO_MATCH, EMPTY_NOTHING_OVER
from tests.html import inline_text, parse, table_rows

ADBUY_ROW = [
    "adbuy-desk",
    "entity:desk.adbuy/invoice_capture",
    "10 / 8",
    "4",  # issue 22: facts (umbrellas not counted), then the restatements:
    "4",  # the members of those facts but one each (what "keep one of each fact" retires)
    "2",
    "5",
    "2",
    "1",
    "2",
    "\u2014",
    "1",
    "2",
]
WAREHOUSE_ROW = [
    "warehouse-sql",
    "entity:analytics/revenue_models",
    "8 / 5",
    "7",  # the facts the live members state
    "1",
    "3",
    "1",
    "1",
    "\u2014",
    "\u2014",
    "6",
    "1",
    "\u2014",
]
# The session, the user, the data version (the page's ETag), its and its groups' permissions (one query);
# the hosts with their pile counts (the total when no filter but the host is set); the page with its claims.
QUEUE_MAX_QUERIES = 6


def queue_rows(response) -> list[list[str]]:
    """The queue's rows without the last column (a relative age, which moves with the clock)."""
    return [row[:-1] for row in table_rows(parse(response.content), "queue-table")]


def empty_queue(response) -> tuple[set[str], str, list[str]]:
    """What an empty queue shows: the classes, the whole text and the links of its one empty-state box.
    Fails when the queue region has a table or a table row, or not exactly one empty-state box."""
    assert response.status_code == 200
    region = parse(response.content).find("section", id="queue")
    assert region.find("table") is None and region.find("tr") is None
    (box,) = region.find_all(cls="empty")
    return box.classes, inline_text(box), [a.attrs["href"] for a in box.find_all("a")]


@pytest.fixture
def signed_in(client, viewer):
    client.force_login(viewer)
    return client


def test_the_queue_lists_exactly_the_two_corpora_piles(corpora, signed_in):
    response = signed_in.get(reverse("review:queue"))
    assert response.status_code == 200
    # Worst first (finding 6): warehouse is over by 3, adbuy by 2.
    assert queue_rows(response) == [WAREHOUSE_ROW, ADBUY_ROW]


def test_each_row_links_to_its_pile_and_dates_its_oldest_member(corpora, signed_in):
    page = parse(signed_in.get("/").content)
    links = [
        a.attrs["href"]
        for a in page.find("table", "queue-table").find_all("a")
        if "/pile/" in a.attrs["href"]
    ]
    assert links == [
        "/pile/?host=warehouse-sql&namespace=analytics&subject=revenue_models",
        "/pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture",
        # adbuy's "Drafts pending" count links to its pile's drafts section.
        "/pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture#drafts",
    ]
    stamps = [t.attrs["datetime"] for t in page.find("table", "queue-table").find_all("time")]
    assert stamps == ["2026-01-15T00:00:00.000Z", "2026-01-15T00:00:00.000Z"]


def test_anonymous_visitors_are_sent_to_sign_in(corpora, outsider):
    response = outsider.get("/")
    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/"


def test_the_login_page_renders(outsider):
    response = outsider.get("/accounts/login/")
    assert response.status_code == 200
    assert parse(response.content).find("h1").text == "Sign in"


def test_no_budget_enabled_is_the_stated_reason_for_an_empty_queue(entity, signed_in):
    entity(5, enabled=False)
    assert empty_queue(signed_in.get("/")) == (
        {"empty", "empty-no_budget"},
        f"{EMPTY_NO_BUDGET} {EMPTY_NO_BUDGET_HINT} Go to Hosts.",
        ["/hosts/"],
    )


def test_nothing_over_budget_is_the_stated_reason_for_an_empty_queue(entity, signed_in):
    entity(2, max_active=2)
    assert empty_queue(signed_in.get("/")) == ({"empty", "empty-nothing_over"}, EMPTY_NOTHING_OVER, [])


@pytest.mark.parametrize("query", ["?q=no-such-words-anywhere", "?host=warehouse-sql&namespace=desk.adbuy"])
def test_filters_that_match_nothing_say_so(corpora, signed_in, query):
    assert empty_queue(signed_in.get("/" + query)) == ({"empty", "empty-no_match"}, EMPTY_NO_MATCH, [])


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("?host=warehouse-sql", [WAREHOUSE_ROW]),
        ("?host=adbuy-desk", [ADBUY_ROW]),
        ("?namespace=analytics", [WAREHOUSE_ROW]),
        ("?q=Gross+Amount", [ADBUY_ROW]),
        ("?q=is_internal", [WAREHOUSE_ROW]),
    ],
)
def test_filters_change_the_rows_exactly(corpora, signed_in, query, expected):
    assert queue_rows(signed_in.get("/" + query)) == expected


@pytest.mark.parametrize(
    ("sort", "hosts"),
    [
        ("count", ["warehouse-sql", "adbuy-desk"]),
        ("-count", ["adbuy-desk", "warehouse-sql"]),
        ("-overage", ["warehouse-sql", "adbuy-desk"]),
        ("-not_applied", ["warehouse-sql", "adbuy-desk"]),
        ("-host_name", ["warehouse-sql", "adbuy-desk"]),
        ("target", ["warehouse-sql", "adbuy-desk"]),
        ("-regressed", ["adbuy-desk", "warehouse-sql"]),
    ],
)
def test_sorting_orders_the_rows(corpora, signed_in, sort, hosts):
    assert [row[0] for row in queue_rows(signed_in.get(f"/?sort={sort}"))] == hosts


def test_sort_links_keep_the_filters_and_drop_the_page(corpora, signed_in):
    page = parse(signed_in.get("/?host=adbuy-desk&page=1").content)
    link = page.find("a", cls="sort", href="?host=adbuy-desk&sort=-count")  # counts: the most first
    assert link is not None
    assert link.attrs["hx-get"] == "?host=adbuy-desk&sort=-count"
    assert link.attrs["hx-push-url"] == "true"


def test_the_filter_form_keeps_the_current_sort(corpora, signed_in):
    page = parse(signed_in.get("/?sort=-count").content)
    form = page.find("form", cls="filters")
    assert form.find("input", name="sort").attrs["value"] == "-count"
    assert form.attrs["hx-get"] == "/" and form.attrs["action"] == "/"


def test_the_queue_pages_by_25(entity, signed_in):
    for i in range(27):
        entity(2, host=f"h{i:02d}", max_active=1)
    first = queue_rows(signed_in.get("/"))
    second = queue_rows(signed_in.get("/?page=2"))
    assert len(first) == 25 and [r[0] for r in second] == ["h25", "h26"]
    assert [r[0] for r in first] == [f"h{i:02d}" for i in range(25)]
    page = parse(signed_in.get("/?page=2").content)
    assert page.find(cls="page-info").text == "Page 2 of 2 · 27 rows"


def test_an_htmx_request_gets_only_the_queue_region(corpora, signed_in):
    response = signed_in.get("/?sort=-count", HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200
    assert body.lstrip().startswith('<section id="queue"')
    assert "<html" not in body and "<nav" not in body.split('class="pagination"')[0]
    assert [row[0] for row in queue_rows(response)] == ["adbuy-desk", "warehouse-sql"]
    assert "HX-Request" in response["Vary"]


def test_a_history_restore_request_gets_the_whole_page(corpora, signed_in):
    response = signed_in.get("/", HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true")
    assert response.content.decode().lstrip().lower().startswith("<!doctype html>")
    page = parse(response.content)
    assert page.find("nav") is not None and page.find("footer", cls="site-footer") is not None
    assert queue_rows(response) == [WAREHOUSE_ROW, ADBUY_ROW]  # worst first: over by 3, then by 2


@pytest.mark.parametrize("n", [3, 60])
def test_the_queue_query_count_does_not_grow_with_the_piles(
    entity, signed_in, django_assert_max_num_queries, n
):
    for i in range(3):
        entity(n, host=f"host{i}", max_active=2)
    with django_assert_max_num_queries(QUEUE_MAX_QUERIES):
        response = signed_in.get("/")
    assert len(queue_rows(response)) == 3
