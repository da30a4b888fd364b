"""The OpenAPI schema declares what the API checks (issue 13, fault 13): the host and hash patterns and the
acknowledgement status values. The API's own checks and messages stay as they are."""

from __future__ import annotations

import pytest

HOST_PATTERN = "^[a-z0-9][a-z0-9._-]{0,63}$"
HASH_PATTERN = "^[0-9a-f]{64}$"


@pytest.fixture
def schema(client):
    return client.get("/api/v1/openapi.json").json()


def _parameter(schema: dict, path: str, method: str, name: str) -> dict:
    (found,) = [p for p in schema["paths"][path][method]["parameters"] if p["name"] == name]
    return found["schema"]


@pytest.mark.parametrize(
    ("path", "method"),
    [
        ("/api/v1/ingest", "post"),
        ("/api/v1/piles", "get"),
        ("/api/v1/lessons/{lesson_hash}", "get"),
        ("/api/v1/decisions", "get"),
    ],
)
def test_every_host_parameter_declares_the_host_pattern(schema, path, method):
    assert _parameter(schema, path, method, "host")["pattern"] == HOST_PATTERN


def test_the_lesson_hash_declares_its_pattern(schema):
    assert (
        _parameter(schema, "/api/v1/lessons/{lesson_hash}", "get", "lesson_hash")["pattern"] == HASH_PATTERN
    )


def test_the_ack_status_declares_its_two_values(schema):
    assert schema["components"]["schemas"]["AckIn"]["properties"]["status"]["enum"] == ["applied", "failed"]


def test_the_api_still_answers_its_own_message_for_a_bad_host(client, db):
    from review.services.tokens import token_create

    raw = token_create(name="t", host=None, can_ingest=False, can_read=True)[1]
    response = client.get("/api/v1/piles?host=Bad!", HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert (response.status_code, response.json()) == (
        400,
        {"error": "invalid request", "details": [f"host must match {HOST_PATTERN}"]},
    )
