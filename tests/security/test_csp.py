"""Content-Security-Policy on every answer (issue 13, fault 6): ``default-src 'self'``, no 'unsafe-inline'."""

from __future__ import annotations

import pytest

POLICY = {
    "default-src": "'self'",
    "base-uri": "'none'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
    "object-src": "'none'",
}


def directives(header: str) -> dict[str, str]:
    """``"a x; b y"`` -> ``{"a": "x", "b": "y"}`` (django-csp does not promise an order)."""
    return dict(part.strip().split(" ", 1) for part in header.split(";"))


@pytest.mark.parametrize("url", ["/accounts/login/", "/", "/decisions/", "/api/v1/docs", "/admin/"])
def test_every_page_carries_the_strict_policy(client, admin_user, url):
    client.force_login(admin_user)
    response = client.get(url)
    assert directives(response["Content-Security-Policy"]) == POLICY


def test_the_sign_in_page_carries_it_before_anyone_signs_in(client):
    assert directives(client.get("/accounts/login/")["Content-Security-Policy"]) == POLICY


def test_htmx_is_told_not_to_inject_its_indicator_style(client, reviewer):
    client.force_login(reviewer)
    html = client.get("/").content.decode()
    assert '"includeIndicatorStyles":false' in html
    assert '<link rel="stylesheet" href="/static/css/htmx-indicators.css">' in html
