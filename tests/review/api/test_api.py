"""Contract tests of the JSON API: status codes and exact bodies of every endpoint. spec: decisions.md,
interchange.md, docs/piles-and-recurrence.md ("JSON output"); review/api/endpoints.py (the error table)."""

from __future__ import annotations

import json

import pytest
from django.test import override_settings

from lessons.core.text import format_datetime, lesson_hash
from lessons.ingest.passes import ingest_sources
from lessons.ingest.reading import bytes_source
from lessons.models import Host, Lesson
from lessons.selectors.piles import piles_json
from review.api import errors as A
from review.api.cursors import E_CURSOR as CURSOR_REFUSED
from review.api.endpoints import api
from review.models import ApiToken, Decision, DecisionAck
from review.services.acks import ACK_ALREADY_APPLIED, ACK_DETAIL_NUL
from review.services.budget import host_set_budget
from review.services.chain import decision_record
from review.services.decisions import lessons_retire
from review.services.tokens import token_revoke
from tests.builders import JAN_1_MS, lesson_line

UNAUTHORIZED = {"error": A.E_UNAUTHORIZED, "details": [A.E_UNAUTHORIZED_DETAIL]}

ENDPOINTS = [
    ("post", "/ingest"),
    ("get", "/piles"),
    ("get", "/lessons/" + "a" * 64),
    ("get", "/decisions"),
    ("post", "/decisions/1/ack"),
]


def three_lessons(host: str, subject: str = "s") -> bytes:
    return "\n".join(
        lesson_line(host=host, namespace="ns", subject=subject, text=f"rule {i}", created_at=JAN_1_MS + i)
        for i in range(3)
    ).encode()


def ingest_body(body: bytes):
    report = ingest_sources(sources=[bytes_source(body, name="body")])
    assert report.ok, report.error_lines()
    return report


# --- authentication ----------------------------------------------------------------------------


@pytest.mark.parametrize("method,path", ENDPOINTS)
def test_no_token_is_401_with_the_error_body(hosts, call, method, path):
    response = call(method, path, body={"status": "applied"})
    assert response.status_code == 401
    assert response.json() == UNAUTHORIZED
    assert response["WWW-Authenticate"] == "Bearer"


@pytest.mark.parametrize("method,path", ENDPOINTS)
def test_unknown_token_is_401(hosts, call, method, path):
    response = call(method, path, token="lpr_not-a-real-token", body={"status": "applied"})
    assert (response.status_code, response.json()) == (401, UNAUTHORIZED)


def test_revoked_token_is_401(hosts, call, make_token):
    raw = make_token()
    assert call("get", "/piles", token=raw).status_code == 200
    token_revoke(token=ApiToken.objects.get(), actor=None)
    assert (call("get", "/piles", token=raw).status_code, call("get", "/piles", token=raw).json()) == (
        401,
        UNAUTHORIZED,
    )


def test_a_token_is_stored_as_its_sha256_only(hosts, make_token):
    import hashlib

    raw = make_token(name="alpha-host")
    token = ApiToken.objects.get()
    assert token.token_hash == hashlib.sha256(raw.encode()).hexdigest()
    assert token.prefix == raw[:12]
    assert raw not in json.dumps(list(ApiToken.objects.values()), default=str)


def test_a_used_token_records_when(hosts, call, make_token):
    raw = make_token()
    assert ApiToken.objects.get().last_used_at is None
    call("get", "/piles", token=raw)
    assert ApiToken.objects.get().last_used_at is not None


def test_the_api_is_not_redirected_to_the_login_page(db, client):
    assert client.get("/api/v1/openapi.json").status_code == 200
    assert client.get("/api/v1/docs").status_code == 200
    assert client.get("/api/v1/piles").status_code == 401


