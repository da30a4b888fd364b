"""The JSON API hosts use: ingest, piles, one lesson, the decision log and acknowledgements.

Mounted at ``/api/v1/`` (``config/urls.py``); schema at ``/api/v1/openapi.json``, docs at ``/api/v1/docs``.
spec: interchange.md (ingest), piles.md ("JSON output"), decisions.md ("Exports", "Hosts apply decisions").

Authentication: ``Authorization: Bearer <token>`` (``review.services.tokens``). A token is scoped to one
host or to every host, and to ``ingest`` and/or ``read``. Ack needs ``read`` (the scope of a host that
pulls decisions). Status codes:

- 401: no token, an unknown or a revoked one;
- 403: the token lacks the scope, or the request names another host than the token's (``?host=``, a
  record of an ingested batch, the decision being acknowledged);
- 404: nothing with that name on the token's host(s): a lesson hash is not confirmed across hosts;
- 409: ``GET /lessons/{hash}`` by an all-host token when the hash is on several hosts and no ``?host=``
  says which (``details`` lists them);
- 400: invalid parameters or body, or an ingest batch refused (``report`` holds the import report);
- 411: a chunked ingest body the server cannot hand over to its end (``review.request_body``);
- 413: a body over ``settings.API_MAX_BODY_BYTES``, refused before it is read (or, chunked, as soon as it
  passes the limit);
- 500: a failure of the server (logged with its traceback); 503 with ``Retry-After`` when the database
  is unavailable or the disk is full. Both in the JSON error body, never HTML.

Every error body is ``{"error": "...", "details": [...]}`` (ingest refusals add ``report``).

``GET /decisions?since=SEQ&limit=N[&host=NAME]`` pages through the log: ``{"decisions": [records with
seq > SEQ in seq order, at most N (default 1000, at most 10000)], "next_since": the last seq returned (or
SEQ), "has_more": bool}``. A host pulls with ``since=next_since`` until ``has_more`` is false.
"""

from __future__ import annotations

import functools
import logging
import re
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.core.exceptions import RequestDataTooBig
from django.db import OperationalError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseNotAllowed, JsonResponse
from django.urls import URLPattern, URLResolver, path
from ninja import Field, NinjaAPI, Path, Query, Schema
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import HttpBearer

from lessons.core.interchange import HOST_NAME, HostRecord, RecordError, parse_line
from lessons.core.text import format_datetime
from lessons.selectors.piles import piles_json
from lessons.services.disk import disk_full
from lessons.services.ingest import ingest_sources
from lessons.services.reading import bytes_source, iter_lines
from review.models import ApiToken, Decision
from review.request_body import E_EMPTY_BATCH, E_TOO_LARGE, E_TOO_LARGE_DETAIL, BodyRefused, request_body_read
from review.selectors_api import lesson_detail_json, lessons_by_hash
from review.selectors_log import decisions_since
from review.server_error import (
    E_DISK_FULL,
    E_DISK_FULL_DETAIL,
    E_SERVER,
    E_SERVER_DETAIL,
    RETRY_AFTER_SECONDS,
)
from review.services.acks import AckRefused, decision_ack
from review.services.chain import decision_record
from review.services.chain_head import chain_head, chain_head_stamp
from review.services.tokens import token_authenticate

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
E_BAD_HASH = "a lesson hash is 64 lowercase hex characters"
E_BAD_HOST = "host must match ^[a-z0-9][a-z0-9._-]{0,63}$"
E_INGEST_REFUSED = "ingest refused: {n} invalid line(s), nothing written"
E_ACK = "invalid acknowledgement"

E_DATABASE_DOWN = "database unavailable"
E_RETRY_DETAIL = "try again later; nothing was written"

DEFAULT_LIMIT = 1000
MAX_LIMIT = 10000
MAX_SEQ = 2**63 - 1
MAX_LISTED = 100
HASH_PATTERN = "^[0-9a-f]{64}$"
_HEX64 = re.compile(HASH_PATTERN)
ACK_STATUSES = ["applied", "failed"]
# Parameter patterns the views check themselves (answering their own messages): declared in the OpenAPI
# schema only, since ninja's own validation would answer its generic message instead.
SCHEMA_PATTERNS = {"host": HOST_NAME.pattern, "lesson_hash": HASH_PATTERN}
logger = logging.getLogger(__name__)


