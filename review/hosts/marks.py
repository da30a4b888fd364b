"""Reading restatement marks across a host (issue 22, Build 2): the host page's list and the
``export_restatements`` command's JSON Lines and CSV.

A mark (``lessons.models.RestatementMark``) names two lessons by hash; each row here also carries the
entity of its first lesson (``namespace``, ``subject``: a lesson's hash is of its entity, so both lessons
of a mark made on a pile page are on it), read in the same query. Marks are not decisions: they have no
seq and are not in the hash chain. docs/reviewing.md ("Correcting the facts").
"""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import F, OuterRef, QuerySet, Subquery

from lessons.core.text import format_datetime
from lessons.models import Host, Lesson, RestatementMark
from review.log.exports import csv_stream, record_json

CHUNK_SIZE = 2000
HOST_PAGE_MARKS = 50  # the host page lists the newest; the export has them all
# One exported mark: its fields in this order (JSON Lines keys, the CSV header).
MARK_FIELDS = ("host", "namespace", "subject", "a", "b", "same", "reason", "made_by", "made_at")


def marks_rows(*, host: Host | None = None) -> QuerySet:
    """Every restatement mark (of ``host`` only, when given) as dicts of ``MARK_FIELDS`` (``made_by`` the
    username, ``None`` once the user is deleted; ``made_at`` an aware UTC datetime), ordered by host
    name, then ``made_at`` and id (oldest first). One query."""
    lesson = Lesson.objects.filter(host_id=OuterRef("host_id"), hash=OuterRef("a"))
    rows = RestatementMark.objects.all() if host is None else RestatementMark.objects.filter(host=host)
    return rows.annotate(
        host_name=F("host__name"),
        namespace=Subquery(lesson.values("namespace")[:1]),
        subject=Subquery(lesson.values("subject")[:1]),
        made_by_name=F("made_by__username"),
    ).order_by("host_name", "made_at", "id")


def host_marks_shown(*, host: Host, limit: int = HOST_PAGE_MARKS) -> tuple[list[dict], bool]:
    """The host's newest ``limit`` marks, newest first, as ``marks_rows`` dicts, and whether there are
    more. One query (``limit + 1`` rows read)."""
    rows = list(
        marks_rows(host=host)
        .order_by("-made_at", "-id")
        .values("namespace", "subject", "a", "b", "same", "reason", "made_by_name", "made_at")[: limit + 1]
    )
    return rows[:limit], len(rows) > limit


def _records(marks: QuerySet) -> Iterator[dict]:
    columns = ("host_name", "namespace", "subject", "a", "b", "same", "reason", "made_by_name", "made_at")
    for row in marks.values_list(*columns).iterator(chunk_size=CHUNK_SIZE):
        record = dict(zip(MARK_FIELDS, row, strict=True))
        record["made_at"] = format_datetime(record["made_at"])
        yield record


def restatements_jsonl(marks: QuerySet) -> Iterator[str]:
    """JSON Lines: one mark per line (``MARK_FIELDS``, ``made_at`` ISO 8601 UTC with milliseconds), each
    ending in ``\\n``. Streams (chunks of ``CHUNK_SIZE`` rows)."""
    for record in _records(marks):
        yield record_json(record) + "\n"


def restatements_csv(marks: QuerySet) -> Iterator[str]:
    """CSV: the header (``MARK_FIELDS``), then one row per mark; ``same`` is ``true`` / ``false``, ``None``
    an empty field, formula-like text quoted (``review.log.exports.csv_cell``). Streams."""

    def row(record: dict) -> list:
        record["same"] = "true" if record["same"] else "false"
        return [record[name] for name in MARK_FIELDS]

    return csv_stream(MARK_FIELDS, (row(r) for r in _records(marks)))
