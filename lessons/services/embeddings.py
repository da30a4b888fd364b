"""The facts' text vectors, kept in the database (``TextEmbedding``) as well as in each process.

``embeddings_load`` runs before a writer groups piles (``lessons.services.entity_counts``): the texts'
vectors this process does not hold are read from the table, the rest encoded in one batch
(``lessons.core.embedding``) and stored, so each text is encoded once, not once per process.
docs: docs/piles-and-recurrence.md ("Facts: which members state the same fact").
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from lessons.core.embedding import DIMENSIONS, MODEL, cached, embed_many, remember, text_key
from lessons.models import TextEmbedding

READ_CHUNK = 500  # keys per IN (...)
WRITE_BATCH = 500
_DTYPE = np.dtype("<f4")


def embeddings_load(texts: Iterable[str]) -> int:
    """Make the vectors of ``texts`` available to this process (``lessons.core.embedding.cached``) and
    stored: the stored ones (of this ``MODEL``) read unless the process holds them, the rest taken from
    the process or encoded, and stored (a vector of another model replaced). Runs in the caller's
    transaction. Queries, whatever the process holds (so a writer's count does not depend on what ran
    before it): one per ``READ_CHUNK`` texts, and one per ``WRITE_BATCH`` texts not stored yet.
    Returns how many texts were encoded."""
    wanted = list(dict.fromkeys(texts))
    if not wanted:
        return 0
    held = cached(wanted)
    by_key = {text_key(t): t for t in wanted}
    keys = sorted(by_key)
    stored: dict[str, np.ndarray] = {}
    for start in range(0, len(keys), READ_CHUNK):
        rows = TextEmbedding.objects.filter(key__in=keys[start : start + READ_CHUNK], model=MODEL)
        for key, vector in rows.values_list("key", "vector"):
            values = np.frombuffer(bytes(vector), dtype=_DTYPE)
            if values.shape == (DIMENSIONS,):
                stored[by_key[key]] = values.astype(np.float32)
    remember({t: v for t, v in stored.items() if t not in held})
    unstored = [by_key[k] for k in keys if by_key[k] not in stored]
    if not unstored:
        return 0
    encode = [t for t in unstored if t not in held]
    new = dict(zip(encode, embed_many(encode), strict=True)) if encode else {}
    remember(new)
    rows = [
        TextEmbedding(
            key=text_key(t), model=MODEL, vector=np.asarray(new.get(t, held.get(t)), dtype=_DTYPE).tobytes()
        )
        for t in unstored
    ]
    TextEmbedding.objects.bulk_create(
        rows,
        batch_size=WRITE_BATCH,
        update_conflicts=True,
        unique_fields=["key"],
        update_fields=["model", "vector"],
    )
    return len(encode)
