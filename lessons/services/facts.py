"""Storing the facts of piles (``lessons.core.facts``) on their ``EntityCount`` rows.

The counts' writers store them with the other counts (``lessons.services.entity_counts``: ingest,
sync, imports, decisions, budget changes); ``facts_refresh`` recomputes them alone, after a mark
changed or when the method changed (``manage.py piles --regroup``). docs: docs/piles-and-recurrence.md.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from lessons.models import EntityCount
from lessons.services.entity_counts import WRITE_BATCH, _chunks, _lock_totals, _pile_extras, _write_extras


def facts_refresh(*, host_id: int, keys: Iterable[tuple[str, str]] | None = None) -> int:
    """Recompute and store the facts of the host's piles among ``keys`` (``(namespace, subject)``
    pairs; every pile of the host when ``None``), in the caller's transaction (its own when there is
    none), under the host's counts lock. An entity that is not over budget has no facts and is skipped.
    Queries: a few per ``WRITE_BATCH`` piles. Returns how many piles were written."""
    wanted = None if keys is None else set(keys)
    written = 0
    with transaction.atomic(savepoint=False):
        budget = _lock_totals(host_id)
        rows = EntityCount.objects.filter(host_id=host_id, over_budget=True).order_by("namespace", "subject")
        piles = [
            (pk, ns, subj)
            for pk, ns, subj in rows.values_list("id", "namespace", "subject")
            if wanted is None or (ns, subj) in wanted
        ]
        for chunk in _chunks(piles, WRITE_BATCH):
            extras = _pile_extras(budget, [(ns, subj) for _pk, ns, subj in chunk])
            _write_extras([(pk, extras[(ns, subj)]) for pk, ns, subj in chunk if (ns, subj) in extras])
            written += len(chunk)
    return written
