"""The host page (/hosts/<name>/): every entity of one host against its budget, counted in one query;
the hosts page links each host to it; a queue filtered to a host whose budget is off says why it is empty.
spec: docs/piles-and-recurrence.md rules 1-4."""

from __future__ import annotations

from django.urls import reverse

from review.piles.views import EMPTY_HOST_NO_BUDGET, EMPTY_HOST_NO_BUDGET_HINT
from tests.html import parse, table_rows

# session, user, permissions (2), the host with its counts, the row count, the page of rows, the newest
# restatement marks; the host over time (issue 24): its newest exposure and correction, then (with
# sessions) the weeks' sessions, corrections and decisions
HOST_PAGE_MAX_QUERIES = 12


def host_page(client, user, name: str, query: str = ""):
    client.force_login(user)
    return client.get(reverse("review:host", args=[name]) + query)


def test_the_host_page_lists_every_entity_against_the_budget(client, viewer, entity):
    entity(4, subject="orders", max_active=3)
    entity(3, subject="refunds", max_active=3)
    entity(1, subject="audit", max_active=3)
    page = parse(host_page(client, viewer, "qa-host").content)
    assert table_rows(page, "host-entities") == [
        ["entity:qa/orders", "4 / 3", "over budget by 1", "4"],
        ["entity:qa/refunds", "3 / 3", "within budget", "3"],
        ["entity:qa/audit", "1 / 3", "within budget", "1"],
    ]
    links = [
        tr.find("a").attrs["href"] for tr in page.find("table", "host-entities").find("tbody").find_all("tr")
    ]
    assert links == [
        "/pile/?host=qa-host&namespace=qa&subject=orders",
        "/pile/?host=qa-host&namespace=qa&subject=refunds",
        "/pile/?host=qa-host&namespace=qa&subject=audit",
    ]


def test_a_host_with_its_budget_off_shows_budget_off_and_a_neutral_gauge(client, viewer, entity):
    entity(5, max_active=3, enabled=False)
    page = parse(host_page(client, viewer, "qa-host").content)
    assert table_rows(page, "host-entities") == [["entity:qa/orders", "5 / 3", "budget off", "5"]]
    gauge = page.find(cls="gauge")
    assert "gauge-off" in gauge.classes
    assert gauge.attrs["title"] == "5 live of a budget of 3 (budget off)"


def test_retracted_lessons_count_in_all_lessons_not_against_the_budget(client, viewer, reviewer, entity):
    from lessons.models import Host
    from review.services.decisions import lessons_retire

    hashes = entity(4, max_active=3)
    lessons_retire(
        host=Host.objects.get(name="qa-host"), hashes=hashes[:2], actor=reviewer, reason="restated"
    )
    page = parse(host_page(client, viewer, "qa-host").content)
    assert table_rows(page, "host-entities") == [["entity:qa/orders", "2 / 3", "within budget", "4"]]


def test_the_host_page_counts_in_a_fixed_number_of_queries(
    client, viewer, entity, django_assert_max_num_queries
):
    for i in range(6):
        entity(4, subject=f"s{i}", max_active=2)
    client.force_login(viewer)
    with django_assert_max_num_queries(HOST_PAGE_MAX_QUERIES):
        response = client.get(reverse("review:host", args=["qa-host"]))
    assert len(table_rows(parse(response.content), "host-entities")) == 6


def test_an_unknown_host_is_a_404_that_names_it(client, viewer, db):
    response = host_page(client, viewer, "nope")
    assert response.status_code == 404
    assert (
        parse(response.content).find("section", cls="problem").find("p").text
        == "There is no host named 'nope'."
    )


def test_the_hosts_page_links_every_host_to_its_page(client, viewer, entity):
    entity(3, host="on-host", max_active=2)
    entity(3, host="off-host", enabled=False)
    client.force_login(viewer)
    page = parse(client.get(reverse("review:hosts")).content)
    names = [
        tr.find("td").find("a").attrs["href"]
        for tr in page.find("table", "hosts").find("tbody").find_all("tr")
    ]
    assert names == ["/hosts/off-host/", "/hosts/on-host/"]


def test_a_queue_filtered_to_a_host_with_its_budget_off_says_why_it_is_empty(client, viewer, entity):
    entity(5, host="on-host", max_active=2)
    entity(5, host="off-host", enabled=False)
    client.force_login(viewer)
    page = parse(client.get("/?host=off-host").content)
    assert page.find(cls="empty-title").text == EMPTY_HOST_NO_BUDGET.format(host="off-host")
    assert page.find(cls="empty-title").text == "Host off-host has no budget enabled, so it has no piles."
    hint = page.find(cls="empty").find("p", cls="muted")
    assert hint.text == f"{EMPTY_HOST_NO_BUDGET_HINT} Host off-host ."
    assert hint.find("a").attrs["href"] == "/hosts/off-host/"


def test_the_namespace_filter_is_a_case_insensitive_contains_match(client, viewer, entity):
    entity(3, namespace="desk.AdBuy", max_active=2)
    client.force_login(viewer)
    page = parse(client.get("/?namespace=adbuy").content)
    assert [tr.find("td").text for tr in page.find("table", "queue-table").find("tbody").find_all("tr")] == [
        "qa-host"
    ]
    assert "Namespace contains" in [
        label.text for label in page.find("form", cls="filters").find_all("label")
    ]


def test_a_first_click_on_over_sorts_the_most_over_first(client, viewer, entity):
    client.force_login(viewer)
    entity(3, host="a-host", max_active=2)
    page = parse(client.get("/").content)
    header = page.find("th", cls="over")
    assert header.find("a").attrs["href"] == "?sort=-overage"
