"""The API answers its own JSON error body for any failure, never Django's HTML 500 (issue 13, fault 12)."""

from __future__ import annotations


def test_an_api_500_is_its_json_error_body(client, monkeypatch, db):
    import review.api.auth

    def broken(token):
        raise RuntimeError("boom")

    monkeypatch.setattr(review.api.auth, "token_authenticate", broken)
    response = client.get("/api/v1/piles", HTTP_AUTHORIZATION="Bearer x")
    assert (response.status_code, response["Content-Type"], response.json()) == (
        500,
        "application/json; charset=utf-8",
        {"error": "internal error", "details": ["the server failed; nothing was written"]},
    )


def test_a_database_that_is_down_is_a_json_503(client, monkeypatch):
    from django.db import OperationalError

    import review.api.auth

    def down(token):
        raise OperationalError('connection to server at "127.0.0.1", port 5432 failed: Connection refused')

    monkeypatch.setattr(review.api.auth, "token_authenticate", down)
    response = client.post(
        "/api/v1/ingest", data=b"{}", content_type="application/x-ndjson", HTTP_AUTHORIZATION="Bearer x"
    )
    assert (response.status_code, response["Retry-After"], response.json()) == (
        503,
        "60",
        {"error": "database unavailable", "details": ["try again later; nothing was written"]},
    )
