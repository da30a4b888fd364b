"""The API's error bodies and the handlers that answer every refusal with one: ``{"error": "...",
"details": [...]}`` (ingest refusals add ``report``). docs/decisions.md ("Hosts apply decisions"); the
status codes are listed in ``review.api.endpoints``.

The handlers answer through the ``NinjaAPI`` they are installed on (``install``), so every body is
rendered the way ninja renders the endpoints' answers.
"""

from __future__ import annotations

import functools
import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError

from lessons.services.disk import disk_full
from review.locking import busy_response, is_lock_timeout
from review.request_body import E_TOO_LARGE, E_TOO_LARGE_DETAIL, BodyRefused
from review.server_error import (
    E_DISK_FULL,
    E_DISK_FULL_DETAIL,
    E_SERVER,
    E_SERVER_DETAIL,
    RETRY_AFTER_SECONDS,
)

# Error texts: the API tests assert these exact values.
E_UNAUTHORIZED = "missing, unknown or revoked API token"
E_UNAUTHORIZED_DETAIL = "send the header: Authorization: Bearer <token>"
E_SCOPE = "this token lacks the {scope} scope"
E_HOST = "this token is limited to host {host}"
E_INGEST_HOSTS = "this token may only ingest into host {host}; nothing was written"
E_INVALID = "invalid request"
E_NOT_FOUND = "not found"
E_LESSON_NOT_FOUND = "no lesson {hash} on {scope}"
E_LESSON_AMBIGUOUS = "lesson {hash} is on several hosts; name one with ?host="
E_DECISION_NOT_FOUND = "no decision {seq}"
E_JOB_NOT_FOUND = "no ingest job {id} for this token"
E_BAD_HASH = "a lesson hash is 64 lowercase hex characters"
E_BAD_HOST = "host must match ^[a-z0-9][a-z0-9._-]{0,63}$"
E_INGEST_REFUSED = "ingest refused: {n} invalid line(s), nothing written"
E_ACK = "invalid acknowledgement"
E_ACK_KEPT = "acknowledgement kept"
E_DATABASE_DOWN = "database unavailable"
E_RETRY_DETAIL = "try again later; nothing was written"

E_METHOD = "method not allowed"
E_NO_ENDPOINT = "no such endpoint"

logger = logging.getLogger(__name__)


class ApiError(HttpError):
    """An error answered as ``{"error": message, "details": details, **extra}`` with ``status_code``."""

    def __init__(self, status_code: int, message: str, details: list | None = None, **extra: Any):
        super().__init__(status_code, message)
        self.details = details or []
        self.extra = extra


def plain_error(status: int, message: str, details: list) -> JsonResponse:
    """The error body for answers given outside ninja's handlers (unknown path, wrong method)."""
    return JsonResponse({"error": message, "details": details}, status=status)


