"""The facts' text vectors, kept in the database (``TextEmbedding``) as well as in each process.

``embeddings_load`` runs before a writer groups piles (``lessons.services.entity_counts``): the texts'
vectors this process does not hold are read from the table, the rest encoded in one batch
(``lessons.core.embedding``) and stored, so each text is encoded once, not once per process.
docs: docs/piles-and-recurrence.md ("Facts: which members state the same fact").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from lessons.core.embedding import MODEL, cached, embed_many, remember, text_key
from lessons.models import TextEmbedding
from lessons.selectors.embeddings import DTYPE, read_vectors

# While set (``facts_deferred``), writers encode nothing: a pile with a text not encoded yet is stored
# as not grouped yet, its (host id, namespace, subject) noted here for a background regroup.
_deferred: ContextVar[set[tuple[int, str, str]] | None] = ContextVar("facts_deferred", default=None)
WRITE_BATCH = 500


@contextmanager
def facts_deferred() -> Iterator[set[tuple[int, str, str]]]:
    """Within it, the counts' writers group only the piles whose texts are all encoded already (held
    by the process or stored): the others are stored as not grouped yet (``facts_version`` 0) and their
    ``(host id, namespace, subject)`` added to the set it yields, for ``lessons.tasks.regroup_pending``
    to group in the background. For bulk writers (ingest): encoding costs 5-8 ms a text."""
    pending: set[tuple[int, str, str]] = set()
    token = _deferred.set(pending)
    try:
        yield pending
    finally:
        _deferred.reset(token)


def deferring() -> bool:
    """Whether a ``facts_deferred`` block is open."""
    return _deferred.get() is not None


def defer_pile(host_id: int, namespace: str, subject: str) -> None:
    """Note a pile left not grouped yet by a ``facts_deferred`` block (``ValueError`` outside one)."""
    pending = _deferred.get()
    if pending is None:
        raise ValueError("defer_pile outside facts_deferred")
    pending.add((host_id, namespace, subject))


def embeddings_load(texts: Iterable[str]) -> int:
    """Make the vectors of ``texts`` available to this process (``lessons.core.embedding.cached``) and
    stored: the stored ones (of this ``MODEL``) read unless the process holds them, the rest taken from
    the process or encoded, and stored (a vector of another model replaced). Runs in the caller's
    transaction. Queries, whatever the process holds (so a writer's count does not depend on what ran
    before it): one per ``READ_CHUNK`` texts, and one per ``WRITE_BATCH`` texts not stored yet.
    Within ``facts_deferred`` nothing is encoded (what the process holds is still stored).
    Returns how many texts were encoded."""
    wanted = list(dict.fromkeys(texts))
    if not wanted:
        return 0
    held = cached(wanted)
    by_key = {text_key(t): t for t in wanted}
    keys = sorted(by_key)
    stored = read_vectors(by_key)
    remember({t: v for t, v in stored.items() if t not in held})
    unstored = [by_key[k] for k in keys if by_key[k] not in stored]
    if not unstored:
        return 0
    # Within facts_deferred, nothing is encoded: what the process holds is stored, the rest waits.
    encode = [] if deferring() else [t for t in unstored if t not in held]
    unstored = [t for t in unstored if t in held or t in encode]
    new = dict(zip(encode, embed_many(encode), strict=True)) if encode else {}
    remember(new)
    rows = [
        TextEmbedding(
            key=text_key(t), model=MODEL, vector=np.asarray(new.get(t, held.get(t)), dtype=DTYPE).tobytes()
        )
        for t in unstored
    ]
    if not rows:
        return 0
    TextEmbedding.objects.bulk_create(
        rows,
        batch_size=WRITE_BATCH,
        update_conflicts=True,
        unique_fields=["key"],
        update_fields=["model", "vector"],
    )
    return len(encode)
