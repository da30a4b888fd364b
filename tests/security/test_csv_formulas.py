"""CSV exports neutralise formulas (issue 13, fault 8): a cell starting with =, +, -, @, tab or CR gets a
leading apostrophe; JSONL stays byte-exact (the chain is verified from it)."""

from __future__ import annotations

import csv
import io
import json

import pytest

from lessons.core.text import lesson_hash
from review.log.exports import csv_cell
from tests.security.builders import HOST, ingest_records

REASONS = ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "Plain reason."]


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("=1+1", "'=1+1"),
        ("+1", "'+1"),
        ("-1", "'-1"),
        ("@x", "'@x"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("a=b", "a=b"),
        ("", ""),
        (7, 7),
    ],
)
def test_a_cell_is_neutralised_only_when_it_starts_with_a_formula_character(value, cell):
    assert csv_cell(value) == cell


@pytest.fixture
def hostile(reviewer):
    """Five retirements on entity ``@ops/=deploy`` with the REASONS (host-supplied names, reviewer reasons)."""
    from lessons.models import Host
    from review.services.decisions import lessons_retire

    records = [{"type": "host", "name": HOST, "max_active": 8, "budget_enabled": True}]
    for i in range(len(REASONS)):
        text = f"Rule {i} of the hostile entity."
        records.append(
            {
                "type": "lesson",
                "host": HOST,
                "namespace": "@ops",
                "subject": "=deploy",
                "text": text,
                "created_at": 1768435200000 + i,
                "hash": lesson_hash("@ops", "=deploy", text),
            }
        )
    ingest_records(records)
    host = Host.objects.get(name=HOST)
    for record, reason in zip(records[1:], REASONS, strict=True):
        lessons_retire(host=host, hashes=[record["hash"]], actor=reviewer, reason=reason)


def _download(client, user, url: str) -> str:
    client.force_login(user)
    return b"".join(client.get(url).streaming_content).decode()


def test_the_csv_export_neutralises_formula_cells(hostile, client, reviewer):
    rows = list(
        csv.DictReader(io.StringIO(_download(client, reviewer, "/review/decisions/export.csv"), newline=""))
    )
    assert [(r["namespace"], r["subject"], r["reason"]) for r in rows] == [
        ("'@ops", "'=deploy", '\'=HYPERLINK("http://x")'),
        ("'@ops", "'=deploy", "'+1+1"),
        ("'@ops", "'=deploy", "'-2+3"),
        ("'@ops", "'=deploy", "'@SUM(A1)"),
        ("'@ops", "'=deploy", "Plain reason."),
    ]


def test_the_jsonl_export_keeps_the_values_byte_exact(hostile, client, reviewer):
    from review.log.exports import record_json
    from review.models import Decision
    from review.services.chain import decision_record

    body = _download(client, reviewer, "/review/decisions/export.jsonl")
    assert body == "".join(record_json(decision_record(d)) + "\n" for d in Decision.objects.order_by("seq"))
    assert [json.loads(line)["reason"] for line in body.splitlines()] == REASONS
