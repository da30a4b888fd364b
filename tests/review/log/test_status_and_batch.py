"""Finding 10 (issue 12): the decision log filters by host status (awaiting, applied, failed) and shows
each decision's batch, linked to the log of that batch alone; the exports follow both filters."""

from __future__ import annotations

import json

import pytest

from lessons.core.text import lesson_hash
from review.services.acks import decision_ack
from review.services.budget import host_set_budget
from review.services.decisions import lessons_retire
from tests.fixtures.log import at, row_seqs
from tests.html import parse


@pytest.fixture
def batches(two_hosts, reviewer, admin_user):
    """Decisions 1-2: one retire of two alpha lessons (one batch); 3: a set_budget of beta. Acks: 1
    applied, 2 failed, 3 none. Returns the two batch ids (the retire's, the budget's)."""
    alpha, beta = two_hosts
    hashes = [lesson_hash("ns", "s", f"rule {i}") for i in range(2)]
    retired = lessons_retire(
        host=alpha, hashes=hashes, actor=reviewer, reason="same rule", now=at("2026-03-10")
    )
    budget = host_set_budget(
        host=beta, actor=admin_user, max_active=9, budget_enabled=False, reason="try 9", now=at("2026-03-11")
    )
    decision_ack(decision=retired[0], status="applied")
    decision_ack(decision=retired[1], status="failed", detail="store is read-only")
    return retired[0].batch, budget.batch


def page(client, user, query=""):
    client.force_login(user)
    response = client.get("/decisions/" + (f"?{query}" if query else ""))
    assert response.status_code == 200
    return response.content.decode()


@pytest.mark.parametrize(
    "query,seqs",
    [("status=awaiting", [3]), ("status=applied", [1]), ("status=failed", [2]), ("", [3, 2, 1])],
)
def test_the_host_status_filter_gives_exact_rows(client, viewer, batches, query, seqs):
    assert row_seqs(page(client, viewer, query)) == seqs


def test_an_unknown_host_status_is_a_filter_error(client, viewer, batches):
    html = page(client, viewer, "status=lost")
    assert row_seqs(html) == []
    assert "status: Select a valid choice. lost is not one of the available choices." in html


def test_the_host_status_filter_is_offered_with_its_three_words(client, viewer, batches):
    select = parse(page(client, viewer)).find("select", name="status")
    options = [(o.attrs["value"], o.text) for o in select.find_all("option")]
    assert options == [
        ("", "any host status"),
        ("awaiting", "awaiting the host"),
        ("applied", "applied"),
        ("failed", "failed"),
    ]


def test_each_row_shows_its_batch_linked_to_that_batch_alone(client, viewer, batches):
    retire_batch, budget_batch = batches
    html = parse(page(client, viewer))
    links = {
        int(tr.attrs["data-seq"]): tr.find("a", cls="batch")
        for tr in html.find("table", cls="decision-log").find("tbody").find_all("tr")
    }
    assert {seq: a.text for seq, a in links.items()} == {
        1: f"batch {retire_batch[:8]}",
        2: f"batch {retire_batch[:8]}",
        3: f"batch {budget_batch[:8]}",
    }
    assert links[1].attrs["href"] == f"/decisions/?batch={retire_batch}"
    batch_page = page(client, viewer, f"batch={retire_batch}")
    assert row_seqs(batch_page) == [2, 1]
    assert f"Batch {retire_batch} only: the records of one submission." in parse(batch_page).find(
        data_testid="batch-only"
    ).text.replace("\n", " ")


def test_batch_and_status_combine_and_the_exports_follow_them(client, viewer, batches):
    retire_batch, _ = batches
    query = f"batch={retire_batch}&status=failed"
    html = page(client, viewer, query)
    assert row_seqs(html) == [2]
    assert f'href="/review/decisions/export.jsonl?batch={retire_batch}&amp;status=failed"' in html
    body = b"".join(client.get(f"/review/decisions/export.jsonl?{query}").streaming_content)
    assert [json.loads(line)["seq"] for line in body.splitlines()] == [2]


def test_the_log_query_count_is_the_same_with_the_new_filters(
    client, viewer, batches, django_assert_max_num_queries
):
    client.force_login(viewer)
    client.get("/decisions/")
    retire_batch, budget_batch = batches
    with django_assert_max_num_queries(10):  # tests/review/log/test_log_page.py's budget
        response = client.get(f"/decisions/?status=awaiting&batch={budget_batch}")
    # the count is of a page that answered, with the rows the filters give
    assert response.status_code == 200
    assert row_seqs(response.content.decode()) == [3]
    with django_assert_max_num_queries(10):
        response = client.get(f"/decisions/?status=failed&batch={retire_batch}")
    assert response.status_code == 200
    assert row_seqs(response.content.decode()) == [2]
