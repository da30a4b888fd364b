"""The hosts page and the shared layout (navigation, who is signed in, sign out, CSRF for htmx)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from tests.html import parse, table_rows

HOSTS_MAX_QUERIES = 6  # session, user, data version (ETag), the count of hosts, a page of them (with totals)


def test_the_hosts_page_counts_lessons_entities_and_piles(corpora, client, viewer):
    client.force_login(viewer)
    rows = table_rows(parse(client.get(reverse("review:hosts")).content), "hosts")
    assert rows == [
        [
            "adbuy-desk",
            "Ad-buy invoice capture agent (political ad contracts)",
            "max_active 8 · enabled",
            "15",
            "4",
            "1",
        ],
        [
            "support-triage",
            "Customer support triage agent; no budget stated yet",
            "max_active 8 · disabled",
            "11",
            "1",
            "\u2014",
        ],
        [
            "warehouse-sql",
            "SQL analytics agent for the revenue warehouse",
            "max_active 5 · enabled",
            "9",
            "2",
            "1",
        ],
    ]


def test_the_hosts_page_counts_in_a_fixed_number_of_queries(
    entity, client, viewer, django_assert_max_num_queries
):
    for i in range(4):
        entity(12, host=f"h{i}", subject=f"s{i}")
    client.force_login(viewer)
    with django_assert_max_num_queries(HOSTS_MAX_QUERIES):
        rows = table_rows(parse(client.get("/hosts/").content), "hosts")
    assert [r[3:] for r in rows] == [["12", "1", "1"]] * 4


def test_the_hosts_page_is_paged_by_name(entity, client, viewer, django_assert_max_num_queries):
    """Issue 25: the hosts page shows a page of hosts, not every host; its links page on by name."""
    for i in range(5):
        entity(9, host=f"h{i}", subject=f"s{i}")
    client.force_login(viewer)

    def names(url):
        page = parse(client.get(url).content)
        links = {a.text: a.attrs["href"] for a in page.find("nav", cls="pagination").find_all("a")}
        return [r[0] for r in table_rows(page, "hosts")], links

    first, links = names("/hosts/?per_page=2")
    assert first == ["h0", "h1"] and set(links) == {"next ›"}
    with django_assert_max_num_queries(HOSTS_MAX_QUERIES):
        second, links = names("/hosts/" + links["next ›"])
    assert second == ["h2", "h3"] and set(links) == {"‹ previous", "next ›"}
    third, links = names("/hosts/" + links["next ›"])
    assert third == ["h4"] and set(links) == {"‹ previous"}


def test_viewers_never_see_an_edit_budget_link(corpora, client, viewer):
    client.force_login(viewer)
    assert "Edit budget" not in client.get("/hosts/").content.decode()


def test_admins_see_an_edit_budget_link_on_every_host(corpora, client, admin_user):
    client.force_login(admin_user)
    links = [a for a in parse(client.get("/hosts/").content).find_all("a") if a.text == "Edit budget"]
    assert [a.attrs["href"] for a in links] == [
        "/hosts/adbuy-desk/budget/",
        "/hosts/support-triage/budget/",
        "/hosts/warehouse-sql/budget/",
    ]


@pytest.mark.parametrize(
    ("persona", "role"), [("viewer", "viewer"), ("reviewer", "reviewer"), ("admin_user", "admin")]
)
def test_the_top_bar_names_the_user_and_role(corpora, client, request, persona, role):
    user = request.getfixturevalue(persona)
    client.force_login(user)
    page = parse(client.get("/").content)
    assert page.find("span", "user").text == user.username
    assert page.find("span", "role").text == role


def test_the_nav_links_piles_and_hosts_and_decisions(corpora, client, viewer):
    client.force_login(viewer)
    nav = parse(client.get("/").content).find("nav", "mainnav")
    assert [(a.text, a.attrs["href"]) for a in nav.find_all("a")] == [
        ("Piles", "/"),
        ("Hosts", "/hosts/"),
        ("Decisions", "/decisions/"),
        ("Revisit", "/decisions/revisit/"),
    ]


def test_sign_out_is_a_post_form_and_htmx_carries_the_csrf_token(corpora, client, viewer):
    client.force_login(viewer)
    page = parse(client.get("/").content)
    form = page.find("form", action="/accounts/logout/")
    assert form.attrs["method"] == "post"
    assert form.find("input", name="csrfmiddlewaretoken") is not None
    headers = json.loads(page.find("body").attrs["hx-headers"])
    assert list(headers) == ["X-CSRFToken"] and len(headers["X-CSRFToken"]) == 64


def test_htmx_is_served_by_the_project_not_a_cdn(corpora, client, viewer):
    client.force_login(viewer)
    scripts = [s.attrs["src"] for s in parse(client.get("/").content).find_all("script")]
    assert scripts == ["/static/django_htmx/htmx-2.min.js", "/static/js/app.js", "/static/js/keyboard.js"]


def test_signing_out_ends_the_session(corpora, client, viewer):
    client.force_login(viewer)
    response = client.post("/accounts/logout/")
    assert (response.status_code, response["Location"]) == (302, "/accounts/login/")
    response = client.get("/")
    assert (response.status_code, response["Location"]) == (302, "/accounts/login/?next=/")
