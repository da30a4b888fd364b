"""A 405 names the allowed methods in ``Allow``, on the pages and the API (issue 13, fault 13)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("method", "url", "allow"),
    [
        ("get", "/pile/retire/", "POST"),
        ("put", "/decisions/", "GET"),
        ("delete", "/imports/altimate/", "GET, POST"),
    ],
)
def test_a_page_405_names_the_allowed_methods(client, admin_user, method, url, allow):
    client.force_login(admin_user)
    response = getattr(client, method)(url)
    assert (response.status_code, response["Allow"]) == (405, allow)


@pytest.mark.parametrize(
    ("method", "url", "allow"),
    [
        ("get", "/api/v1/ingest", "POST"),
        ("delete", "/api/v1/piles", "GET"),
        ("put", "/api/v1/decisions/1/ack", "POST"),
    ],
)
def test_an_api_405_names_the_allowed_methods_in_its_json_error(client, method, url, allow):
    response = getattr(client, method)(url)
    assert (response.status_code, response["Allow"], response.json()) == (
        405,
        allow,
        {"error": "method not allowed", "details": [f"allowed: {allow}"]},
    )
