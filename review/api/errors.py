"""The API's error bodies and the handlers that answer every refusal with one: ``{"error": "...",
"details": [...]}`` (ingest refusals add ``report``). spec: decisions.md ("Hosts apply decisions"); the
status codes are listed in ``review.api.endpoints``.

The handlers answer through the ``NinjaAPI`` they are installed on (``install``), so every body is
rendered the way ninja renders the endpoints' answers.
"""

from __future__ import annotations

import functools
from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError

# Error texts: the API tests assert these exact values.
E_UNAUTHORIZED = "missing, unknown or revoked API token"
E_UNAUTHORIZED_DETAIL = "send the header: Authorization: Bearer <token>"
E_SCOPE = "this token lacks the {scope} scope"
E_HOST = "this token is limited to host {host}"
E_INGEST_HOSTS = "this token may only ingest into host {host}; nothing was written"
E_TOO_LARGE = "request body too large"
E_TOO_LARGE_DETAIL = "limit is {limit} bytes"
E_INVALID = "invalid request"
E_NOT_FOUND = "not found"
E_LESSON_NOT_FOUND = "no lesson {hash} on {scope}"
E_LESSON_AMBIGUOUS = "lesson {hash} is on several hosts; name one with ?host="
E_DECISION_NOT_FOUND = "no decision {seq}"
E_BAD_HASH = "a lesson hash is 64 lowercase hex characters"
E_BAD_HOST = "host must match ^[a-z0-9][a-z0-9._-]{0,63}$"
E_INGEST_REFUSED = "ingest refused: {n} invalid line(s), nothing written"
E_ACK = "invalid acknowledgement"

E_METHOD = "method not allowed"
E_NO_ENDPOINT = "no such endpoint"


class ApiError(HttpError):
    """An error answered as ``{"error": message, "details": details, **extra}`` with ``status_code``."""

    def __init__(self, status_code: int, message: str, details: list | None = None, **extra: Any):
        super().__init__(status_code, message)
        self.details = details or []
        self.extra = extra


def plain_error(status: int, message: str, details: list) -> JsonResponse:
    """The error body for answers given outside ninja's handlers (unknown path, wrong method)."""
    return JsonResponse({"error": message, "details": details}, status=status)


def install(api: NinjaAPI) -> None:
    """Answer ``api``'s refusals with the error body: ``ApiError``, a missing or bad token (401, with
    ``WWW-Authenticate``), ninja's own ``HttpError`` and validation errors (400), ``Http404``, and a body
    over ``settings.API_MAX_BODY_BYTES`` (413, refused from its Content-Length before auth or any read)."""

    def _error_response(
        request: HttpRequest, status: int, message: str, details: list, **extra: Any
    ) -> HttpResponse:
        return api.create_response(request, {"error": message, "details": details, **extra}, status=status)

    def _api_error(request: HttpRequest, exc: ApiError) -> HttpResponse:
        return _error_response(request, exc.status_code, exc.message, exc.details, **exc.extra)

    def _unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
        response = _error_response(request, 401, E_UNAUTHORIZED, [E_UNAUTHORIZED_DETAIL])
        response["WWW-Authenticate"] = "Bearer"
        return response

    def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
        # ninja's own refusals, e.g. 400 "Cannot parse request body": the message becomes the detail
        if exc.status_code == 400:
            return _error_response(request, 400, E_INVALID, [str(exc)])
        return _error_response(request, exc.status_code, str(exc), [])

    def _invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
        details = []
        for error in exc.errors:
            where = ".".join(str(part) for part in error.get("loc", ()))
            details.append(
                f"{where}: {error.get('msg', 'invalid')}" if where else str(error.get("msg", "invalid"))
            )
        return _error_response(request, 400, E_INVALID, details)

    def _not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
        return _error_response(request, 404, E_NOT_FOUND, [str(exc)] if str(exc) else [])

    def _too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
        return _too_large_response(request)

    def _too_large_response(request: HttpRequest) -> HttpResponse:
        limit = settings.API_MAX_BODY_BYTES
        return _error_response(request, 413, E_TOO_LARGE, [E_TOO_LARGE_DETAIL.format(limit=limit)])

    def _limit_body(run):
        """Refuse a body over ``API_MAX_BODY_BYTES`` from its Content-Length, before auth or any read."""

        @functools.wraps(run)
        def wrapper(request: HttpRequest, *args, **kwargs):
            try:
                length = int(request.META.get("CONTENT_LENGTH") or 0)
            except ValueError:
                length = 0
            if length > settings.API_MAX_BODY_BYTES:
                return _too_large_response(request)
            return run(request, *args, **kwargs)

        return wrapper

    api.add_exception_handler(ApiError, _api_error)
    api.add_exception_handler(AuthenticationError, _unauthorized)
    api.add_exception_handler(HttpError, _http_error)
    api.add_exception_handler(ValidationError, _invalid)
    api.add_exception_handler(Http404, _not_found)
    api.add_exception_handler(RequestDataTooBig, _too_big)
    api.add_decorator(_limit_body, mode="view")
