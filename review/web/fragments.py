"""Parts of pages kept in Django's cache by data version, so a page nothing changed since is not rebuilt.

A part's key is a digest of the request's data version (read once per request, before the part's data:
``request_version``) and what else the part depends on (the entity, the viewer's role, the selection, the
members' ages as shown). The version is the global one (``lessons.services.data_version.current``) unless
the view says which hosts its page shows (``page_version``: the pile, lesson and host pages), then theirs
(``host_current``, ``lesson_current``), which a write on another host leaves as it is. Any committed write
that may change what the page shows raises its version, so a part is never served for data that changed
after it was built; an old version's parts are never asked for again and expire
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

from lessons.services.data_version import current, host_current, lesson_current
from review.web.lookups import has_nul, query_text

log = logging.getLogger(__name__)
T = TypeVar("T")
V = TypeVar("V", bound=Callable)
_MISSING = object()
# How a view's page reads its version: (request, the view's URL keyword arguments) -> version.
VersionReader = Callable[[HttpRequest, dict], str]


def request_version(request: HttpRequest) -> str:
    """The data version of ``request``'s answer and cached parts, read once (one query) and kept on the
    request: the one ``view_version`` set, else the global version (which covers every page)."""
    version = getattr(request, "_data_version", None)
    if version is None:
        version = request._data_version = current()  # type: ignore[attr-defined]
    return version


def view_version(request: HttpRequest, view: Callable | None, kwargs: dict) -> str:
    """Read and keep ``request``'s data version for ``view`` (called with the URL's ``kwargs``): the
    version its ``page_version`` mark names, else the global one. One query. Raises ``DatabaseError``
    as the query does. docs/production.md, "Cache"."""
    version = getattr(request, "_data_version", None)
    if version is None:
        read: VersionReader | None = getattr(view, "page_version", None)
        version = request._data_version = current() if read is None else read(request, kwargs)  # type: ignore[attr-defined]
    return version


def page_version(read: VersionReader) -> Callable[[V], V]:
    """Mark a view whose page (and every htmx region of it) shows the data of some hosts only: its ETag
    and kept parts use the version ``read(request, url_kwargs)`` returns (``host_in_query``,
    ``host_in_path``, ``lesson_in_path``) instead of the global one. Only for a page that shows nothing
    of any other host (a user's name or role is covered: writes to them are unscoped). The mark is an
    attribute, so it survives decorators that wrap with ``functools.wraps``. docs/production.md,
    "Cache"."""

    def mark(view: V) -> V:
        view.page_version = read  # type: ignore[attr-defined]
        return view

    return mark


def _hosts_version(names: list[str]) -> str:
    if has_nul(*names):  # no host is named so: the view answers it
        return current()
    return host_current(names)


def host_in_query(request: HttpRequest, kwargs: dict) -> str:
    """The version of the host named by ``?host=`` (the pile page), trimmed as the page trims it
    (``review.web.lookups.query_text``): ``?host=acme%20`` shows acme's pile."""
    return _hosts_version([query_text(request.GET, "host")])


def host_in_path(key: str) -> VersionReader:
    """A reader of the version of the host named by the URL's ``key`` (the host page: ``name``)."""

    def read(request: HttpRequest, kwargs: dict) -> str:
        return _hosts_version([str(kwargs.get(key, ""))])

    return read


def lesson_in_path(request: HttpRequest, kwargs: dict) -> str:
    """The lesson page's version (``lesson_current``): its host's and every host's holding its text."""
    host, lesson_hash = str(kwargs.get("host", "")), str(kwargs.get("lesson_hash", ""))
    if has_nul(host, lesson_hash):
        return current()
    return lesson_current(host, lesson_hash)


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
