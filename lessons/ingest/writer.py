"""The one writer of ingest's append-only rows (verdicts, exposures, corrections): insert the rows whose
identity is new, count the others unchanged. spec: interchange.md ("Identity and idempotence").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from django.db.models import Model

from lessons.ingest.report import ImportReport

T = TypeVar("T")


@dataclass(frozen=True)
class RowKind(Generic[T]):
    """An append-only row type: its record type in the report (``rtype``), its ``model``, the column
    that with ``key`` identifies a row (``scope``: ``lesson_id`` or ``host_id``), and ``build``, which
    makes the row of an item."""

    rtype: str
    model: type[Model]
    scope: str
    build: Callable[[T], Model]


def insert_new_rows(
    *, report: ImportReport, kind: RowKind[T], items: Sequence[tuple[int, str, T]], batch_size: int
) -> list[T]:
    """Insert a row for each ``(scope id, key, item)`` whose identity ``(scope id, key)`` is neither
    stored nor earlier in ``items``; returns those items, in order.

    One query reads the stored identities, then one ``bulk_create`` per ``batch_size`` rows. Counts
    ``kind.rtype`` as ``created`` or ``unchanged`` in ``report``.
    """
    if not items:
        return []
    existing = set(
        kind.model.objects.filter(
            **{f"{kind.scope}__in": {s for s, _k, _i in items}, "key__in": {k for _s, k, _i in items}}
        ).values_list(kind.scope, "key")
    )
    new = []
    for scope_id, key, item in items:
        if (scope_id, key) in existing:
            report.count(kind.rtype, "unchanged")
            continue
        existing.add((scope_id, key))
        new.append(item)
    kind.model.objects.bulk_create([kind.build(item) for item in new], batch_size=batch_size)
    report.count(kind.rtype, "created", len(new))
    return new
