"""The decision log page: filters give exact rows, sorting and paging, host status from acks, the chart,
export links, access, and a query count that does not grow with the log. spec: decisions.md."""

from __future__ import annotations

import json

import pytest

from lessons.core.text import format_datetime, lesson_hash
from review.log.filters import DATE_RANGE_BACKWARDS
from review.models import DecisionAck
from review.services.budget import host_set_budget
from review.services.decisions import lessons_retire
from review.services.tokens import token_create
from tests.fixtures.log import at, row_seqs


@pytest.fixture
def log(two_hosts, admin_user, reviewer, second_reviewer):
    """Five decisions: 1, 2 set_budget beta (ada); 3 retire alpha (rita); 4 retire alpha (rob);
    5 set_budget alpha (ada)."""
    alpha, beta = two_hosts
    h = [lesson_hash("ns", "s", f"rule {i}") for i in range(3)]
    host_set_budget(
        host=beta,
        actor=admin_user,
        max_active=9,
        budget_enabled=False,
        reason="try 9",
        reason_code="other",
        now=at("2026-03-02"),
    )
    host_set_budget(
        host=beta,
        actor=admin_user,
        max_active=10,
        budget_enabled=False,
        reason="try 10",
        now=at("2026-03-09"),
    )
    lessons_retire(
        host=alpha,
        hashes=[h[0]],
        actor=reviewer,
        reason="restates rule 1",
        reason_code="duplicate",
        now=at("2026-03-10"),
    )
    lessons_retire(
        host=alpha,
        hashes=[h[1]],
        actor=second_reviewer,
        reason="no longer true",
        reason_code="obsolete",
        now=at("2026-03-17"),
    )
    host_set_budget(
        host=alpha,
        actor=admin_user,
        max_active=3,
        budget_enabled=True,
        reason="room for one more",
        reason_code="other",
        now=at("2026-03-17"),
    )
    return h


def page(client, user, query=""):
    client.force_login(user)
    response = client.get("/decisions/" + (f"?{query}" if query else ""))
    assert response.status_code == 200
    return response.content.decode()


def test_the_log_lists_every_decision_newest_first(client, viewer, log):
    assert row_seqs(page(client, viewer)) == [5, 4, 3, 2, 1]


@pytest.mark.parametrize(
    "query,seqs",
    [
        ("host=alpha", [5, 4, 3]),
        ("host=beta", [2, 1]),
        ("actor=rita", [3]),
        ("action=retire", [4, 3]),
        ("action=set_budget", [5, 2, 1]),
        ("reason_code=other", [5, 1]),
        ("reason_code=obsolete", [4]),
        ("from=2026-03-09&to=2026-03-10", [3, 2]),
        ("from=2026-03-17", [5, 4]),
        ("to=2026-03-02", [1]),
        ("host=alpha&action=retire&from=2026-03-11", [4]),
        ("host=beta&actor=rita", []),
    ],
)
def test_filters_give_exact_rows(client, viewer, log, query, seqs):
    assert row_seqs(page(client, viewer, query)) == seqs


def test_sorting_by_seq_ascending(client, viewer, log):
    assert row_seqs(page(client, viewer, "sort=seq")) == [1, 2, 3, 4, 5]


def test_sorting_by_actor_then_filter_keeps_both(client, viewer, log):
    assert row_seqs(page(client, viewer, "sort=actor&host=alpha")) == [5, 3, 4]  # ada, rita, rob


def test_an_invalid_filter_shows_its_error_and_no_rows(client, viewer, log):
    html = page(client, viewer, "action=bogus")
    assert "Select a valid choice. bogus is not one of the available choices." in html
    assert row_seqs(html) == []


def test_a_backwards_date_range_is_refused(client, viewer, log):
    html = page(client, viewer, "from=2026-03-10&to=2026-03-01")
    assert DATE_RANGE_BACKWARDS.replace("'", "&#x27;") in html
    assert row_seqs(html) == []


def test_an_htmx_request_gets_only_the_log_region(client, viewer, log):
    client.force_login(viewer)
    response = client.get("/decisions/?host=beta", headers={"HX-Request": "true"})
    html = response.content.decode()
    assert "<html" not in html
    assert html.lstrip().startswith('<section id="decision-log" data-region')
    assert row_seqs(html) == [2, 1]
    assert "HX-Request" in response["Vary"]


def test_a_history_restore_gets_the_whole_log_page(client, viewer, log):
    """The back button after the browser's cache lost the page asks with HX-History-Restore-Request:
    it gets the whole page (review/web/htmx.py), not the region alone."""
    client.force_login(viewer)
    headers = {"HX-Request": "true", "HX-History-Restore-Request": "true"}
    response = client.get("/decisions/?host=beta", headers=headers)
    html = response.content.decode()
    assert html.lstrip().startswith("<!doctype html>")
    assert row_seqs(html) == [2, 1]
    assert "HX-Request" in response["Vary"]


def test_rows_link_to_the_lesson_and_the_pile(client, viewer, log):
    html = page(client, viewer, "actor=rita")
    assert f'<a href="/lessons/alpha/{log[0]}/">{log[0][:8]}…</a>' in html
    assert '<a href="/pile/?host=alpha&amp;namespace=ns&amp;subject=s">entity:<wbr>ns/<wbr>s</a>' in html