def test_the_schema_names_every_endpoint(db, client):
    schema = client.get("/api/v1/openapi.json").json()
    assert sorted(schema["paths"]) == [
        "/api/v1/decisions",
        "/api/v1/decisions/{seq}/ack",
        "/api/v1/ingest",
        "/api/v1/jobs/{job_id}",
        "/api/v1/lessons/{lesson_hash}",
        "/api/v1/piles",
    ]
    assert schema["info"]["version"] == "1"


# --- ingest ------------------------------------------------------------------------------------


def test_ingest_returns_the_same_report_as_the_service(hosts, call, make_token):
    body = three_lessons("alpha")
    response = call("post", "/ingest", token=make_token(), body=body, content_type="application/x-ndjson")
    assert response.status_code == 200
    assert response.json() == {
        "ok": True,
        "dry_run": False,
        "written": True,
        "lines": 3,
        "counts": {"lesson": {"created": 3, "unchanged": 0, "updated": 0, "held": 0, "rejected": 0}},
        "error_count": 0,
        "errors": [],
        "held": [],
        "notes": [],
    }
    assert Lesson.objects.filter(host__name="alpha").count() == 3
    again = call("post", "/ingest", token=make_token(), body=body, content_type="application/x-ndjson")
    assert again.json()["counts"] == {
        "lesson": {"created": 0, "unchanged": 3, "updated": 0, "held": 0, "rejected": 0}
    }


def test_ingest_of_an_invalid_batch_is_400_with_the_report_and_writes_nothing(hosts, call, make_token):
    body = three_lessons("alpha") + b'\n{"type": "lesson", "host": "alpha"}\n'
    response = call("post", "/ingest", token=make_token(), body=body, content_type="application/x-ndjson")
    assert response.status_code == 400
    payload = response.json()
    assert payload["error"] == A.E_INGEST_REFUSED.format(n=1)
    assert payload["details"] == [
        f"body:4: {e['field']}: {e['message']}" for e in payload["report"]["errors"]
    ]
    assert payload["report"]["written"] is False
    assert payload["report"]["error_count"] == 1
    assert Lesson.objects.count() == 0


def test_ingest_skip_invalid_writes_the_valid_lines(hosts, call, make_token):
    body = three_lessons("alpha") + b"\nnot json\n"
    response = call("post", "/ingest?skip_invalid=1", token=make_token(), body=body)
    assert response.status_code == 200
    assert (response.json()["written"], response.json()["error_count"]) == (True, 1)
    assert Lesson.objects.count() == 3


def test_ingest_dry_run_writes_nothing(hosts, call, make_token):
    response = call("post", "/ingest?dry_run=1", token=make_token(), body=three_lessons("alpha"))
    assert response.status_code == 200
    assert (response.json()["dry_run"], response.json()["written"]) == (True, False)
    assert response.json()["counts"]["lesson"]["created"] == 3
    assert Lesson.objects.count() == 0


def test_ingest_host_parameter_is_the_default_host(hosts, call, make_token):
    line = json.dumps({"type": "lesson", "namespace": "ns", "subject": "s", "text": "t", "created_at": 1})
    response = call("post", "/ingest?host=beta", token=make_token(), body=line)
    assert response.status_code == 200
    assert list(Lesson.objects.values_list("host__name", flat=True)) == ["beta"]


def test_a_host_token_ingests_records_without_a_host_into_its_host(hosts, call, make_token):
    line = json.dumps({"type": "lesson", "namespace": "ns", "subject": "s", "text": "t", "created_at": 1})
    response = call("post", "/ingest", token=make_token(hosts["alpha"]), body=line)
    assert response.status_code == 200
    assert list(Lesson.objects.values_list("host__name", flat=True)) == ["alpha"]


def test_an_empty_body_is_refused_never_written(hosts, call, make_token):
    """issue 13, fault 1: an empty batch is refused (it once answered "written": true)."""
    from review.request_body import E_EMPTY_BATCH

    response = call("post", "/ingest", token=make_token(), body=b"")
    assert (response.status_code, response.json()) == (400, {"error": E_EMPTY_BATCH, "details": []})