class _ErrorAnswers:
    """The error bodies of the API's refusals, one method a kind (``install`` registers them)."""

    def __init__(self, api: NinjaAPI):
        self.api = api

    def error_response(
        self, request: HttpRequest, status: int, message: str, details: list, **extra: Any
    ) -> HttpResponse:
        return self.api.create_response(
            request, {"error": message, "details": details, **extra}, status=status
        )

    def api_error(self, request: HttpRequest, exc: ApiError) -> HttpResponse:
        return self.error_response(request, exc.status_code, exc.message, exc.details, **exc.extra)

    def unauthorized(self, request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
        response = self.error_response(request, 401, E_UNAUTHORIZED, [E_UNAUTHORIZED_DETAIL])
        response["WWW-Authenticate"] = "Bearer"
        return response

    def http_error(self, request: HttpRequest, exc: HttpError) -> HttpResponse:
        # ninja's own refusals, e.g. 400 "Cannot parse request body": the message becomes the detail
        if exc.status_code == 400:
            return self.error_response(request, 400, E_INVALID, [str(exc)])
        return self.error_response(request, exc.status_code, str(exc), [])

    def invalid(self, request: HttpRequest, exc: ValidationError) -> HttpResponse:
        details = []
        for error in exc.errors:
            where = ".".join(str(part) for part in error.get("loc", ()))
            details.append(
                f"{where}: {error.get('msg', 'invalid')}" if where else str(error.get("msg", "invalid"))
            )
        return self.error_response(request, 400, E_INVALID, details)

    def not_found(self, request: HttpRequest, exc: Http404) -> HttpResponse:
        return self.error_response(request, 404, E_NOT_FOUND, [str(exc)] if str(exc) else [])

    def too_big(self, request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
        return self.too_large_response(request)

    def too_large_response(self, request: HttpRequest) -> HttpResponse:
        limit = settings.API_MAX_BODY_BYTES
        return self.error_response(request, 413, E_TOO_LARGE, [E_TOO_LARGE_DETAIL.format(limit=limit)])

    def limit_body(self, run):
        """Refuse a body over ``API_MAX_BODY_BYTES`` from its Content-Length, before auth or any read."""

        @functools.wraps(run)
        def wrapper(request: HttpRequest, *args, **kwargs):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > settings.API_MAX_BODY_BYTES:
                return self.too_large_response(request)
            return run(request, *args, **kwargs)

        return wrapper

    def retry_later(self, request: HttpRequest, message: str, detail: str) -> HttpResponse:
        response = self.error_response(request, 503, message, [detail])
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response

    def database_down(self, request: HttpRequest, exc: OperationalError) -> HttpResponse:
        # the database restarting, unreachable or (SQLite) locked past the busy timeout: worth a retry
        if is_lock_timeout(exc):  # another writer held the rows past the web's wait (review/locking.py)
            logger.warning("API %s %s: lock not granted: %s", request.method, request.path, exc)
            return busy_response(request)
        logger.error("API %s %s: database unavailable: %s", request.method, request.path, exc)
        if disk_full(exc):
            return self.retry_later(request, E_DISK_FULL, E_DISK_FULL_DETAIL)
        return self.retry_later(request, E_DATABASE_DOWN, E_RETRY_DETAIL)

    def server_error(self, request: HttpRequest, exc: Exception) -> HttpResponse:
        # ninja would re-raise (Django's HTML 500) or, under DEBUG, answer a plain-text traceback
        logger.exception("API %s %s failed", request.method, request.path)
        if disk_full(exc):
            return self.retry_later(request, E_DISK_FULL, E_DISK_FULL_DETAIL)
        return self.error_response(request, 500, E_SERVER, [E_SERVER_DETAIL])

    def body_refused(self, request: HttpRequest, exc: BodyRefused) -> HttpResponse:
        return self.error_response(request, exc.status, exc.message, exc.details)


def install(api: NinjaAPI) -> None:
    """Answer ``api``'s refusals with the error body: ``ApiError``, a missing or bad token (401, with
    ``WWW-Authenticate``), ninja's own ``HttpError`` and validation errors (400), ``Http404``, a body
    over ``settings.API_MAX_BODY_BYTES`` (413, refused from its Content-Length before auth or any read),
    an unreadable body (``BodyRefused``: 411/413/400), a database that is down (503 with ``Retry-After``),
    a full disk (503) and any other failure (500, logged with its traceback): never Django's HTML page."""
    answers = _ErrorAnswers(api)
    api.add_exception_handler(Exception, answers.server_error)
    api.add_exception_handler(OperationalError, answers.database_down)
    api.add_exception_handler(BodyRefused, answers.body_refused)
    api.add_exception_handler(ApiError, answers.api_error)
    api.add_exception_handler(AuthenticationError, answers.unauthorized)
    api.add_exception_handler(HttpError, answers.http_error)
    api.add_exception_handler(ValidationError, answers.invalid)
    api.add_exception_handler(Http404, answers.not_found)
    api.add_exception_handler(RequestDataTooBig, answers.too_big)
    api.add_decorator(answers.limit_body, mode="view")
