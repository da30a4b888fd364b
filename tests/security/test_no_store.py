"""Signed-in pages are never kept by a browser or a shared cache: ``Cache-Control: no-store`` (fault 6)."""

from __future__ import annotations

import pytest


def _directives(response) -> set[str]:
    return {part.strip() for part in response.get("Cache-Control", "").split(",") if part.strip()}


@pytest.mark.parametrize(
    "url", ["/", "/hosts/", "/decisions/", "/review/decisions/export.csv", "/review/decisions/export.jsonl"]
)
def test_a_signed_in_page_says_no_store(client, reviewer, url):
    client.force_login(reviewer)
    response = client.get(url)
    assert response.status_code == 200
    assert "no-store" in _directives(response)


def test_the_admin_says_no_store(client, admin_user):
    client.force_login(admin_user)
    assert "no-store" in _directives(client.get("/admin/"))


def test_a_redirect_to_sign_in_for_an_anonymous_visitor_is_left_alone(client):
    response = client.get("/hosts/")
    assert (response.status_code, "no-store" in _directives(response)) == (302, False)