# --- body size -----------------------------------------------------------------------------------


@override_settings(API_MAX_BODY_BYTES=100)
def test_a_body_over_the_limit_is_413_and_nothing_is_read(hosts, call, make_token):
    response = call("post", "/ingest", token=make_token(), body=three_lessons("alpha"))
    assert response.status_code == 413
    assert response.json() == {"error": "request body too large", "details": ["limit is 100 bytes"]}
    assert Lesson.objects.count() == 0


@override_settings(API_MAX_BODY_BYTES=100)
def test_an_ack_body_over_the_limit_is_413(hosts, call, make_token):
    response = call(
        "post", "/decisions/1/ack", token=make_token(), body={"status": "failed", "detail": "x" * 200}
    )
    assert response.status_code == 413
    assert response.json() == {"error": "request body too large", "details": ["limit is 100 bytes"]}


@override_settings(API_MAX_BODY_BYTES=200)
def test_a_body_at_the_limit_is_accepted(hosts, call, make_token):
    line = lesson_line(host="alpha", namespace="ns", subject="s", text="t", created_at=JAN_1_MS).encode()
    body = line + b" " * (200 - len(line))
    assert len(body) == 200
    assert call("post", "/ingest", token=make_token(), body=body).status_code == 200


def test_django_refusing_a_big_body_is_413_too(hosts, rf, make_token):
    from django.core.exceptions import RequestDataTooBig

    response = api.on_exception(rf.post("/api/v1/ingest"), RequestDataTooBig())
    assert response.status_code == 413
    assert json.loads(response.content)["error"] == "request body too large"


# --- piles ---------------------------------------------------------------------------------------


def test_piles_returns_piles_json(hosts, call, make_token):
    ingest_body(three_lessons("alpha") + b"\n" + three_lessons("beta"))
    response = call("get", "/piles", token=make_token())
    assert response.status_code == 200
    assert response.json() == {**json.loads(json.dumps(piles_json())), "next": None}
    assert [p["host"] for p in response.json()["piles"]] == ["alpha", "beta"]


def test_piles_of_one_host(hosts, call, make_token):
    ingest_body(three_lessons("alpha") + b"\n" + three_lessons("beta"))
    response = call("get", "/piles?host=beta", token=make_token())
    assert [p["host"] for p in response.json()["piles"]] == ["beta"]


def test_a_host_token_sees_only_its_host_piles(hosts, call, make_token):
    ingest_body(three_lessons("alpha") + b"\n" + three_lessons("beta"))
    response = call("get", "/piles", token=make_token(hosts["beta"]))
    assert response.json() == {**json.loads(json.dumps(piles_json(host="beta"))), "next": None}


def test_a_bad_host_parameter_is_400(hosts, call, make_token):
    response = call("get", "/piles?host=Not%20a%20host", token=make_token())
    assert response.status_code == 400
    assert response.json() == {"error": A.E_INVALID, "details": [A.E_BAD_HOST]}


def _pile_keys(body: dict) -> list[str]:
    return [p["host"] + "/" + p["subject"] for p in body["piles"]]


def test_piles_page_with_limit_and_cursor(hosts, call, make_token):
    ingest_body(b"\n".join(three_lessons(h, subject=s) for h in ("alpha", "beta") for s in ("s1", "s2")))
    token = make_token()
    first = call("get", "/piles?limit=3", token=token).json()
    assert _pile_keys(first) == ["alpha/s1", "alpha/s2", "beta/s1"]
    assert first["next"] is not None
    second = call("get", f"/piles?limit=3&cursor={first['next']}", token=token).json()
    assert (_pile_keys(second), second["next"]) == (["beta/s2"], None)
    exact = call("get", "/piles?limit=4", token=token).json()  # a full last page says no more
    assert (len(exact["piles"]), exact["next"]) == (4, None)