class ApiError(HttpError):
    """An error answered as ``{"error": message, "details": details, **extra}`` with ``status_code``."""

    def __init__(self, status_code: int, message: str, details: list | None = None, **extra: Any):
        super().__init__(status_code, message)
        self.details = details or []
        self.extra = extra


class TokenAuth(HttpBearer):
    """``Authorization: Bearer <token>`` -> the live ``ApiToken`` (``request.auth``), or 401."""

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        return token_authenticate(token.strip())


# What the docs page (/api/v1/docs) tells a host developer: how to call, what comes back, no internals.
API_DESCRIPTION = """\
The API a host uses to send its lessons and to read the reviewers' decisions.

**Authentication.** Send `Authorization: Bearer <token>` with every call. An admin creates the token
(`manage.py create_token`); it is limited to one host or open to every host, and carries the `ingest`
and/or `read` scope. Acknowledging a decision needs `read`.

**Pulling decisions.** `GET /api/v1/decisions?since=SEQ&limit=N[&host=NAME]` returns
`{"decisions": [...], "next_since": n, "has_more": bool}`: the records with a seq greater than SEQ, in seq
order, at most N (default 1000, at most 10000). Call again with `since=next_since` until `has_more` is
false, apply each record, then acknowledge it with `POST /api/v1/decisions/{seq}/ack`
(`{"status": "applied"}` or `{"status": "failed", "detail": "..."}`).

**Status codes.**

- 400: invalid parameters or body, or an ingest batch refused (`report` holds the import report);
- 401: no token, or an unknown or revoked one;
- 403: the token lacks the scope, or the request names another host than the token's (`?host=`, a record
  of an ingested batch, the decision being acknowledged);
- 404: nothing with that name on the token's host(s);
- 409: `GET /lessons/{hash}` with an every-host token when the hash is on several hosts and no `?host=`
  says which (`details` lists them);
- 411: a chunked body this server cannot read to its end (send a `Content-Length`);
- 413: a request body over the server's size limit, refused before it is read (`details` gives the limit);
- 500: the server failed; 503 (with `Retry-After`): the database is unavailable or the disk is full, try
  again later.

An empty ingest batch is refused (400), never reported as written.

Every error body is `{"error": "...", "details": [...]}` (ingest refusals add `report`).
"""


class _DeclaredApi(NinjaAPI):
    """``NinjaAPI`` whose schema also declares ``SCHEMA_PATTERNS`` on the parameters of those names."""

    def get_openapi_schema(self, *args, **kwargs):
        schema = super().get_openapi_schema(*args, **kwargs)
        for operations in schema["paths"].values():
            for operation in operations.values():
                for parameter in operation.get("parameters", []):
                    if parameter["name"] in SCHEMA_PATTERNS:
                        parameter["schema"]["pattern"] = SCHEMA_PATTERNS[parameter["name"]]
        return schema


api = _DeclaredApi(
    title="Lesson Pile Review API",
    version="1",
    description=API_DESCRIPTION,
    urls_namespace="api",
    auth=TokenAuth(),
)


def _error_response(
    request: HttpRequest, status: int, message: str, details: list, **extra: Any
) -> HttpResponse:
    return api.create_response(request, {"error": message, "details": details, **extra}, status=status)


@api.exception_handler(ApiError)
def _api_error(request: HttpRequest, exc: ApiError) -> HttpResponse:
    return _error_response(request, exc.status_code, exc.message, exc.details, **exc.extra)


