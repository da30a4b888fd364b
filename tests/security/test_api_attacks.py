"""Attacks on the JSON API: hostile bodies and headers get a 4xx with the error body, never a 500 or a
partial write; tokens cannot reach outside their host. spec: interchange.md (ingest), decisions.md
("Hosts apply decisions"); review/api/endpoints.py (status codes).
"""

from __future__ import annotations

import json

import pytest

from lessons.core.interchange import E_JSON_NUMBER_TOO_LONG, E_JSON_TOO_DEEP, E_LONE_SURROGATE
from lessons.models import Host, Lesson
from review.api.cursors import E_CURSOR
from review.api.errors import E_BAD_HOST, E_INVALID, E_UNAUTHORIZED
from review.models import DecisionAck
from review.services.acks import ACK_DETAIL_NOT_UNICODE
from tests.builders import JAN_1_MS, lesson_line
from tests.fixtures.api import call, hosts, make_token  # noqa: F401 (fixtures)

LINE = lesson_line(host="alpha", namespace="ns", subject="s", text="Keep leading zeros.", created_at=JAN_1_MS)


@pytest.fixture
def token(hosts, make_token):  # noqa: F811
    return make_token()


@pytest.fixture
def decision(hosts, reviewer, ingest):  # noqa: F811
    from review.services.decisions import lessons_retire

    assert ingest([json.loads(LINE)]).ok
    lesson = Lesson.objects.get()
    return lessons_retire(host=lesson.host, hashes=[lesson.hash], actor=reviewer, reason="Duplicate.")[0]


@pytest.mark.parametrize(
    ("body", "detail"),
    [
        (LINE.replace("1767225600000", "7" * 5000), f"body:1: json: {E_JSON_NUMBER_TOO_LONG}"),
        ("[" * 100_000, f"body:1: json: {E_JSON_TOO_DEEP}"),
        (LINE.replace("zeros.", "zeros \\ud800"), f"body:1: lesson.text: {E_LONE_SURROGATE}"),
    ],
    ids=["bigint", "deep", "surrogate"],
)
@pytest.mark.parametrize("scope", ["all-hosts", "host"])
def test_ingest_of_bytes_json_chokes_on_is_400_with_the_line(call, hosts, make_token, body, detail, scope):  # noqa: F811
    raw = make_token(host=hosts["alpha"] if scope == "host" else None)
    response = call("post", "/ingest", raw, body=(LINE.replace("zeros", "ones") + "\n" + body).encode())
    assert response.status_code == 400
    assert response.json()["details"] == [detail.replace("body:1", "body:2")]
    assert Lesson.objects.count() == 0


def test_a_default_host_with_a_trailing_newline_is_400(call, token):  # noqa: F811
    response = call("post", "/ingest?host=alpha%0A", token, body=LINE.encode())
    assert (response.status_code, response.json()) == (400, {"error": E_INVALID, "details": [E_BAD_HOST]})
    assert not Host.objects.filter(name="alpha\n").exists()


def test_a_piles_host_with_a_trailing_newline_is_400(call, token):  # noqa: F811
    response = call("get", "/piles?host=alpha%0A", token)
    assert (response.status_code, response.json()["details"]) == (400, [E_BAD_HOST])


def test_a_multipart_body_is_ingested_as_bytes_or_refused_never_a_500(call, token):  # noqa: F811
    response = call(
        "post", "/ingest", token, body=b"--x\r\n\r\n--x--", content_type="multipart/form-data; boundary=x"
    )
    assert response.status_code == 400
    assert Lesson.objects.count() == 0


def test_an_ack_detail_with_a_lone_surrogate_is_400_not_a_500(call, token, decision):  # noqa: F811
    body = '{"status": "failed", "detail": "broke \\ud800"}'
    response = call("post", f"/decisions/{decision.seq}/ack", token, body=body)
    assert response.status_code == 400
    assert response.json() == {"error": "invalid acknowledgement", "details": [ACK_DETAIL_NOT_UNICODE]}
    assert DecisionAck.objects.count() == 0


@pytest.mark.parametrize(
    "header",
    [
        "Bearer",
        "Bearer  ",
        "bearer lpr_x",
        "Token lpr_x",
        "Bearer lpr_\u00e9\u00e9",
        "Bearer " + "lpr_" + "a" * 5000,
    ],
)
def test_a_malformed_authorization_header_is_401(call, hosts, client, header):  # noqa: F811
    response = client.get("/api/v1/piles", HTTP_AUTHORIZATION=header)
    assert (response.status_code, response.json()["error"]) == (401, E_UNAUTHORIZED)


def test_a_token_of_host_a_cannot_ack_a_decision_of_host_b_even_twice(call, hosts, make_token, decision):  # noqa: F811
    beta = make_token(host=hosts["beta"])
    for _ in range(2):
        response = call("post", f"/decisions/{decision.seq}/ack", beta, body={"status": "applied"})
        assert response.status_code == 403
    assert DecisionAck.objects.count() == 0


def test_acking_twice_keeps_one_row_with_the_latest_status(call, token, decision):  # noqa: F811
    path = f"/decisions/{decision.seq}/ack"
    assert call("post", path, token, body={"status": "failed", "detail": "x"}).status_code == 200
    assert call("post", path, token, body={"status": "applied"}).status_code == 200
    assert list(DecisionAck.objects.values_list("status", "detail")) == [("applied", "")]


def test_a_get_on_the_ack_route_is_405(call, token, decision):  # noqa: F811
    response = call("get", f"/decisions/{decision.seq}/ack", token)
    assert response.status_code == 405


def test_a_content_length_shorter_than_the_body_reads_only_that_much_and_writes_nothing(client, token):  # noqa: F811
    body = (LINE + "\n" + LINE.replace("zeros", "ones")).encode()
    response = client.post(
        "/api/v1/ingest",
        data=body,
        content_type="application/x-ndjson",
        HTTP_AUTHORIZATION=f"Bearer {token}",
        CONTENT_LENGTH=str(len(LINE) + 20),
    )
    assert response.status_code == 400
    assert response.json()["details"][0].startswith("body:2: json: not valid JSON")
    assert Lesson.objects.count() == 0


@pytest.mark.parametrize("content_type", ["text/plain", "application/json", "application/octet-stream"])
def test_ingest_reads_the_body_whatever_its_content_type(call, token, content_type):  # noqa: F811
    response = call("post", "/ingest", token, body=LINE.encode(), content_type=content_type)
    assert (response.status_code, Lesson.objects.count()) == (200, 1)


@pytest.mark.parametrize(
    "cursor",
    [
        "WyJcdWQ4MDAiLCJhIiwiYiJd",  # ["\ud800","a","b"]: a lone surrogate no database can store
        "WyJhIiwiXHVkZmZmIiwiYiJd",  # ["a","\udfff","b"]
        "WyJhXHUwMDAwIiwiYSIsImIiXQ",  # ["a\u0000","a","b"]: a NUL PostgreSQL text cannot hold
    ],
)
def test_a_cursor_holding_text_no_database_can_store_is_400_not_a_500(call, token, cursor):  # noqa: F811
    response = call("get", f"/piles?cursor={cursor}", token=token)
    assert (response.status_code, response.json()) == (
        400,
        {"error": E_INVALID, "details": ["query.cursor: " + E_CURSOR]},
    )