def test_a_pile_retired_below_budget_does_not_shift_the_next_page(hosts, call, make_token, reviewer):
    ingest_body(b"\n".join(three_lessons(h, subject=s) for h in ("alpha", "beta") for s in ("s1", "s2")))
    token = make_token()
    first = call("get", "/piles?limit=2", token=token).json()
    assert _pile_keys(first) == ["alpha/s1", "alpha/s2"]
    # alpha/s1 leaves the queue (2 live = the budget) and a new pile lands before the cursor
    gone = lesson_hash("ns", "s1", "rule 0")
    lessons_retire(host=hosts["alpha"], hashes=[gone], actor=reviewer, reason="duplicate of rule 1")
    ingest_body(three_lessons("alpha", subject="s0"))
    second = call("get", f"/piles?limit=2&cursor={first['next']}", token=token).json()
    assert (_pile_keys(second), second["next"]) == (["beta/s1", "beta/s2"], None)


@pytest.mark.parametrize(
    "query,detail",
    [
        ("limit=0", "query.limit: Input should be greater than or equal to 1"),
        ("limit=501", "query.limit: Input should be less than or equal to 500"),
        ("limit=ten", "query.limit: Input should be a valid integer, unable to parse string as an integer"),
        ("cursor=%25%25", "query.cursor: " + CURSOR_REFUSED),
        ("cursor=bm90IGpzb24", "query.cursor: " + CURSOR_REFUSED),  # base64 of "not json"
        ("cursor=WyJhIiwiYiJd", "query.cursor: " + CURSOR_REFUSED),  # ["a","b"]: two parts, not three
        ("cursor=", "query.cursor: " + CURSOR_REFUSED),
    ],
)
def test_a_bad_limit_or_cursor_is_400_naming_the_parameter(hosts, call, make_token, query, detail):
    response = call("get", f"/piles?{query}", token=make_token())
    assert (response.status_code, response.json()) == (400, {"error": A.E_INVALID, "details": [detail]})


# --- one lesson ----------------------------------------------------------------------------------


def test_lesson_returns_status_verdicts_versions_recurrence(hosts, call, make_token):
    records = [
        {
            "type": "lesson",
            "host": "alpha",
            "namespace": "ns",
            "subject": "s",
            "text": "Old text",
            "created_at": "2026-01-01T00:00:00Z",
            "lesson_id": "L-1",
            "store": "team",
            "status": "superseded",
        },
        {
            "type": "lesson",
            "host": "alpha",
            "namespace": "ns",
            "subject": "s",
            "text": "New text",
            "created_at": "2026-01-02T00:00:00Z",
            "lesson_id": "L-1",
            "store": "team",
        },
        {
            "type": "verdict",
            "host": "alpha",
            "lesson_id": "L-1",
            "store": "team",
            "verdict": "held",
            "metric": "acc",
            "baseline": 0.5,
            "current": 0.75,
            "measured_at": "2026-01-05T00:00:00Z",
        },
    ]
    ingest_body("\n".join(json.dumps(r) for r in records).encode())
    new = lesson_hash("ns", "s", "New text")
    old = lesson_hash("ns", "s", "Old text")
    response = call("get", f"/lessons/{new}", token=make_token())
    assert response.status_code == 200
    assert response.json() == {
        "host": "alpha",
        "hash": new,
        "namespace": "ns",
        "subject": "s",
        "target": "entity:ns/s",
        "text": "New text",
        "status": "live",
        "kind": "lesson",
        "lesson_id": "L-1",
        "store": "team",
        "origin": None,
        "created_at": "2026-01-02T00:00:00.000Z",
        "superseded_by": None,
        "consolidates": [],
        "verdict": "held",
        "recurrence": {
            "sessions_shown": 0,
            "recurred": 0,
            "recurred_sessions": 0,
            "during": 0,
            "unknown": 0,
            "ambiguous": 0,
            "earlier_version": 0,
        },
        "verdicts": [
            {
                "verdict": "held",
                "metric": "acc",
                "baseline": 0.5,
                "current": 0.75,
                "horizon_ms": None,
                "measured_at": "2026-01-05T00:00:00.000Z",
            }
        ],
        "versions": [
            {
                "hash": old,
                "status": "superseded",
                "created_at": "2026-01-01T00:00:00.000Z",
                "text": "Old text",
            },
            {"hash": new, "status": "live", "created_at": "2026-01-02T00:00:00.000Z", "text": "New text"},
        ],
        "decisions": [],
    }