@api.exception_handler(AuthenticationError)
def _unauthorized(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    response = _error_response(request, 401, E_UNAUTHORIZED, [E_UNAUTHORIZED_DETAIL])
    response["WWW-Authenticate"] = "Bearer"
    return response


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    # ninja's own refusals, e.g. 400 "Cannot parse request body": the message becomes the detail
    if exc.status_code == 400:
        return _error_response(request, 400, E_INVALID, [str(exc)])
    return _error_response(request, exc.status_code, str(exc), [])


@api.exception_handler(ValidationError)
def _invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    details = []
    for error in exc.errors:
        where = ".".join(str(part) for part in error.get("loc", ()))
        details.append(
            f"{where}: {error.get('msg', 'invalid')}" if where else str(error.get("msg", "invalid"))
        )
    return _error_response(request, 400, E_INVALID, details)


@api.exception_handler(Http404)
def _not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return _error_response(request, 404, E_NOT_FOUND, [str(exc)] if str(exc) else [])


@api.exception_handler(OperationalError)
def _database_down(request: HttpRequest, exc: OperationalError) -> HttpResponse:
    # the database restarting, unreachable or (SQLite) locked past the busy timeout: worth a retry
    logger.error("API %s %s: database unavailable: %s", request.method, request.path, exc)
    if disk_full(exc):
        return _disk_full(request)
    response = _error_response(request, 503, E_DATABASE_DOWN, [E_RETRY_DETAIL])
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


def _disk_full(request: HttpRequest) -> HttpResponse:
    response = _error_response(request, 503, E_DISK_FULL, [E_DISK_FULL_DETAIL])
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


@api.exception_handler(Exception)
def _server_error(request: HttpRequest, exc: Exception) -> HttpResponse:
    # ninja would re-raise (Django's HTML 500) or, under DEBUG, answer a plain-text traceback
    logger.exception("API %s %s failed", request.method, request.path)
    if disk_full(exc):
        return _disk_full(request)
    return _error_response(request, 500, E_SERVER, [E_SERVER_DETAIL])


@api.exception_handler(BodyRefused)
def _body_refused(request: HttpRequest, exc: BodyRefused) -> HttpResponse:
    return _error_response(request, exc.status, exc.message, exc.details)


@api.exception_handler(RequestDataTooBig)
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


api.add_decorator(_limit_body, mode="view")


# --- scope checks -------------------------------------------------------------------------------


def _token(request: HttpRequest, scope: str) -> ApiToken:
    token: ApiToken = request.auth  # type: ignore[attr-defined]
    if not (token.can_ingest if scope == "ingest" else token.can_read):
        raise ApiError(403, E_SCOPE.format(scope=scope))
    return token


def _check_host_param(host: str | None) -> None:
    if host is not None and not HOST_NAME.fullmatch(host):  # fullmatch: "$" would let "name\n" through
        raise ApiError(400, E_INVALID, [E_BAD_HOST])


def _hosts_for(token: ApiToken, host: str | None) -> list[str] | None:
    """The host names a request may read: ``[host]``, the token's host, or None (every host).

    403 when ``host`` names another host than a host-scoped token's.
    """
    _check_host_param(host)
    if token.host_id is not None:
        if host is not None and host != token.host.name:
            raise ApiError(403, E_HOST.format(host=token.host.name))
        return [token.host.name]
    return [host] if host is not None else None


# --- schemas ------------------------------------------------------------------------------------


class ErrorOut(Schema):
    error: str
    details: list[Any]


class IngestErrorOut(ErrorOut):
    report: dict[str, Any] | None = None


class ChainHeadOut(Schema):
    seq: int = Field(..., description="the seq the decision log ends with (0 before the first decision)")
    hash: str = Field(..., description="that record's hash: a host whose last record differs was cut short")


class DecisionsOut(Schema):
    decisions: list[dict[str, Any]]
    next_since: int
    has_more: bool
    head: ChainHeadOut


class AckIn(Schema):
    status: str = Field(..., description='"applied" or "failed"', json_schema_extra={"enum": ACK_STATUSES})
    detail: str | None = Field(None, description="why it failed (at most 2000 characters)")


class AckOut(Schema):
    seq: int
    status: str
    detail: str
    acked_at: str


_ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 413: ErrorOut}


# --- ingest -------------------------------------------------------------------------------------


def _foreign_hosts(body: bytes, *, default_host: str | None, allowed: str) -> list[str]:
    """Lines of ``body`` whose record names a host other than ``allowed``: ``["line 3: host x", ...]``.

    A first validating pass for a host-scoped token, so that nothing is written when any record reaches
    outside its host. Invalid lines are left to the ingest report.
    """
    found: list[str] = []
    for number, text, _size in iter_lines(bytes_source(body)):
        if text is None:
            continue
        try:
            record = parse_line(text, default_host=default_host)
        except RecordError:
            continue
        if record is None:
            continue
        name = record.name if isinstance(record, HostRecord) else record.host
        if name != allowed:
            found.append(f"line {number}: host {name}")
    return found


