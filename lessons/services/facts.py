"""Storing the facts of piles (``lessons.core.facts``) on their ``EntityCount`` rows.

The counts' writers store them with the other counts (``lessons.services.entity_counts``: ingest,
sync, imports, decisions, budget changes); ``facts_refresh`` recomputes them alone, after a mark
changed or when the method changed (``manage.py piles --regroup``). docs: docs/piles-and-recurrence.md.
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db import transaction

from lessons.core.facts import FACTS_VERSION
from lessons.models import EntityCount, Lesson
from lessons.services.embeddings import embeddings_load
from lessons.services.entity_counts import (
    WRITE_BATCH,
    _chunks,
    _lock_totals,
    _pile_extras,
    _write_extras,
)

REGROUP_CHUNK = 50  # piles encoded, then grouped under the lock, at a time


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


def facts_regroup_pending(*, host_id: int) -> int:
    """Group the host's piles whose stored facts are not of this ``FACTS_VERSION`` (left not grouped
    yet by a bulk ingest, ``lessons.services.embeddings.facts_deferred``, or of an older method),
    ``REGROUP_CHUNK`` piles at a time: their lessons' texts (any status) encoded and stored first, outside
    the counts lock (5-8 ms a text), then their facts stored under it (``facts_refresh``). Returns how
    many piles were written. Run by the background task ``lessons.tasks.regroup_pending``."""
    stale = list(
        EntityCount.objects.filter(host_id=host_id, over_budget=True)
        .exclude(facts_version=FACTS_VERSION)
        .order_by("namespace", "subject")
        .values_list("namespace", "subject")
    )
    written = 0
    for chunk in _chunks(stale, REGROUP_CHUNK):
        subjects = sorted({subject for _ns, subject in chunk})
        wanted = set(chunk)
        rows = Lesson.objects.filter(
            host_id=host_id,
            subject__in=subjects,
        )
        texts = [
            t for ns, subj, t in rows.values_list("namespace", "subject", "text") if (ns, subj) in wanted
        ]
        with transaction.atomic():
            embeddings_load(texts)
        written += facts_refresh(host_id=host_id, keys=chunk)
    return written
