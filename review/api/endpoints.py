"""The five endpoints of the JSON API: ingest, piles, one lesson, the decision log and acknowledgements.

Mounted at ``/api/v1/`` (``config/urls.py``); schema at ``/api/v1/openapi.json``, docs at ``/api/v1/docs``.
docs/interchange.md (ingest), docs/piles-and-recurrence.md ("How the piles JSON is built"), docs/decisions.md
("Exports", "Hosts apply decisions").

Authentication: ``Authorization: Bearer <token>`` (``review.services.tokens``). A token is scoped to one
host or to every host, and to ``ingest`` and/or ``read``. Ack needs ``read`` (the scope of a host that
pulls decisions). Status codes:

- 401: no token, an unknown or a revoked one;
- 403: the token lacks the scope, or the request names another host than the token's (``?host=``, a
  record of an ingested batch, the decision being acknowledged);
- 404: nothing with that name on the token's host(s): a lesson hash is not confirmed across hosts;
- 409: ``GET /lessons/{hash}`` by an all-host token when the hash is on several hosts and no ``?host=``
  says which (``details`` lists them); a ``failed`` acknowledgement of a decision already acknowledged
  ``applied`` (an applied ack is final; it stays as it was);
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

``GET /piles?limit=N&cursor=C[&host=NAME]`` pages the same way: ``{"piles": [at most N (default 100, at
most 500)], "next": the cursor of the next page, or null on the last}``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from ninja import NinjaAPI, Path, Query

from lessons.core.interchange import HEX64, HOST_NAME
from lessons.core.text import format_datetime
from lessons.ingest.passes import ingest_sources
from lessons.ingest.reading import bytes_source
from lessons.selectors.piles import piles_page
from lessons.serializers import lesson_detail_json, pile_as_json
from review.api import errors
from review.api.auth import TokenAuth, check_host_param, hosts_for, token_for
from review.api.cursors import decode_pile_cursor, encode_pile_cursor
from review.api.errors import (
    E_ACK,
    E_ACK_KEPT,
    E_BAD_HASH,
    E_DECISION_NOT_FOUND,
    E_HOST,
    E_INGEST_HOSTS,
    E_INGEST_REFUSED,
    E_INVALID,
    E_JOB_NOT_FOUND,
    E_LESSON_AMBIGUOUS,
    E_LESSON_NOT_FOUND,
    E_NOT_FOUND,
    ApiError,
)
from review.api.schemas import (
    ERROR_RESPONSES,
    AckIn,
    AckOut,
    DecisionsOut,
    ErrorOut,
    IngestErrorOut,
    JobOut,
    PilesOut,
)
from review.api.selectors import decisions_outcomes, lesson_decisions, lessons_by_hash
from review.log.selectors import decisions_since
from review.models import Decision, ImportJob
from review.request_body import E_EMPTY_BATCH, request_body_read
from review.services.acks import AckAlreadyApplied, AckRefused, decision_ack
from review.services.chain import decision_record
from review.services.chain_head import chain_head_stamp, chain_receipt
from review.services.jobs import job_create, job_enqueue, job_json

DEFAULT_LIMIT = 1000
MAX_LIMIT = 10000
MAX_SEQ = 2**63 - 1
MAX_LISTED = 100
PILES_DEFAULT_LIMIT = 100
PILES_MAX_LIMIT = 500


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
  says which (`details` lists them); a `failed` acknowledgement of a decision already acknowledged
  `applied` (an applied acknowledgement is final and stays as it was);
- 411: a chunked body this server cannot read to its end (send a `Content-Length`);
- 413: a request body over the server's size limit, refused before it is read (`details` gives the limit);
- 500: the server failed; 503 (with `Retry-After`): the database is unavailable or the disk is full, try
  again later.

An empty ingest batch is refused (400), never reported as written.

Every error body is `{"error": "...", "details": [...]}` (ingest refusals add `report`).
"""

