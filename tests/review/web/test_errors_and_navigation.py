"""Error pages in the house layout (403 says who you are and that a role is missing; 404; 400), the
navigation (admins: Import and Admin; everyone: the API in the footer) and the favicon."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.html import parse

FORBIDDEN = "You are signed in as {user} (role {role}). This page or action needs a role you do not have."


def test_a_viewer_opening_the_budget_editor_is_told_a_role_is_missing(client, viewer, entity):
    entity(3)
    client.force_login(viewer)
    response = client.get(reverse("review:host_budget", args=["qa-host"]))
    assert response.status_code == 403
    page = parse(response.content)
    problem = page.find("section", cls="problem")
    assert problem.find("h1").text == "Not allowed"
    assert problem.find("p").text == FORBIDDEN.format(user="vera", role="viewer")
    back = problem.find("a", href=reverse("review:queue"))
    assert back.text == "Back to Piles"
    assert page.find("header", cls="topbar") is not None  # the house layout, not Django's bare page


def test_a_reviewer_posting_a_budget_is_told_a_role_is_missing(client, reviewer, entity):
    entity(3)
    client.force_login(reviewer)
    response = client.post(reverse("review:host_budget", args=["qa-host"]), {"max_active": "4", "save": "1"})
    assert response.status_code == 403
    assert FORBIDDEN.format(user="rita", role="reviewer") in parse(response.content).find("main").text


def test_a_user_without_a_role_is_shown_as_having_none(client, django_user_model, db):
    client.force_login(django_user_model.objects.create_user("nobody"))
    response = client.get(reverse("review:decisions"))
    assert response.status_code == 403
    assert FORBIDDEN.format(user="nobody", role="none") in parse(response.content).find("main").text


def test_an_unknown_address_is_a_404_page_in_the_house_layout(client, viewer):
    client.force_login(viewer)
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    problem = parse(response.content).find("section", cls="problem")
    assert [p.text for p in problem.find_all("p")] == [
        "There is no page at /no/such/page/ .",
        "Back to Piles",
    ]


def test_a_bad_request_is_a_400_page_in_the_house_layout(rf, viewer):
    from django.views.defaults import bad_request

    request = rf.get("/")
    request.user = viewer
    response = bad_request(request, exception=None)
    assert response.status_code == 400
    assert parse(response.content).find("h1").text == "Bad request"
    assert "The address or the form could not be read." in response.content.decode()


def nav_links(client, user) -> list[str]:
    client.force_login(user)
    nav = parse(client.get(reverse("review:queue")).content).find("nav", cls="mainnav")
    return [a.text for a in nav.find_all("a")]


def test_admins_see_import_and_admin_in_the_navigation(client, admin_user):
    admin_user.is_staff = True  # as manage.py demo creates the admin role
    admin_user.save(update_fields=["is_staff"])
    assert nav_links(client, admin_user) == ["Piles", "Hosts", "Decisions", "Revisit", "Import", "Admin"]


@pytest.mark.parametrize("persona", ["viewer", "reviewer"])
def test_viewers_and_reviewers_see_the_three_pages(client, persona, request):
    assert nav_links(client, request.getfixturevalue(persona)) == ["Piles", "Hosts", "Decisions", "Revisit"]


def test_everyone_signed_in_finds_the_api_in_the_footer(client, viewer):
    client.force_login(viewer)
    footer = parse(client.get(reverse("review:hosts")).content).find("footer", cls="site-footer")
    assert footer.find("a").attrs["href"] == "/api/v1/docs"
    assert footer.find("a").text == "API"


def test_a_server_error_is_a_plain_page_in_the_house_style(rf):
    from django.views.defaults import server_error

    response = server_error(rf.get("/"))
    assert response.status_code == 500
    page = parse(response.content)
    assert page.find("h1").text == "Server error"
    assert page.find("link", rel="stylesheet").attrs["href"] == "/static/css/app.css"
