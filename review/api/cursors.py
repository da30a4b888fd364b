"""The opaque cursor of ``GET /api/v1/piles``: the key of the last pile of a page (host name, namespace,
subject), as URL-safe base64 of a JSON array. docs/piles-and-recurrence.md ("How the piles JSON is built":
piles sorted by that key).

A client passes back what ``next`` said; it never builds one. A cursor says where to continue, not what
to show, so it stays valid while piles come and go.
"""

from __future__ import annotations

import base64
import binascii
import json

from lessons.core.text import storable
from lessons.selectors.piles import PileKey

E_CURSOR = "not a cursor this API gave: pass the 'next' of the previous page, or no cursor for the first"
MAX_CURSOR_CHARS = 2048


def encode_pile_cursor(key: PileKey) -> str:
    """``key`` as the ``next`` cursor: URL-safe base64 (no padding) of ``[host, namespace, subject]``."""
    raw = json.dumps(list(key), ensure_ascii=False, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_pile_cursor(cursor: str) -> PileKey:
    """The key a cursor from ``encode_pile_cursor`` holds. Raises ``ValueError`` (message ``E_CURSOR``)
    for anything else: bad base64, not JSON, not three strings, over ``MAX_CURSOR_CHARS``, or a string no
    database can compare (a NUL, which PostgreSQL text cannot hold; a lone surrogate, which has no UTF-8:
    JSON's ``"\\ud800"`` decodes to one)."""
    if not cursor or len(cursor) > MAX_CURSOR_CHARS:
        raise ValueError(E_CURSOR)
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        key = json.loads(raw.decode())
    except (binascii.Error, ValueError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise ValueError(E_CURSOR) from None
    if not (isinstance(key, list) and len(key) == 3 and all(storable(part) for part in key)):
        raise ValueError(E_CURSOR)
    return key[0], key[1], key[2]