@api.post(
    "/ingest",
    response={
        200: dict[str, Any],
        400: IngestErrorOut,
        401: ErrorOut,
        403: ErrorOut,
        411: ErrorOut,
        413: ErrorOut,
    },
    summary="Send interchange records (JSON Lines in the body); answers the import report",
    openapi_extra={
        "requestBody": {
            "required": True,
            "content": {"application/x-ndjson": {"schema": {"type": "string"}}},
        }
    },
)
def ingest(
    request: HttpRequest,
    host: str | None = Query(None, description="default host for records without one"),
    skip_invalid: bool = Query(False, description="write the valid lines, report the invalid ones"),
    dry_run: bool = Query(False, description="report what would happen, write nothing"),
):
    """The import report: lines read, records created, unchanged, updated, held or rejected, and the
    errors by line. A batch with an invalid line is refused whole (400, the report in ``report``) unless
    ``skip_invalid`` is set."""
    token = _token(request, "ingest")
    _check_host_param(host)
    default_host = host
    if token.host_id is not None:
        own = token.host.name
        if host is not None and host != own:
            raise ApiError(403, E_HOST.format(host=own))
        default_host = own
    # streamed, chunked or not; never request.body (held to the 2 MiB cap of forms)
    body = request_body_read(request=request, limit=settings.API_MAX_BODY_BYTES)
    if not body.strip():
        raise ApiError(400, E_EMPTY_BATCH)
    if token.host_id is not None:
        foreign = _foreign_hosts(body, default_host=default_host, allowed=token.host.name)
        if foreign:
            raise ApiError(403, E_INGEST_HOSTS.format(host=token.host.name), foreign[:MAX_LISTED])
    report = ingest_sources(
        sources=[bytes_source(body, name="body")],
        default_host=default_host,
        skip_invalid=skip_invalid,
        dry_run=dry_run,
    )
    if report.error_count and not skip_invalid:
        raise ApiError(
            400, E_INGEST_REFUSED.format(n=report.error_count), report.error_lines(), report=report.as_dict()
        )
    return report.as_dict()


# --- reads --------------------------------------------------------------------------------------


@api.get(
    "/piles",
    response={200: dict[str, Any], **_ERRORS},
    summary="Over-budget entities (piles) and their members",
)
def piles(request: HttpRequest, host: str | None = Query(None, description="only this host")):
    """``{"piles": [...]}`` sorted by host, namespace, subject; limited to the token's host."""
    token = _token(request, "read")
    hosts = _hosts_for(token, host)
    if hosts is None:
        return piles_json()
    return piles_json(host=hosts[0])


@api.get(
    "/lessons/{lesson_hash}",
    response={200: dict[str, Any], 409: ErrorOut, **_ERRORS},
    summary="One lesson: status, text, latest verdict, recurrence, verdicts, versions, decisions",
)
def lesson(
    request: HttpRequest,
    lesson_hash: str = Path(..., description="64 lowercase hex"),
    host: str | None = Query(None, description="the lesson's host (needed when the hash is on several)"),
):
    token = _token(request, "read")
    hosts = _hosts_for(token, host)
    if not _HEX64.fullmatch(lesson_hash):
        raise ApiError(400, E_INVALID, [E_BAD_HASH])
    found = lessons_by_hash(lesson_hash=lesson_hash, hosts=hosts)
    if not found:
        scope = f"host {hosts[0]}" if hosts else "any host"
        raise ApiError(404, E_NOT_FOUND, [E_LESSON_NOT_FOUND.format(hash=lesson_hash, scope=scope)])
    if len(found) > 1:
        raise ApiError(409, E_LESSON_AMBIGUOUS.format(hash=lesson_hash), [x.host.name for x in found])
    return lesson_detail_json(found[0])


