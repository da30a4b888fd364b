"""Lesson embeddings from the static word-embedding model that ships inside the ``wordllama`` wheel.

The model is ``l2_supercat`` at 256 dimensions: one vector per token of its tokenizer, both files in the
installed package (``wordllama/weights/l2_supercat_256.safetensors`` and
``wordllama/tokenizers/l2_supercat_tokenizer_config.json``). They are read straight from there, offline:
``WordLlama.load()`` looks for the tokenizer in another folder and then tries the network, and importing
the ``wordllama`` package configures the root logger, so neither is used. A text's embedding is the mean
of its content tokens' vectors (function words, digits and punctuation left out: they carry no fact,
and example numbers vary between restatements), not normalized. No ORM.
docs: docs/piles-and-recurrence.md ("Facts: which members state the same fact").
"""

from __future__ import annotations

import importlib.util
import re
from functools import cache, lru_cache
from pathlib import Path

import numpy as np

from lessons.core.tokens import STOP_WORDS

DIMENSIONS = 256
WEIGHTS = "weights/l2_supercat_256.safetensors"
TOKENIZER = "tokenizers/l2_supercat_tokenizer_config.json"
TENSOR = "embedding.weight"
MODEL_MISSING = "the embedding model is missing: {path} (install the project's dependencies: wordllama)"
# Tokens left out of the mean: the recurrence stop words, short function words, digits and punctuation.
_FUNCTION = STOP_WORDS | frozenset(
    "a an as at be by do go if in is it no of on or so to up we us me my i".split()
)
_WORD = re.compile(r"[a-z0-9]")
EMBED_CACHE = 16384  # texts whose embedding is kept in memory (1 KiB each)


def _package_root() -> Path:
    """The installed ``wordllama`` package's folder, found without importing the package."""
    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(MODEL_MISSING.format(path="wordllama"))
    return Path(next(iter(spec.submodule_search_locations)))


@cache
def _model() -> tuple[object, np.ndarray, np.ndarray]:
    """``(tokenizer, vectors, content)``: the tokenizer, the ``(vocabulary, 256)`` float32 vectors and a
    boolean per token id, whether it counts in a text's mean. Loaded once per process (~0.1 s)."""
    from safetensors import safe_open
    from tokenizers import Tokenizer

    root = _package_root()
    weights, tokenizer_file = root / WEIGHTS, root / TOKENIZER
    for path in (weights, tokenizer_file):
        if not path.is_file():
            raise RuntimeError(MODEL_MISSING.format(path=path))
    tokenizer = Tokenizer.from_file(str(tokenizer_file))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    with safe_open(str(weights), framework="np") as f:
        vectors = np.ascontiguousarray(f.get_tensor(TENSOR), dtype=np.float32)
    content = np.zeros(vectors.shape[0], dtype=bool)
    for piece, token_id in tokenizer.get_vocab().items():
        word = piece.lstrip("▁Ġ").lower()
        if token_id < len(content) and _WORD.search(word) and word not in _FUNCTION and not word.isdigit():
            content[token_id] = True
    return tokenizer, vectors, content


@lru_cache(maxsize=EMBED_CACHE)
def embed(text: str) -> np.ndarray:
    """The embedding of one text: a read-only float32 vector of ``DIMENSIONS`` (zeros for a text without
    a content token). ``RuntimeError`` when the model files are missing."""
    return embed_many([text])[0]


def embed_many(texts: list[str]) -> np.ndarray:
    """The embeddings of ``texts`` as a ``(len(texts), DIMENSIONS)`` float32 array, in one batch."""
    tokenizer, vectors, content = _model()
    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    # The tokenizer takes UTF-8 only: a lone surrogate (JSON allows one) becomes "?".
    clean = [t.encode("utf-8", "replace").decode("utf-8") for t in texts]
    for i, encoding in enumerate(tokenizer.encode_batch(clean, add_special_tokens=False)):
        ids = np.asarray(encoding.ids, dtype=np.int64)
        ids = ids[(ids >= 0) & (ids < len(content))]
        kept = ids[content[ids]]
        if len(kept) == 0:
            kept = ids
        if len(kept):
            out[i] = vectors[kept].mean(axis=0)
    out.setflags(write=False)
    return out
