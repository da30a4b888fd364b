"""Reading the facts' stored text vectors (``TextEmbedding``): readers warm the process's vectors from
the table and never encode or write (``lessons.services.embeddings`` does both).
docs: docs/piles-and-recurrence.md ("Facts: which members state the same fact").
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from lessons.core.embedding import DIMENSIONS, MODEL, cached, remember, text_key
from lessons.models import TextEmbedding

READ_CHUNK = 500  # keys per IN (...)
DTYPE = np.dtype("<f4")  # how a vector is stored: DIMENSIONS little-endian float32 values


def vectors_stored(texts: Iterable[str]) -> set[str]:
    """Read-only: the vectors of ``texts`` stored (of this ``MODEL``) that the process does not hold are
    read and kept; returns the texts whose vector is now held. One query per ``READ_CHUNK`` texts not
    held (none when it holds them all). For readers: they never encode or write."""
    wanted = list(dict.fromkeys(texts))
    held = cached(wanted)
    by_key = {text_key(t): t for t in wanted if t not in held}
    found = read_vectors(by_key)
    remember(found)
    return set(held) | set(found)


def read_vectors(by_key: dict[str, str]) -> dict[str, np.ndarray]:
    """The stored vectors (of this ``MODEL``) of the texts of ``by_key`` (key to text), by text. One
    query per ``READ_CHUNK`` keys."""
    keys = sorted(by_key)
    found: dict[str, np.ndarray] = {}
    for start in range(0, len(keys), READ_CHUNK):
        rows = TextEmbedding.objects.filter(key__in=keys[start : start + READ_CHUNK], model=MODEL)
        for key, vector in rows.values_list("key", "vector"):
            values = np.frombuffer(bytes(vector), dtype=DTYPE)
            if values.shape == (DIMENSIONS,):
                found[by_key[key]] = values.astype(np.float32)
    return found