@api.get(
    "/decisions",
    response={200: DecisionsOut, **_ERRORS},
    summary="The decision log after a seq, in seq order",
)
def decisions(
    request: HttpRequest,
    since: int = Query(0, ge=0, le=MAX_SEQ, description="return records with seq greater than this"),
    limit: int = Query(DEFAULT_LIMIT, ge=1, le=MAX_LIMIT, description="at most this many records"),
    host: str | None = Query(None, description="only this host's decisions"),
    response: HttpResponse = None,  # ninja's temporal response: the head also rides in headers
):
    """``{"decisions": [...], "next_since": n, "has_more": bool, "head": {"seq", "hash"}}``: each record
    with its seq, time, actor, action, entity, lesson or draft, reason, evidence and its place in the hash
    chain; ``head`` is the chain head when the page was read (also in X-Chain-Head-Seq/-Hash)."""
    token = _token(request, "read")
    hosts = _hosts_for(token, host)
    head = chain_head()  # read before the rows (docs/decisions-verify.md)
    rows = decisions_since(since=since, hosts=hosts, limit=limit + 1)
    page = rows[:limit]
    chain_head_stamp(response, head=head)
    return {
        "decisions": [decision_record(d) for d in page],
        "next_since": page[-1].seq if page else since,
        "has_more": len(rows) > limit,
        "head": {"seq": head[0], "hash": head[1]},
    }


@api.post(
    "/decisions/{seq}/ack",
    response={200: AckOut, **_ERRORS},
    summary="Acknowledge a decision: applied, or failed with a detail",
)
def ack(request: HttpRequest, payload: AckIn, seq: int = Path(..., ge=1, le=MAX_SEQ)):
    """Record the host's status for decision ``seq`` (the latest acknowledgement wins)."""
    token = _token(request, "read")
    decision = Decision.objects.filter(seq=seq).first()
    if decision is None:
        raise ApiError(404, E_NOT_FOUND, [E_DECISION_NOT_FOUND.format(seq=seq)])
    if token.host_id is not None and decision.host != token.host.name:
        raise ApiError(403, E_HOST.format(host=token.host.name))
    try:
        row = decision_ack(
            decision=decision, status=payload.status, detail=payload.detail or "", token_name=token.name
        )
    except AckRefused as exc:
        raise ApiError(400, E_ACK, [str(exc)]) from None
    return {
        "seq": decision.seq,
        "status": row.status,
        "detail": row.detail,
        "acked_at": format_datetime(row.acked_at),
    }


# --- URLs ---------------------------------------------------------------------------------------

E_METHOD = "method not allowed"
E_NO_ENDPOINT = "no such endpoint"


def _plain_error(status: int, message: str, details: list) -> JsonResponse:
    """The error body for answers given outside ninja's handlers (unknown path, wrong method)."""
    return JsonResponse({"error": message, "details": details}, status=status)


def _api_view(view):
    """Exempt from the login redirect (the API authenticates by token, not session) and answer a 404 or a
    405 that ninja leaves to Django with the API's error body."""

    @functools.wraps(view)  # keeps csrf_exempt: bearer calls carry no CSRF token
    def wrapper(request: HttpRequest, *args, **kwargs):
        try:
            response = view(request, *args, **kwargs)
        except Http404:
            return _plain_error(404, E_NOT_FOUND, [f"{E_NO_ENDPOINT}: {request.path}"])
        if isinstance(response, HttpResponseNotAllowed):
            allowed = _plain_error(405, E_METHOD, [f"allowed: {response.get('Allow', '')}"])
            allowed["Allow"] = response.get("Allow", "")  # RFC 9110: a 405 names what is allowed
            return allowed
        return response

    return login_not_required(wrapper)


@login_not_required
def _unknown_endpoint(request: HttpRequest, rest: str = "") -> JsonResponse:
    return _plain_error(404, E_NOT_FOUND, [f"{E_NO_ENDPOINT}: {request.path}"])


def _wrap(patterns: list) -> None:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            _wrap(pattern.url_patterns)
        elif isinstance(pattern, URLPattern):
            pattern.callback = _api_view(pattern.callback)


def api_urls():
    """``api.urls`` with every view wrapped by ``_api_view``, then a JSON 404 for any other path under
    the mount point: for ``path("api/v1/", api_urls())``."""
    patterns, app_name, namespace = api.urls
    _wrap(patterns)
    patterns.append(path("<path:rest>", _unknown_endpoint, name="unknown-endpoint"))
    return patterns, app_name, namespace
