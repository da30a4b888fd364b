"""Parts of pages kept in Django's cache by data version, so a page nothing changed since is not rebuilt.

A part's key is a digest of the data version (``lessons.services.data_version.current``, read once per
request, before the part's data) and what else the part depends on (the entity, the viewer's role, the
selection, the members' ages as shown). Any committed write raises the version, so a part is never served
for data that changed after it was built; an old version's parts are never asked for again and expire
(``FRAGMENT_CACHE_SECONDS``). Nothing is kept or read while the data version is ``"0"`` (no counted write
committed yet), inside a transaction (the request's own writes are not committed, so not versioned), or
for a request that writes (its page after the write is built from what it read, in whatever order). A
view reads the version before any data its parts show (``version_first``).
The cache is the process's memory by default, Redis with ``CACHE_URL``. docs: docs/production.md
("Cache").
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.core.cache import cache
from django.db import connection
from django.http import HttpRequest

from lessons.services.data_version import current

log = logging.getLogger(__name__)
T = TypeVar("T")
_MISSING = object()


def request_version(request: HttpRequest) -> str:
    """The data version of ``request``'s cached parts, read once (one query) and kept on the request."""
    version = getattr(request, "_data_version", None)
    if version is None:
        version = request._data_version = current()  # type: ignore[attr-defined]
    return version


READS = ("GET", "HEAD")


def _keeps(request: HttpRequest) -> bool:
    return request.method in READS and settings.FRAGMENT_CACHE_SECONDS > 0 and not connection.in_atomic_block


def version_first(request: HttpRequest) -> None:
    """Read the request's data version now, when parts may be kept: for a view that reads data of a kept
    part before it asks for the part (the queue reads its rows, then keeps their table). A part built
    from data read before its version could be kept under a newer version than its data."""
    if _keeps(request):
        request_version(request)


def fragment(request: HttpRequest, key: tuple, build: Callable[[], T]) -> T:
    """``build()``'s value for ``key`` (a tuple of plain values: strings, numbers, booleans, tuples) at
    this request's data version: from the cache when it holds it, else built and kept for
    ``FRAGMENT_CACHE_SECONDS``. Built every time while nothing may be cached (see the module)."""
    if not _keeps(request):
        return build()
    seconds = settings.FRAGMENT_CACHE_SECONDS
    version = request_version(request)
    if version == "0":
        return build()
    name = "fragment:" + hashlib.sha256(repr((version, key)).encode()).hexdigest()
    try:
        value = cache.get(name, _MISSING)
    except Exception:  # a cache server that is down costs time, never the page
        log.warning("cache unavailable: %s built without it", key[0], exc_info=True)
        return build()
    if value is _MISSING:
        value = build()
        try:
            cache.set(name, value, seconds)
        except Exception:
            log.warning("cache unavailable: %s not kept", key[0], exc_info=True)
    return value  # type: ignore[return-value]
