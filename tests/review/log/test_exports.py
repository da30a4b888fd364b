"""Exports of the decision log: JSONL and CSV, streamed, filtered like the page, and verifiable.

The chain is recomputed here from the export alone with hashlib and json, as decisions.md, "The record"
defines it, not with the project's chain_verify. spec: decisions.md, "Exports".
"""

from __future__ import annotations

import csv
import hashlib
import io
import json

import pytest

from lessons.core.text import lesson_hash
from review.models import Decision
from review.services.chain import decision_record
from review.services.decisions import lessons_retire
from tests.fixtures.log import at

FIELDS = [
    "seq", "at", "actor", "action", "host", "namespace", "subject", "lesson_hash", "lesson_id", "store",
    "draft_id", "created_hash", "batch", "reason_code", "reason", "evidence", "prev_hash", "hash",
]  # fmt: skip


def recompute_chain(records: list[dict]) -> None:
    """Assert every record's hash from decisions.md: sha256_hex(prev_hash + "\\n" + canonical)."""
    prev = ""
    for expected_seq, record in enumerate(records, start=1):
        assert record["seq"] == expected_seq
        assert record["prev_hash"] == prev
        body = {k: v for k, v in record.items() if k not in ("hash", "prev_hash")}
        canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        digest = hashlib.sha256((prev + "\n" + canonical).encode("utf-8")).hexdigest()
        assert record["hash"] == digest, f"seq {record['seq']}"
        prev = digest


def download(client, user, path):
    client.force_login(user)
    response = client.get(path)
    assert response.status_code == 200
    assert response.streaming
    return response, b"".join(response.streaming_content)


def build(two_hosts, budget_steps, reviewer, n):
    alpha, beta = two_hosts
    budget_steps(beta, n, code="other")
    hashes = [lesson_hash("ns", "s", f"rule {i}") for i in range(2)]
    lessons_retire(
        host=alpha,
        hashes=[hashes[0]],
        actor=reviewer,
        reason='says "always", then, never',
        now=at("2026-04-01"),
    )
    lessons_retire(
        host=alpha, hashes=[hashes[1]], actor=reviewer, reason="Überholt:\nline two ✓", reason_code="obsolete"
    )
    return hashes


@pytest.fixture
def many(two_hosts, budget_steps, reviewer):
    """302 decisions: 300 set_budget on beta, then two retires on alpha with awkward reasons."""
    return build(two_hosts, budget_steps, reviewer, 300)


@pytest.fixture
def few(two_hosts, budget_steps, reviewer):
    """7 decisions: 5 set_budget on beta, then two retires on alpha (seq 6 and 7) with awkward reasons."""
    return build(two_hosts, budget_steps, reviewer, 5)


def test_a_jsonl_export_of_many_decisions_verifies_independently(client, viewer, many):
    response, body = download(client, viewer, "/review/decisions/export.jsonl")
    assert response["Content-Type"] == "application/x-ndjson; charset=utf-8"
    assert response["Content-Disposition"].startswith('attachment; filename="decisions-')
    lines = body.decode("utf-8").split("\n")
    assert lines[-1] == ""
    records = [json.loads(line) for line in lines[:-1]]
    assert len(records) == 302
    assert all(list(r) == FIELDS for r in records)
    recompute_chain(records)


def test_jsonl_records_are_exactly_the_stored_records(client, viewer, few):
    _response, body = download(client, viewer, "/review/decisions/export.jsonl")
    records = [json.loads(line) for line in body.decode().splitlines()]
    assert records == [decision_record(d) for d in Decision.objects.order_by("seq")]
    assert records[-1]["reason"] == "Überholt:\nline two ✓"
    assert "Überholt" in body.decode("utf-8")  # non-ASCII kept as UTF-8, not escaped


def test_a_tampered_export_fails_the_recomputation(client, viewer, few):
    _response, body = download(client, viewer, "/review/decisions/export.jsonl")
    records = [json.loads(line) for line in body.decode().splitlines()]
    records[3]["reason"] = "something else"
    with pytest.raises(AssertionError, match="seq 4"):
        recompute_chain(records)


def test_the_csv_round_trips_to_the_jsonl_records(client, viewer, many):
    _r, jsonl = download(client, viewer, "/review/decisions/export.jsonl")
    response, body = download(client, viewer, "/review/decisions/export.csv")
    assert response["Content-Type"] == "text/csv; charset=utf-8"
    text = body.decode("utf-8")
    assert text.startswith(",".join(FIELDS) + "\r\n")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == FIELDS
    records = [json.loads(line) for line in jsonl.decode().splitlines()]
    assert len(records) == 302 and len(rows) == 1 + 302
    for row, record in zip(rows[1:], records, strict=True):
        parsed = dict(zip(FIELDS, row, strict=True))
        assert json.loads(parsed.pop("evidence")) == record["evidence"]
        assert int(parsed.pop("seq")) == record["seq"]
        for name, value in parsed.items():
            # null is an empty field (documented in review/log/exports.py)
            assert value == ("" if record[name] is None else record[name]), name


def test_csv_quotes_as_rfc_4180(client, viewer, few):
    _response, body = download(client, viewer, "/review/decisions/export.csv?actor=rita")
    text = body.decode("utf-8")
    assert '"says ""always"", then, never"' in text
    assert '"Überholt:\nline two ✓"' in text
    assert text.count("\r\n") == 3  # header and two rows; the newline inside a quoted reason stays \n


def test_exports_respect_the_page_filters(client, viewer, few):
    _response, body = download(
        client, viewer, "/review/decisions/export.jsonl?host=alpha&reason_code=obsolete"
    )
    records = [json.loads(line) for line in body.decode().splitlines()]
    assert [(r["seq"], r["action"], r["reason_code"]) for r in records] == [(7, "retire", "obsolete")]
    _response, body = download(client, viewer, "/review/decisions/export.csv?from=2026-04-01&to=2026-04-01")
    assert [row[0] for row in csv.reader(io.StringIO(body.decode(), newline=""))] == ["seq", "6"]


def test_exports_are_in_seq_order_whatever_the_page_sort(client, viewer, few):
    _response, body = download(client, viewer, "/review/decisions/export.jsonl?sort=-seq&host=alpha")
    assert [json.loads(line)["seq"] for line in body.decode().splitlines()] == [6, 7]


def test_an_export_with_an_invalid_filter_is_400(client, viewer, few):
    client.force_login(viewer)
    response = client.get("/review/decisions/export.csv?action=bogus")
    assert response.status_code == 400
    assert response.content.decode() == (
        "These filters are not valid: action: "
        "Select a valid choice. bogus is not one of the available choices."
    )


def test_exports_need_a_signed_in_user(outsider, few):
    response = outsider.get("/review/decisions/export.jsonl")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_an_export_runs_a_fixed_number_of_queries(client, viewer, few, django_assert_max_num_queries):
    client.force_login(viewer)
    with django_assert_max_num_queries(8):
        response = client.get("/review/decisions/export.csv")
        b"".join(response.streaming_content)


def test_an_empty_csv_export_is_the_header_row(client, viewer, db):
    _response, body = download(client, viewer, "/review/decisions/export.csv")
    assert body.decode() == ",".join(FIELDS) + "\r\n"
