"""Streaming exports of the decision log: JSON Lines and CSV over ``decision_record``. docs/decisions.md,
"Exports".

Both read the queryset with ``.iterator(chunk_size=2000)`` and yield one line at a time, so memory stays
flat however many decisions there are. The caller passes a queryset already filtered; the order is
forced to ``seq`` (exports are in commit order, whatever the page was sorted by).

CSV: a header row, then one row per record with exactly the record's fields, RFC 4180 quoting through
the ``csv`` module with ``\\r\\n`` line ends; ``evidence`` is its JSON (sorted keys, compact, UTF-8 as
is, the same bytes the hash covers); ``null`` is an empty field. An empty field cannot tell ``null``
from ``""`` apart (only ``namespace`` may be either: ``null`` on a ``set_budget`` record, ``""`` on an
entity without a namespace), so a chain is verified from the JSONL export. A text cell a spreadsheet would
run as a formula (starting with =, +, -, @, tab or CR) gets a leading ``'`` (``csv_cell``; issue 13,
fault 8; docs/decisions-verify.md). The CSV is for reading: every text cell, ``evidence`` included, shows
its control and bidi formatting characters as ``⟨U+202E⟩`` (issue 21; docs/interchange.md, "Control characters
in shown text"). JSONL is data: JSON escapes the C0 controls (``\\u001b``) and keeps the
other characters as they are, byte for byte.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator

from django.db.models import QuerySet

from lessons.core.text import visible_controls
from review.models import Decision
from review.services.chain import RECORD_FIELDS, decision_record

CHUNK_SIZE = 2000


def _records(decisions: QuerySet[Decision]) -> Iterator[dict]:
    for decision in decisions.order_by("seq").iterator(chunk_size=CHUNK_SIZE):
        yield decision_record(decision)


def record_json(record: dict) -> str:
    """One record as a JSON object on one line (UTF-8 kept, keys in the record's order)."""
    return json.dumps(record, ensure_ascii=False, separators=(",", ":"))


def decisions_jsonl(decisions: QuerySet[Decision]) -> Iterator[str]:
    """JSON Lines: one record per line, each ending in ``\\n``. Streams."""
    for record in _records(decisions):
        yield record_json(record) + "\n"


# A spreadsheet runs a cell that starts with one of these as a formula (CSV injection).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """``value`` with a leading ``'`` when it is a string a spreadsheet would run as a formula
    (``FORMULA_STARTS``), and its control and bidi formatting characters shown as ``⟨U+202E⟩``
    (``visible_controls``); anything else unchanged. CSV only: JSONL keeps every value exact."""
    if isinstance(value, str):
        value = visible_controls(value)
        if value.startswith(FORMULA_STARTS):
            return "'" + value
    return value


def _csv_value(name: str, value: object) -> object:
    if value is None:
        return ""
    if name == "evidence":
        return visible_controls(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
    return csv_cell(value)


def csv_stream(header, rows) -> Iterator[str]:
    """CSV text of ``header`` then each row of ``rows`` (lists of cell values; ``None`` an empty field,
    formula-like text quoted by ``csv_cell``), one string per row, ``\\r\\n`` line ends. Streams."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")

    def flush() -> str:
        text = buffer.getvalue()
        buffer.seek(0)
        buffer.truncate(0)
        return text

    writer.writerow(header)
    yield flush()
    for row in rows:
        writer.writerow(["" if value is None else csv_cell(value) for value in row])
        yield flush()


def decisions_csv(decisions: QuerySet[Decision]) -> Iterator[str]:
    """CSV: the header row, then one row per record (see the module docstring). Streams."""
    rows = ([_csv_value(name, record[name]) for name in RECORD_FIELDS] for record in _records(decisions))
    return csv_stream(RECORD_FIELDS, rows)
