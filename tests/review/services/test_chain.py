"""The decision record, its hash chain, verify_decisions and the exports. spec: decisions.md."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from lessons.models import Host, Lesson
from review.models import ChainHead, Decision
from review.services.budget import host_set_budget
from review.services.chain import (
    RECORD_FIELDS,
    canonical_json,
    chain_verify,
    decision_record,
    decisions_verify,
    record_hash,
)
from review.services.decisions import lesson_restore, lessons_retire
from tests.fixtures.decisions import NOW

DECISIONS_DOC = Path(__file__).resolve().parents[3] / "docs" / "decisions.md"


def spec_fields() -> list[str]:
    """The record's fields as docs/decisions.md, "The record" lists them: the first column of its first
    table, in order (a row naming several, "`namespace`, `subject`", gives each)."""
    section = DECISIONS_DOC.read_text(encoding="utf-8").split("## The record", 1)[1]
    table = section.split("| field |", 1)[1].split("\n\n", 1)[0]
    rows = [line.split("|")[1] for line in table.splitlines() if line.startswith("| `")]
    return [name for row in rows for name in re.findall(r"`([a-z_]+)`", row)]


SPEC_FIELDS = spec_fields()
ZERO_RECURRENCE = {
    "sessions_shown": 0,
    "recurred": 0,
    "recurred_sessions": 0,
    "during": 0,
    "unknown": 0,
    "ambiguous": 0,
    "earlier_version": 0,
}
REASON = "Doppelt — gleiche Regel ✓"


def independent_hash(prev_hash: str, record: dict) -> str:
    """decisions.md, "The record", re-implemented with nothing but hashlib and json."""
    body = {k: v for k, v in record.items() if k not in ("hash", "prev_hash")}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256((prev_hash + "\n" + canonical).encode("utf-8")).hexdigest()


def independent_verify(records: list[dict]) -> None:
    prev = ""
    for number, record in enumerate(records, start=1):
        assert record["seq"] == number
        assert record["prev_hash"] == prev
        assert record["hash"] == independent_hash(prev, record)
        prev = record["hash"]


@pytest.fixture
def four_decisions(pile, reviewer, admin_user):
    """Two retirements in one batch (seq 1-2), a restore (3), a budget change (4)."""
    host = Host.objects.get(name="acme")
    lessons_retire(
        host=host, hashes=pile[:2], actor=reviewer, reason=REASON, reason_code="duplicate", now=NOW
    )
    lesson_restore(lesson=Lesson.objects.get(hash=pile[1]), actor=reviewer, reason="Wrong one", now=NOW)
    host_set_budget(host=host, actor=admin_user, max_active=4, budget_enabled=None, reason="Room", now=NOW)
    return pile


def test_record_has_exactly_the_spec_fields_in_order(four_decisions):
    assert list(RECORD_FIELDS) == SPEC_FIELDS
    assert list(decision_record(Decision.objects.get(seq=1))) == SPEC_FIELDS


def test_first_record_values(four_decisions):
    record = decision_record(Decision.objects.get(seq=1))
    batch = record.pop("batch")
    digest = record.pop("hash")
    assert len(batch) == 32 and int(batch, 16) >= 0
    assert record == {
        "seq": 1,
        "at": "2026-03-01T12:00:00.123Z",
        "actor": "rita",
        "action": "retire",
        "host": "acme",
        "namespace": "desk.test",
        "subject": "invoice_capture",
        "lesson_hash": four_decisions[0],
        "lesson_id": None,
        "store": None,
        "draft_id": None,
        "created_hash": None,
        "reason_code": "duplicate",
        "reason": REASON,
        "evidence": {"count": 5, "max_active": 3, "verdict": "held", "recurrence": ZERO_RECURRENCE},
        "prev_hash": "",
    }
    assert digest == independent_hash("", {**record, "batch": batch})


def test_hash_of_record_one_is_recomputed_independently(four_decisions):
    record = decision_record(Decision.objects.get(seq=1))
    assert record["hash"] == independent_hash("", record)
    assert record["hash"] == record_hash("", record)


def test_canonical_json_keeps_non_ascii_and_sorts_keys():
    assert canonical_json({"b": "—", "a": 1, "hash": "x", "prev_hash": "y"}) == '{"a":1,"b":"—"}'


def test_each_record_links_to_the_previous_hash(four_decisions):
    records = [decision_record(d) for d in Decision.objects.order_by("seq")]
    independent_verify(records)
    head = ChainHead.objects.get(id=1)
    assert (head.seq, head.hash) == (4, records[-1]["hash"])


def test_set_budget_record_has_no_entity_and_before_after_evidence(four_decisions):
    record = decision_record(Decision.objects.get(seq=4))
    assert (record["action"], record["namespace"], record["subject"], record["lesson_hash"]) == (
        "set_budget",
        None,
        None,
        None,
    )
    assert record["evidence"] == {
        "before": {"max_active": 3, "budget_enabled": True},
        "after": {"max_active": 4, "budget_enabled": True},
        "piles_before": 1,  # four live lessons over a budget of 3
        "piles_after": 0,  # four is within a budget of 4
    }


def test_verify_decisions_reports_an_intact_chain(four_decisions):
    out = io.StringIO()
    call_command("verify_decisions", stdout=out)
    assert out.getvalue() == "chain intact: 4 decisions\n"


def test_verify_decisions_on_an_empty_log(db):
    out = io.StringIO()
    call_command("verify_decisions", stdout=out)
    assert out.getvalue() == "chain intact: 0 decisions\n"


def test_verify_decisions_finds_a_tampered_reason(four_decisions):
    Decision.objects.filter(seq=2).update(reason="Nothing happened")
    with pytest.raises(CommandError) as exc:
        call_command("verify_decisions")
    assert (exc.value.returncode, str(exc.value)) == (1, "chain broken at seq 2")
    assert decisions_verify() == (2, 2)


def test_verify_finds_a_deleted_record(four_decisions):
    records = [decision_record(d) for d in Decision.objects.order_by("seq")]
    assert chain_verify([records[0], records[2], records[3]]) == 2


def test_verify_finds_a_rehashed_record_whose_successor_no_longer_links(four_decisions):
    records = [decision_record(d) for d in Decision.objects.order_by("seq")]
    records[0]["reason"] = "forged"
    records[0]["hash"] = independent_hash("", records[0])
    assert chain_verify(records) == 2


def export(*args: str) -> str:
    out = io.StringIO()
    call_command("export_decisions", *args, stdout=out)
    return out.getvalue()


def test_jsonl_export_verifies_with_an_independent_implementation(four_decisions):
    lines = export("--format", "jsonl").splitlines()
    records = [json.loads(line) for line in lines]
    assert len(records) == 4
    assert all(list(r) == SPEC_FIELDS for r in records)
    assert isinstance(records[0]["evidence"], dict)
    independent_verify(records)


def test_jsonl_export_of_a_file_verifies_with_the_command(four_decisions, tmp_path):
    path = tmp_path / "decisions.jsonl"
    path.write_text(export(), encoding="utf-8")
    out = io.StringIO()
    call_command("verify_decisions", "--file", str(path), stdout=out)
    assert out.getvalue() == "chain intact: 4 decisions\n"


def test_a_tampered_export_file_fails_verification(four_decisions, tmp_path):
    path = tmp_path / "decisions.jsonl"
    path.write_text(export().replace("Wrong one", "Right one"), encoding="utf-8")
    with pytest.raises(CommandError) as exc:
        call_command("verify_decisions", "--file", str(path))
    assert (exc.value.returncode, str(exc.value)) == (1, "chain broken at seq 3")


def test_export_since_gives_the_later_records_only(four_decisions):
    records = [json.loads(line) for line in export("--since", "1").splitlines()]
    assert [r["seq"] for r in records] == [2, 3, 4]
    assert chain_verify(records, prev_hash=records[0]["prev_hash"]) is None


def test_export_for_another_host_is_empty(four_decisions, ingest):
    ingest([{"type": "host", "name": "other"}])
    assert export("--host", "other") == ""


def test_export_for_an_unknown_host_is_refused(four_decisions):
    with pytest.raises(CommandError) as exc:
        export("--host", "nope")
    assert (exc.value.returncode, str(exc.value)) == (1, "--host nope: no such host.")


def test_negative_since_is_wrong_usage(db):
    with pytest.raises(CommandError) as exc:
        export("--since", "-1")
    assert (exc.value.returncode, str(exc.value)) == (2, "--since: expected a seq of 0 or more, got -1")


def test_csv_export_parses_and_round_trips_evidence(four_decisions):
    text = export("--format", "csv")
    assert text.startswith(",".join(SPEC_FIELDS) + "\r\n")
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    jsonl = [json.loads(line) for line in export().splitlines()]
    assert len(rows) == 4
    for row, record in zip(rows, jsonl, strict=True):
        assert json.loads(row["evidence"]) == record["evidence"]
        assert row["reason"] == record["reason"]
        assert row["seq"] == str(record["seq"])
        assert row["hash"] == record["hash"]
        assert row["lesson_id"] == ""


def test_export_query_count_does_not_grow_with_the_log(four_decisions, admin_user):
    """The same queries (at most two) with 4 decisions and with 44 (20 retire/restore pairs more)."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def exported() -> tuple[int, int]:
        with CaptureQueriesContext(connection) as queries:
            text = export("--format", "csv")
        return len(queries), text.count("\r\n") - 1  # queries, decisions (the header line left out)

    small = exported()
    host = Host.objects.get(name="acme")
    for i in range(20):
        (retired,) = lessons_retire(
            host=host, hashes=four_decisions[2:3], actor=admin_user, reason=f"r{i}", now=NOW
        )
        lesson_restore(
            lesson=Lesson.objects.get(hash=retired.lesson_hash), actor=admin_user, reason="back", now=NOW
        )
    large = exported()
    assert (small[1], large[1]) == (4, 44)
    assert small[0] == large[0] <= 2
