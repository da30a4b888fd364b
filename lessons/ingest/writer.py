"""The one writer of ingest's append-only rows (verdicts, exposures, corrections): insert the rows whose
identity is new, count the others unchanged. spec: interchange.md ("Identity and idempotence").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from django.db.models import Model

from lessons.ingest.report import ImportReport

T = TypeVar("T")


def insert_new_rows(
    *,
    report: ImportReport,
    rtype: str,
    model: type[Model],
    scope: str,
    items: Sequence[tuple[int, str, T]],
    build: Callable[[T], Model],
    batch_size: int,
) -> list[T]:
    """Insert a row for each ``(scope id, key, item)`` whose identity ``(scope id, key)`` is neither
    stored nor earlier in ``items``; returns those items, in order.

    ``scope`` is the column that, with ``key``, identifies a row of ``model`` (``lesson_id`` or
    ``host_id``); ``build`` makes the row of an item. One query reads the stored identities, then one
    ``bulk_create`` per ``batch_size`` rows. Counts ``rtype`` as ``created`` or ``unchanged`` in
    ``report``.
    """
    if not items:
        return []
    existing = set(
        model.objects.filter(
            **{f"{scope}__in": {s for s, _k, _i in items}, "key__in": {k for _s, k, _i in items}}
        ).values_list(scope, "key")
    )
    new = []
    for scope_id, key, item in items:
        if (scope_id, key) in existing:
            report.count(rtype, "unchanged")
            continue
        existing.add((scope_id, key))
        new.append(item)
    model.objects.bulk_create([build(item) for item in new], batch_size=batch_size)
    report.count(rtype, "created", len(new))
    return new