def test_lesson_lists_its_decisions(hosts, call, make_token, reviewer):
    ingest_body(three_lessons("alpha"))
    h = lesson_hash("ns", "s", "rule 0")
    (decision,) = lessons_retire(
        host=hosts["alpha"], hashes=[h], actor=reviewer, reason="duplicate of rule 1"
    )
    body = call("get", f"/lessons/{h}", token=make_token()).json()
    assert body["status"] == "retracted"
    assert body["decisions"] == [
        {"seq": decision.seq, "at": format_datetime(decision.at), "action": "retire", "actor": "rita"}
    ]


def test_an_unknown_lesson_is_404(hosts, call, make_token):
    response = call("get", "/lessons/" + "a" * 64, token=make_token())
    assert response.status_code == 404
    assert response.json() == {"error": "not found", "details": [f"no lesson {'a' * 64} on any host"]}


def test_a_malformed_hash_is_400(hosts, call, make_token):
    response = call("get", "/lessons/abc", token=make_token())
    assert response.status_code == 400
    assert response.json() == {"error": A.E_INVALID, "details": [A.E_BAD_HASH]}


def test_a_hash_on_two_hosts_needs_a_host_parameter(hosts, call, make_token):
    ingest_body(three_lessons("alpha") + b"\n" + three_lessons("beta"))
    h = lesson_hash("ns", "s", "rule 0")
    response = call("get", f"/lessons/{h}", token=make_token())
    assert response.status_code == 409
    assert response.json() == {"error": A.E_LESSON_AMBIGUOUS.format(hash=h), "details": ["alpha", "beta"]}
    chosen = call("get", f"/lessons/{h}?host=beta", token=make_token())
    assert (chosen.status_code, chosen.json()["host"]) == (200, "beta")


def test_a_host_token_reads_its_own_copy_of_a_shared_hash(hosts, call, make_token):
    ingest_body(three_lessons("alpha") + b"\n" + three_lessons("beta"))
    h = lesson_hash("ns", "s", "rule 0")
    response = call("get", f"/lessons/{h}", token=make_token(hosts["beta"]))
    assert (response.status_code, response.json()["host"]) == (200, "beta")


def test_a_host_token_gets_404_for_a_lesson_only_on_another_host(hosts, call, make_token):
    ingest_body(three_lessons("alpha"))
    h = lesson_hash("ns", "s", "rule 0")
    response = call("get", f"/lessons/{h}", token=make_token(hosts["beta"]))
    assert response.status_code == 404
    assert response.json() == {"error": "not found", "details": [f"no lesson {h} on host beta"]}


# --- decisions -----------------------------------------------------------------------------------


@pytest.fixture
def logged(hosts, admin_user):
    """Four set_budget decisions: alpha, beta, alpha, beta (seq 1..4)."""
    out = []
    for i, host in enumerate(["alpha", "beta", "alpha", "beta"]):
        out.append(
            host_set_budget(
                host=hosts[host],
                actor=admin_user,
                max_active=10 + i,
                budget_enabled=True,
                reason=f"budget step {i}",
            )
        )
    return out


def _receipt(last) -> dict:
    """The chain head receipt of a log that ends with decision ``last``, sealed as the server seals it."""
    from review.services.chain_head import head_seal

    head = {"seq": last.seq, "hash": last.hash, "at": format_datetime(last.at)}
    return {**head, "mac": head_seal(**head)}