HASH_PATTERN = HEX64.pattern
# Parameter patterns the views check themselves (answering their own messages): declared in the OpenAPI
# schema only, since ninja's own validation would answer its generic message instead.
SCHEMA_PATTERNS = {"host": HOST_NAME.pattern, "lesson_hash": HASH_PATTERN}


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
errors.install(api)


# --- ingest -------------------------------------------------------------------------------------


@api.post(
    "/ingest",
    response={
        200: dict[str, Any],
        202: JobOut,
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
    token = token_for(request, "ingest")
    check_host_param(host)
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
    only_host = token.host.name if token.host_id is not None else None
    if len(body) >= settings.INGEST_BACKGROUND_BYTES:
        job = job_create(
            kind=ImportJob.Kind.API,
            payload=body,
            options={
                "default_host": default_host,
                "only_host": only_host,
                "skip_invalid": skip_invalid,
                "dry_run": dry_run,
            },
            host=default_host or "",
            token_name=token.name,
        )
        job_enqueue(job)
        answer = _job_answer(request, job)
        response = api.create_response(request, answer, status=202)
        response["Location"] = answer["url"]
        return response
    report = ingest_sources(
        sources=[bytes_source(body, name="body")],
        default_host=default_host,
        only_host=only_host,
        skip_invalid=skip_invalid,
        dry_run=dry_run,
    )
    if report.outside_host_count:  # nothing was written: no record may reach outside the token's host
        raise ApiError(403, E_INGEST_HOSTS.format(host=only_host), report.outside_host[:MAX_LISTED])
    if report.error_count and not skip_invalid:
        raise ApiError(
            400, E_INGEST_REFUSED.format(n=report.error_count), report.error_lines(), report=report.as_dict()
        )
    return report.as_dict()


def _job_answer(request: HttpRequest, job: ImportJob) -> dict:
    return {**job_json(job), "url": reverse("api:job", kwargs={"job_id": job.pk})}


@api.get(
    "/jobs/{job_id}",
    response={200: JobOut, **ERROR_RESPONSES},
    summary="A background ingest: its state, progress and, once finished, the import report",
)
def job(request: HttpRequest, job_id: int = Path(..., ge=1, le=MAX_SEQ)):
    """The job a large ingest answered with (202, ``Location``). ``state`` is queued, running, succeeded
    or failed; ``progress`` counts the lines of the current pass (validate, lessons, references);
    ``report`` is the import report once finished. A failed job says why in ``error`` (a refused batch
    keeps its report, nothing written). Needs the ``ingest`` scope; a host token sees its host's jobs."""
    token = token_for(request, "ingest")
    found = ImportJob.objects.filter(pk=job_id, kind=ImportJob.Kind.API).first()
    if found is None or (token.host_id is not None and found.options.get("only_host") != token.host.name):
        raise ApiError(404, E_NOT_FOUND, [E_JOB_NOT_FOUND.format(id=job_id)])
    return _job_answer(request, found)


# --- reads --------------------------------------------------------------------------------------


@api.get(
    "/piles",
    response={200: PilesOut, **ERROR_RESPONSES},
    summary="Over-budget entities (piles) and their members, a page at a time",
)
def piles(
    request: HttpRequest,
    host: str | None = Query(None, description="only this host"),
    limit: int = Query(PILES_DEFAULT_LIMIT, ge=1, le=PILES_MAX_LIMIT, description="at most this many piles"),
    cursor: str | None = Query(None, description="the `next` of the previous page; absent for the first"),
):
    """``{"piles": [...], "next": cursor or null}`` sorted by host, namespace, subject; limited to the
    token's host. ``next`` continues after the last pile of this page (a keyset: piles written or retired
    meanwhile never shift a page); null on the last page."""
    token = token_for(request, "read")
    hosts = hosts_for(token, host)
    try:
        after = decode_pile_cursor(cursor) if cursor is not None else None
    except ValueError as exc:
        raise ApiError(400, E_INVALID, [f"query.cursor: {exc}"]) from None
    page, next_key = piles_page(host=hosts[0] if hosts else None, after=after, limit=limit)
    return {
        "piles": [pile_as_json(p) for p in page],
        "next": encode_pile_cursor(next_key) if next_key else None,
    }


@api.get(
    "/lessons/{lesson_hash}",
    response={200: dict[str, Any], 409: ErrorOut, **ERROR_RESPONSES},
    summary="One lesson: status, text, latest verdict, recurrence, verdicts, versions, decisions",
)
def lesson(
    request: HttpRequest,
    lesson_hash: str = Path(..., description="64 lowercase hex"),
    host: str | None = Query(None, description="the lesson's host (needed when the hash is on several)"),
):
    token = token_for(request, "read")
    hosts = hosts_for(token, host)
    if not HEX64.fullmatch(lesson_hash):
        raise ApiError(400, E_INVALID, [E_BAD_HASH])
    found = lessons_by_hash(lesson_hash=lesson_hash, hosts=hosts)
    if not found:
        scope = f"host {hosts[0]}" if hosts else "any host"
        raise ApiError(404, E_NOT_FOUND, [E_LESSON_NOT_FOUND.format(hash=lesson_hash, scope=scope)])
    if len(found) > 1:
        raise ApiError(409, E_LESSON_AMBIGUOUS.format(hash=lesson_hash), [x.host.name for x in found])
    return lesson_detail_json(found[0], decisions=lesson_decisions(lesson=found[0]))


@api.get(
    "/decisions",
    response={200: DecisionsOut, **ERROR_RESPONSES},
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
    chain; ``head`` is the chain head when the page was read, a receipt the host keeps (``{"seq", "hash",
    "at", "mac"}``, also in the X-Chain-Head-* headers; checked with ``verify_decisions --receipt``);
    ``outcomes``: the derived outcome of each decision of the page that has one, by seq, outside the
    hashed records."""
    token = token_for(request, "read")
    hosts = hosts_for(token, host)
    receipt = chain_receipt()  # read before the rows (docs/decisions-verify.md)
    rows = decisions_since(since=since, hosts=hosts, limit=limit + 1)
    page = rows[:limit]
    chain_head_stamp(response, receipt=receipt)
    return {
        "decisions": [decision_record(d) for d in page],
        "next_since": page[-1].seq if page else since,
        "has_more": len(rows) > limit,
        "head": receipt,
        "outcomes": decisions_outcomes(page),
    }


@api.post(
    "/decisions/{seq}/ack",
    response={200: AckOut, 409: ErrorOut, **ERROR_RESPONSES},
    summary="Acknowledge a decision: applied, or failed with a detail",
)
def ack(request: HttpRequest, payload: AckIn, seq: int = Path(..., ge=1, le=MAX_SEQ)):
    """Record the host's status for decision ``seq``: the latest acknowledgement wins, but an ``applied`` one
    is final (a later ``failed`` is answered 409 and not recorded); ``head`` is the chain head's receipt,
    as ``GET /decisions`` gives it."""
    token = token_for(request, "read")
    decision = Decision.objects.filter(seq=seq).first()
    if decision is None:
        raise ApiError(404, E_NOT_FOUND, [E_DECISION_NOT_FOUND.format(seq=seq)])
    if token.host_id is not None and decision.host != token.host.name:
        raise ApiError(403, E_HOST.format(host=token.host.name))
    try:
        row = decision_ack(
            decision=decision, status=payload.status, detail=payload.detail or "", token_name=token.name
        )
    except AckAlreadyApplied as exc:
        raise ApiError(409, E_ACK_KEPT, [str(exc)]) from None
    except AckRefused as exc:
        raise ApiError(400, E_ACK, [str(exc)]) from None
    return {
        "seq": decision.seq,
        "status": row.status,
        "detail": row.detail,
        "acked_at": format_datetime(row.acked_at),
        "head": chain_receipt(),  # the receipt of the log the host acknowledged into
    }
