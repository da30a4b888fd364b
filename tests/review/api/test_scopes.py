"""The token scoping matrix: host-scoped tokens stay on their host; each scope allows only its endpoints.

spec: review/api/endpoints.py (403: wrong scope or another host). Every refusal writes nothing.
"""

from __future__ import annotations

import json

import pytest

from lessons.models import Lesson
from review.api import errors as A
from review.models import DecisionAck
from review.services.budget import host_set_budget
from tests.builders import JAN_1_MS, lesson_line

FORBIDDEN_ALPHA = {"error": A.E_HOST.format(host="alpha"), "details": []}


@pytest.fixture
def alpha_token(hosts, make_token):
    return make_token(hosts["alpha"], name="alpha-only")


@pytest.fixture
def beta_decision(hosts, admin_user):
    return host_set_budget(
        host=hosts["beta"], actor=admin_user, max_active=3, budget_enabled=True, reason="more room"
    )


def test_host_token_reading_another_hosts_piles_is_403(call, alpha_token):
    response = call("get", "/piles?host=beta", token=alpha_token)
    assert (response.status_code, response.json()) == (403, FORBIDDEN_ALPHA)


def test_host_token_reading_another_hosts_lesson_is_403(call, alpha_token):
    response = call("get", "/lessons/" + "a" * 64 + "?host=beta", token=alpha_token)
    assert (response.status_code, response.json()) == (403, FORBIDDEN_ALPHA)


def test_host_token_reading_another_hosts_decisions_is_403(call, alpha_token, beta_decision):
    response = call("get", "/decisions?host=beta", token=alpha_token)
    assert (response.status_code, response.json()) == (403, FORBIDDEN_ALPHA)


def test_host_token_acking_another_hosts_decision_is_403(call, alpha_token, beta_decision):
    response = call(
        "post", f"/decisions/{beta_decision.seq}/ack", token=alpha_token, body={"status": "applied"}
    )
    assert (response.status_code, response.json()) == (403, FORBIDDEN_ALPHA)
    assert DecisionAck.objects.count() == 0


def test_host_token_ingesting_into_another_host_is_403_and_writes_nothing(call, alpha_token):
    body = "\n".join(
        [
            lesson_line(host="alpha", namespace="ns", subject="s", text="mine", created_at=JAN_1_MS),
            lesson_line(host="beta", namespace="ns", subject="s", text="theirs", created_at=JAN_1_MS),
        ]
    )
    response = call("post", "/ingest", token=alpha_token, body=body)
    assert response.status_code == 403
    assert response.json() == {
        "error": A.E_INGEST_HOSTS.format(host="alpha"),
        "details": ["line 2: host beta"],
    }
    assert Lesson.objects.count() == 0


def test_host_token_ingesting_with_skip_invalid_into_another_host_is_still_403(call, alpha_token):
    body = "\n".join(
        [
            lesson_line(host="alpha", namespace="ns", subject="s", text="mine", created_at=JAN_1_MS),
            lesson_line(host="beta", namespace="ns", subject="s", text="theirs", created_at=JAN_1_MS),
        ]
    )
    response = call("post", "/ingest?skip_invalid=1", token=alpha_token, body=body)
    assert response.status_code == 403
    assert Lesson.objects.count() == 0


def test_host_token_declaring_another_host_record_is_403(call, alpha_token):
    body = json.dumps({"type": "host", "name": "gamma", "max_active": 3})
    response = call("post", "/ingest", token=alpha_token, body=body)
    assert response.status_code == 403
    assert response.json()["details"] == ["line 1: host gamma"]


def test_host_token_with_another_default_host_is_403(call, alpha_token):
    response = call(
        "post",
        "/ingest?host=beta",
        token=alpha_token,
        body=lesson_line(host="alpha", namespace="ns", subject="s", text="t", created_at=JAN_1_MS),
    )
    assert (response.status_code, response.json()) == (403, FORBIDDEN_ALPHA)


def test_host_token_ingests_into_its_own_host(call, alpha_token):
    response = call(
        "post",
        "/ingest",
        token=alpha_token,
        body=lesson_line(host="alpha", namespace="ns", subject="s", text="t", created_at=JAN_1_MS),
    )
    assert response.status_code == 200
    assert Lesson.objects.count() == 1


def test_read_only_token_cannot_ingest(call, make_token, hosts):
    response = call(
        "post",
        "/ingest",
        token=make_token(ingest=False),
        body=lesson_line(host="alpha", namespace="ns", subject="s", text="t", created_at=JAN_1_MS),
    )
    assert (response.status_code, response.json()) == (
        403,
        {"error": "this token lacks the ingest scope", "details": []},
    )
    assert Lesson.objects.count() == 0


@pytest.mark.parametrize(
    "method,path",
    [("get", "/piles"), ("get", "/lessons/" + "a" * 64), ("get", "/decisions"), ("post", "/decisions/1/ack")],
)
def test_ingest_only_token_cannot_read(call, make_token, hosts, beta_decision, method, path):
    response = call(method, path, token=make_token(read=False), body={"status": "applied"})
    assert (response.status_code, response.json()) == (
        403,
        {"error": "this token lacks the read scope", "details": []},
    )
    assert DecisionAck.objects.count() == 0


def test_all_host_token_reads_every_host(call, make_token, hosts, beta_decision):
    response = call("get", "/decisions?host=beta", token=make_token())
    assert [d["seq"] for d in response.json()["decisions"]] == [beta_decision.seq]
