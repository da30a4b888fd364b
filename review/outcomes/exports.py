"""The outcomes export (``manage.py export_outcomes``): one record a decision with an outcome, in seq
order, JSON Lines or CSV, streamed (``CHUNK_SIZE`` rows a read). Derived data, outside the hash-chained
record: ``seq`` and ``hash`` name the decision it judges. docs/decisions.md, "Outcomes".
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from django.db.models import QuerySet

from lessons.core.text import to_ms
from review.log.exports import CHUNK_SIZE, csv_stream, record_json
from review.models import DecisionOutcome

OUTCOME_FIELDS = (
    "seq",
    "hash",
    "host",
    "action",
    "actor",
    "at",
    "outcome",
    "sessions_after",
    "evidence",
    "computed_at",
    "version",
)


def outcome_record(row: DecisionOutcome) -> dict:
    """One outcome as an export record (``OUTCOME_FIELDS``; times epoch ms UTC)."""
    d = row.decision
    return {
        "seq": d.seq,
        "hash": d.hash,
        "host": row.host,
        "action": d.action,
        "actor": d.actor,
        "at": to_ms(d.at),
        "outcome": row.outcome,
        "sessions_after": row.sessions_after,
        "evidence": row.evidence,
        "computed_at": to_ms(row.computed_at),
        "version": row.version,
    }


def _records(rows: QuerySet[DecisionOutcome]) -> Iterator[dict]:
    ordered = rows.select_related("decision").order_by("decision__seq")
    for row in ordered.iterator(chunk_size=CHUNK_SIZE):
        yield outcome_record(row)


def outcomes_jsonl(rows: QuerySet[DecisionOutcome]) -> Iterator[str]:
    """JSON Lines, one outcome a line. Streams."""
    for record in _records(rows):
        yield record_json(record) + "\n"


def outcomes_csv(rows: QuerySet[DecisionOutcome]) -> Iterator[str]:
    """CSV: the header (``OUTCOME_FIELDS``), then one row an outcome; ``evidence`` as compact JSON."""

    def cells() -> Iterator[list]:
        for record in _records(rows):
            record["evidence"] = json.dumps(record["evidence"], sort_keys=True, separators=(",", ":"))
            yield [record[f] for f in OUTCOME_FIELDS]

    return csv_stream(OUTCOME_FIELDS, cells())