def test_decisions_since_returns_the_records_after_it(logged, call, make_token):
    response = call("get", "/decisions?since=1", token=make_token())
    assert response.status_code == 200
    assert response.json() == {
        "decisions": [decision_record(d) for d in logged[1:]],
        "next_since": 4,
        "has_more": False,
        "head": _receipt(logged[-1]),  # issue 13, fault 5: a host can tell a cut tail; issue 21, fault 10
        "outcomes": {},  # issue 24: none computed yet (derived, beside the records)
    }


def test_decisions_page_with_limit(logged, call, make_token):
    raw = make_token()
    first = call("get", "/decisions?limit=3", token=raw).json()
    assert ([d["seq"] for d in first["decisions"]], first["next_since"], first["has_more"]) == (
        [1, 2, 3],
        3,
        True,
    )
    rest = call("get", f"/decisions?since={first['next_since']}&limit=3", token=raw).json()
    assert ([d["seq"] for d in rest["decisions"]], rest["next_since"], rest["has_more"]) == ([4], 4, False)
    empty = call("get", "/decisions?since=4", token=raw).json()
    assert empty == {
        "decisions": [],
        "next_since": 4,
        "has_more": False,
        "head": first["head"],
        "outcomes": {},
    }


def test_a_host_token_reads_only_its_host_decisions(logged, call, make_token, hosts):
    response = call("get", "/decisions", token=make_token(hosts["beta"]))
    assert [d["seq"] for d in response.json()["decisions"]] == [2, 4]


def test_decisions_of_one_host(logged, call, make_token):
    response = call("get", "/decisions?host=alpha", token=make_token())
    assert [d["seq"] for d in response.json()["decisions"]] == [1, 3]


@pytest.mark.parametrize(
    "query,detail",
    [
        ("limit=10001", "query.limit: Input should be less than or equal to 10000"),
        ("limit=0", "query.limit: Input should be greater than or equal to 1"),
        ("since=-1", "query.since: Input should be greater than or equal to 0"),
        ("since=x", "query.since: Input should be a valid integer, unable to parse string as an integer"),
    ],
)
def test_bad_decision_parameters_are_400(logged, call, make_token, query, detail):
    response = call("get", f"/decisions?{query}", token=make_token())
    assert response.status_code == 400
    assert response.json() == {"error": "invalid request", "details": [detail]}


# --- acknowledgements ----------------------------------------------------------------------------


def test_ack_applied(logged, call, make_token):
    response = call(
        "post", "/decisions/2/ack", token=make_token(name="beta-puller"), body={"status": "applied"}
    )
    assert response.status_code == 200
    ack = DecisionAck.objects.get()
    assert response.json() == {
        "seq": 2,
        "status": "applied",
        "detail": "",
        "acked_at": format_datetime(ack.acked_at),
        "head": _receipt(logged[-1]),  # the receipt a host keeps (issue 21, fault 10)
    }
    assert (ack.decision.seq, ack.token_name) == (2, "beta-puller")


def test_ack_failed_then_applied_keeps_the_latest(logged, call, make_token):
    raw = make_token()
    failed = call(
        "post", "/decisions/1/ack", token=raw, body={"status": "failed", "detail": "budget file locked"}
    )
    assert (failed.status_code, failed.json()["status"], failed.json()["detail"]) == (
        200,
        "failed",
        "budget file locked",
    )
    call("post", "/decisions/1/ack", token=raw, body={"status": "applied"})
    assert list(DecisionAck.objects.values_list("decision__seq", "status", "detail")) == [(1, "applied", "")]


