"""Web writes wait a few seconds for a lock, then answer 503 with Retry-After (issue 13, Build 3 and fault 9).

A decision, a sign-in or a budget change may find its rows (PostgreSQL) or the database (SQLite: one
writer at a time) held by another writer: a large ingest, another reviewer. Instead of waiting for the
whole batch, or "database is locked" and a traceback:

- ``LockWaitMiddleware`` bounds the wait of every write request (not GET/HEAD/OPTIONS) to
  ``settings.WEB_LOCK_TIMEOUT_SECONDS``: PostgreSQL ``SET lock_timeout``, SQLite ``PRAGMA busy_timeout``,
  on the request's connection when it opens (no connection is opened for it) or, when connections
  are kept between requests (``CONN_MAX_AGE``), at the request's start; restored after the request
  (the task worker and the commands keep the longer waits of the settings);
- a lock timeout, a deadlock or a serialization failure that reaches a view (``process_exception``) or
  Django's ``handler500`` (``busy_response``) is answered 503 with ``Retry-After`` and one clear sentence:
  the API's JSON error body under ``/api/``, a short page otherwise (only that sentence for an htmx
  request, which ``static/js/app.js`` shows as an alert). Nothing was written: each decision is one
  transaction, rolled back whole.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings
from django.db import DatabaseError, OperationalError, connection
from django.db.backends.signals import connection_created
from django.dispatch import receiver
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader

from review.web.paths import API_PREFIX

SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
NO_WAIT_SECONDS = 0.001  # the shortest wait both databases take (PostgreSQL's lock_timeout 0 means none)
RETRY_AFTER_SECONDS = 5
# PostgreSQL SQLSTATEs: lock_not_available (lock_timeout), deadlock_detected, serialization_failure
LOCK_SQLSTATES = frozenset({"55P03", "40P01", "40001"})
SQLITE_LOCKED = ("database is locked", "database table is locked")

E_BUSY = "busy"
E_BUSY_DETAIL = (
    "another change (an import or another reviewer) holds these rows; nothing was written; "
    "try again in {seconds} seconds"
)
BUSY_SENTENCE = (
    "The database is busy with another change (an import or another reviewer's decision), so nothing was "
    "saved. Try again in a few seconds."
)


def is_lock_timeout(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or its cause) is a lock wait that gave up: PostgreSQL's lock timeout, deadlock or
    serialization failure, or SQLite's "database is locked" / "database table is locked"."""
    while exc is not None:
        if getattr(exc, "sqlstate", None) in LOCK_SQLSTATES:
            return True
        if isinstance(exc, OperationalError) and any(text in str(exc) for text in SQLITE_LOCKED):
            return True
        exc = exc.__cause__
    return False


def busy_response(request: HttpRequest) -> HttpResponse:
    """The 503 answer (with ``Retry-After``) to ``request`` that gave up waiting for a lock."""
    if request.path.startswith(API_PREFIX):
        body = {"error": E_BUSY, "details": [E_BUSY_DETAIL.format(seconds=RETRY_AFTER_SECONDS)]}
        response: HttpResponse = JsonResponse(body, status=503)
    elif request.headers.get("HX-Request"):
        response = HttpResponse(
            f'<div class="notice notice-error" role="alert">{BUSY_SENTENCE}</div>', status=503
        )
    else:
        response = HttpResponse(loader.get_template("503_busy.html").render(), status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def _wait_statement(db, seconds: float | None) -> str | None:
    if db.vendor == "postgresql":
        return "RESET lock_timeout" if seconds is None else f"SET lock_timeout = '{int(seconds * 1000)}ms'"
    if db.vendor == "sqlite":
        if seconds is None:
            seconds = settings.DATABASES["default"].get("OPTIONS", {}).get("timeout", 5)
        return f"PRAGMA busy_timeout = {int(seconds * 1000)}"
    return None


def _set_wait(db, seconds: float | None) -> None:
    statement = _wait_statement(db, seconds)
    if statement is None:
        return
    try:
        with db.cursor() as cursor:
            cursor.execute(statement)
    except DatabaseError:  # the database away: the request's own queries will say so
        pass


# Set for the length of a write request: a connection opened meanwhile gets the short wait at once.
_web_write: ContextVar[bool] = ContextVar("web_write", default=False)


@contextmanager
def without_waiting() -> Iterator[None]:
    """Within it, a write on the default connection that finds a lock fails at once (a lock timeout,
    ``is_lock_timeout``) instead of waiting: for bookkeeping a request can do without, such as an API
    token's "last used" hint, which made a GET wait for a long ingest and answer 503. The wait is put
    back as it was (the request's short wait in a web write, else the settings')."""
    _set_wait(connection, NO_WAIT_SECONDS)
    try:
        yield
    finally:
        _set_wait(connection, settings.WEB_LOCK_TIMEOUT_SECONDS if _web_write.get() else None)


@receiver(connection_created)
def _bound_new_connection(sender, connection, **kwargs) -> None:
    if _web_write.get() and connection.alias == "default":
        _set_wait(connection, settings.WEB_LOCK_TIMEOUT_SECONDS)
        connection.web_lock_wait = True


class LockWaitMiddleware:
    """Bounds the lock waits of write requests and answers a lock that was not granted with 503
    (``busy_response``). Place it after the authentication and session middleware."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method in SAFE_METHODS:
            return self.get_response(request)
        # By default connections are not kept between requests (CONN_MAX_AGE 0, config/settings.py): the
        # request's connection opens inside it and gets the short wait then (``_bound_new_connection``).
        # A connection kept from an earlier request (CONN_MAX_AGE > 0) gets it now.
        token = _web_write.set(True)
        if connection.connection is not None and connection.settings_dict.get("CONN_MAX_AGE"):
            _set_wait(connection, settings.WEB_LOCK_TIMEOUT_SECONDS)
            connection.web_lock_wait = True
        try:
            return self.get_response(request)
        finally:
            _web_write.reset(token)
            if getattr(connection, "web_lock_wait", False) and connection.connection is not None:
                _set_wait(connection, None)
            connection.web_lock_wait = False

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if is_lock_timeout(exception):
            return busy_response(request)
        return None