def test_rows_show_reason_and_evidence(client, viewer, log):
    html = page(client, viewer, "actor=rita")
    assert '<span class="badge reason-code">duplicate</span> restates rule 1' in html
    assert "<summary>3/2 · not applied by the loop · recurred in 0 sessions</summary>" in html
    budget = page(client, viewer, "host=alpha&action=set_budget")
    assert "<summary>max_active 2 → 3 · budget on → on · piles 0 → 0</summary>" in budget


def test_reasons_are_escaped(client, viewer, two_hosts, admin_user):
    alpha, _beta = two_hosts
    host_set_budget(
        host=alpha, actor=admin_user, max_active=5, budget_enabled=True, reason="<script>alert(1)</script>"
    )
    html = page(client, viewer)
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def stamp(iso: str) -> str:
    """A UTC time as the log shows it: breakable between the date and the time of day."""
    day, clock = iso.split("T")
    return (
        f'<time datetime="{iso}"><span class="nowrap">{day}</span><wbr>'
        f'<span class="nowrap">T{clock}</span></time>'
    )


def test_an_ack_changes_the_host_status_on_the_page(client, viewer, log):
    _token, raw = token_create(name="alpha-puller", host=None, can_ingest=False, can_read=True)
    html = page(client, viewer, "actor=rita")
    assert '<span class="badge ack-waiting">awaiting the host</span>' in html
    api = client.post(
        "/api/v1/decisions/3/ack",
        data=json.dumps({"status": "failed", "detail": "store is read-only"}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    assert api.status_code == 200
    acked = format_datetime(DecisionAck.objects.get().acked_at)
    html = page(client, viewer, "actor=rita")
    assert (f'<span class="badge ack-failed">failed</span> {stamp(acked)}: store is read-only') in html
    client.post(
        "/api/v1/decisions/3/ack",
        data=json.dumps({"status": "applied"}),
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {raw}",
    )
    acked = format_datetime(DecisionAck.objects.get().acked_at)
    html = page(client, viewer, "actor=rita")
    assert f'<span class="badge ack-applied">applied</span> {stamp(acked)}' in html


def test_export_links_carry_the_filters(client, viewer, log):
    html = page(client, viewer, "host=alpha&action=retire&sort=seq&page=1")
    assert 'href="/review/decisions/export.jsonl?host=alpha&amp;action=retire"' in html
    assert 'href="/review/decisions/export.csv?host=alpha&amp;action=retire"' in html


def test_the_chart_stacks_reason_codes_per_week_per_host(client, viewer, log):
    html = page(client, viewer)
    assert '<title id="chart-1-title">Reason codes per week on alpha</title>' in html
    assert (
        '<desc id="chart-1-desc">3 decisions on alpha in the weeks of 2026-03-09 to 2026-03-16, stacked by '
        "reason code: duplicate 1, obsolete 1, other 1</desc>"
    ) in html
    assert '<title id="chart-2-title">Reason codes per week on beta</title>' in html
    assert "week of 2026-03-16: 1 × obsolete" in html
    assert (
        '<li><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" '
        'fill="#999999"/></svg> (no code): 1</li>' in html
    )


def test_the_chart_follows_the_filters(client, viewer, log):
    html = page(client, viewer, "host=beta")
    assert "Reason codes per week on alpha" not in html
    assert "Reason codes per week on beta" in html


def test_the_log_pages_by_fifty(client, viewer, two_hosts, budget_steps):
    _alpha, beta = two_hosts
    budget_steps(beta, 55)
    assert row_seqs(page(client, viewer)) == list(range(55, 5, -1))
    assert row_seqs(page(client, viewer, "page=2")) == [5, 4, 3, 2, 1]


def test_the_query_count_does_not_grow_with_the_log(
    client, viewer, two_hosts, budget_steps, django_assert_max_num_queries
):
    _alpha, beta = two_hosts
    client.force_login(viewer)
    budget_steps(beta, 3)
    with django_assert_max_num_queries(10):
        assert client.get("/decisions/").status_code == 200
    budget_steps(beta, 120)
    with django_assert_max_num_queries(10):
        assert client.get("/decisions/").status_code == 200
    with django_assert_max_num_queries(10):
        assert client.get("/decisions/?page=3&host=beta").status_code == 200


def test_an_outsider_is_sent_to_sign_in(outsider, log):
    response = outsider.get("/decisions/")
    assert (response.status_code, response["Location"]) == (302, "/accounts/login/?next=/decisions/")


def test_a_user_without_a_role_is_refused(client, log, django_user_model):
    client.force_login(django_user_model.objects.create_user("nobody"))
    assert client.get("/decisions/").status_code == 403


def test_a_draft_decision_links_to_the_draft_and_its_pile(client, viewer, reviewer, corpora):
    from lessons.models import Draft
    from review.services.consolidation import draft_reject

    draft = Draft.objects.get(ext_id="rec-adbuy-consolidate-0")
    draft_reject(draft=draft, actor=reviewer, reason="keeps a contract number", reason_code="too_specific")
    html = page(client, viewer, "action=reject_consolidation")
    assert (
        '<span class="target-part"><a href="/pile/?host=adbuy-desk&amp;namespace=desk.adbuy&amp;'
        'subject=invoice_capture">entity:<wbr>desk.adbuy/<wbr>invoice_capture</a></span>'
        '<span class="target-part">draft <span class="id">'
        '<a href="/drafts/adbuy-desk/rec-adbuy-consolidate-0/">rec-adbuy-consolidate-0</a></span></span>'
    ) in html