def test_a_failed_ack_of_an_applied_decision_is_409_and_the_applied_ack_stays(logged, call, make_token):
    raw = make_token(name="beta-puller")
    call("post", "/decisions/1/ack", token=raw, body={"status": "applied"})
    kept = DecisionAck.objects.values_list("status", "detail", "acked_at", "token_name").get()
    response = call(
        "post", "/decisions/1/ack", token=make_token(name="late"), body={"status": "failed", "detail": "gone"}
    )
    assert response.status_code == 409
    assert response.json() == {
        "error": "acknowledgement kept",
        "details": [ACK_ALREADY_APPLIED.format(seq=1)],
    }
    assert DecisionAck.objects.values_list("status", "detail", "acked_at", "token_name").get() == kept
    again = call("post", "/decisions/1/ack", token=raw, body={"status": "applied", "detail": "twice"})
    assert (again.status_code, again.json()["detail"]) == (200, "twice")


def test_ack_with_a_bad_status_is_400(logged, call, make_token):
    response = call("post", "/decisions/1/ack", token=make_token(), body={"status": "done"})
    assert response.status_code == 400
    assert response.json() == {
        "error": "invalid acknowledgement",
        "details": ['status must be "applied" or "failed"'],
    }
    assert DecisionAck.objects.count() == 0


def test_ack_with_a_nul_in_its_detail_or_an_unknown_key_is_400(logged, call, make_token):
    """The attacker's finding 9: the NUL was dropped silently and an unknown key accepted; ingest refuses
    both."""
    nul = call("post", "/decisions/1/ack", token=make_token(), body={"status": "failed", "detail": "a\x00b"})
    assert (nul.status_code, nul.json()) == (
        400,
        {"error": "invalid acknowledgement", "details": [ACK_DETAIL_NUL]},
    )
    extra = call("post", "/decisions/1/ack", token=make_token(), body={"status": "applied", "extra": 1})
    assert extra.status_code == 400 and extra.json()["error"] == "invalid request"
    assert "extra" in json.dumps(extra.json()["details"])
    assert DecisionAck.objects.count() == 0


def test_ack_without_a_body_is_400(logged, call, make_token):
    response = call("post", "/decisions/1/ack", token=make_token(), body=b"not json")
    assert response.status_code == 400
    assert response.json() == {"error": "invalid request", "details": ["Cannot parse request body"]}


def test_ack_of_an_unknown_decision_is_404(logged, call, make_token):
    response = call("post", "/decisions/99/ack", token=make_token(), body={"status": "applied"})
    assert response.status_code == 404
    assert response.json() == {"error": "not found", "details": ["no decision 99"]}


def test_decisions_are_never_changed_by_an_ack(logged, call, make_token):
    before = [decision_record(d) for d in Decision.objects.order_by("seq")]
    call("post", "/decisions/1/ack", token=make_token(), body={"status": "applied"})
    assert [decision_record(d) for d in Decision.objects.order_by("seq")] == before


def test_hosts_are_untouched_by_reads(logged, call, make_token):
    call("get", "/piles", token=make_token())
    assert Host.objects.get(name="alpha").max_active == 12


def test_bearer_calls_need_no_csrf_token(hosts, make_token):
    from django.test import Client

    strict = Client(enforce_csrf_checks=True)
    response = strict.post(
        "/api/v1/ingest",
        data=three_lessons("alpha"),
        content_type="application/x-ndjson",
        HTTP_AUTHORIZATION=f"Bearer {make_token()}",
    )
    assert (response.status_code, response.json()["counts"]) == (
        200,
        {"lesson": {"created": 3, "unchanged": 0, "updated": 0, "held": 0, "rejected": 0}},
    )
    assert Lesson.objects.filter(host__name="alpha").count() == 3


def test_a_wrong_method_is_405_with_the_error_body(hosts, call, make_token):
    response = call("get", "/ingest", token=make_token())
    assert response.status_code == 405
    assert response.json() == {"error": "method not allowed", "details": ["allowed: POST"]}


@pytest.mark.parametrize("path", ["/nope", "/", "/decisions/1/nope"])
def test_an_unknown_api_path_is_404_with_the_error_body(db, client, path):
    response = client.get("/api/v1" + path)
    assert response.status_code == 404
    assert response.json() == {"error": "not found", "details": [f"no such endpoint: /api/v1{path}"]}
