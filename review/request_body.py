"""Reading a request body as a stream, up to a limit, whether its length is declared or it came chunked.

Django reads ``request.body`` only up to ``CONTENT_LENGTH`` and takes a missing one as 0, so a chunked POST
(``curl -T -``) looked empty and an ingest answered "written" with nothing stored (issue 13, fault 1).
``request.body`` is also held to ``DATA_UPLOAD_MAX_MEMORY_SIZE``, the small cap of forms; the API has its
own, larger limit. So the API reads its body here:

- a declared ``Content-Length`` over the limit is refused before anything is read;
- with no ``Content-Length``, a chunked body is read from the server's input when the server says it
  de-chunked it and marks its end (``wsgi.input_terminated``, set by gunicorn); otherwise 411;
- with neither ``Content-Length`` nor ``Transfer-Encoding`` the body is empty (RFC 9112, 6.3);
- the body is read in pieces and refused as soon as it passes the limit (never held whole beyond it).

Every other route gets its body from Django (forms, the zip upload), which reads a multipart file part in
full, spooling it to disk, whatever ``DATA_UPLOAD_MAX_MEMORY_SIZE`` says (that cap counts only the fields
that are not files): a 512 MiB "file" posted to the sign-in page was read before the CSRF check refused it
(issue 21, fault 7). So ``review.middleware.BodyLimitMiddleware`` holds each request to its route's limit
(``route_body_limit``) before anything reads the body: a declared length over it is refused unread (413),
and a chunked body, which Django would not read at all, is refused (411) outside the API.
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest
from django.urls import reverse

from lessons.importers.zipped import MAX_ZIP_BYTES
from review.web.paths import API_PREFIX

E_EMPTY_BATCH = "empty batch: the body holds no records; nothing was written"
E_LENGTH_REQUIRED = "Content-Length required"
E_LENGTH_REQUIRED_DETAIL = (
    "send a Content-Length header, or a chunked body through a server that de-chunks it"
)
# A compressed body was read as text and refused as "not valid UTF-8" (the attacker's finding 10).
E_ENCODING = "Content-Encoding {encoding} is not supported"
E_ENCODING_DETAIL = "send the body uncompressed (no Content-Encoding, or identity)"
E_BAD_LENGTH = "invalid Content-Length"
E_TOO_LARGE = "request body too large"
E_TOO_LARGE_DETAIL = "limit is {limit} bytes"

PIECE_BYTES = 64 * 1024
# The upload page's body: the zip (lessons.importers.zipped.MAX_ZIP_BYTES) plus its form fields and
# multipart framing, which take well under this.
UPLOAD_FORM_BYTES = 64 * 1024

PAGE_TOO_LARGE = (
    "Refused: the request body is {size} bytes, more than the {limit} bytes this page accepts{what}. "
    "Nothing was read or saved."
)
PAGE_UPLOAD_WHAT = " (a zip of at most 20 MB, with the form fields)"
PAGE_LENGTH_REQUIRED = (
    "Refused: this page needs a request with a Content-Length (a chunked body is accepted by the API "
    "only). Nothing was read or saved."
)


class BodyRefused(Exception):
    """A body that is not read: ``status`` (400, 411, 413 or 415), ``message`` and ``details`` for the
    answer."""

    def __init__(self, status: int, message: str, details: list[str] | None = None):
        super().__init__(message)
        self.status = status
        self.message = message
        self.details = details or []


def route_body_limit(path: str) -> tuple[int, str]:
    """The largest body (bytes) a request to ``path`` may send, and what the page accepts (words for
    ``PAGE_TOO_LARGE``, empty for none). The API: ``API_MAX_BODY_BYTES``; the zip upload: the largest zip
    and ``UPLOAD_FORM_BYTES``; every other page (forms, the admin): ``DATA_UPLOAD_MAX_MEMORY_SIZE``.
    docs/production.md, "Limits"."""
    if path.startswith(API_PREFIX):
        return settings.API_MAX_BODY_BYTES, ""
    if path == reverse("review:import_altimate"):
        return MAX_ZIP_BYTES + UPLOAD_FORM_BYTES, PAGE_UPLOAD_WHAT
    return settings.DATA_UPLOAD_MAX_MEMORY_SIZE, ""


def declared_length(request: HttpRequest) -> int | None:
    """The request's ``Content-Length`` (bytes); None when it has none. Raises ``BodyRefused`` (400) for
    one that is not a whole number of at least 0."""
    declared = request.META.get("CONTENT_LENGTH")
    if declared in (None, ""):
        return None
    try:
        length = int(declared)
    except ValueError:
        raise BodyRefused(400, E_BAD_LENGTH) from None
    if length < 0:
        raise BodyRefused(400, E_BAD_LENGTH)
    return length


def body_too_large(limit: int) -> BodyRefused:
    return BodyRefused(413, E_TOO_LARGE, [E_TOO_LARGE_DETAIL.format(limit=limit)])


def request_body_read(*, request: HttpRequest, limit: int) -> bytes:
    """The whole body of ``request`` (bytes, at most ``limit`` bytes).

    Raises ``BodyRefused``: 415 for a ``Content-Encoding`` (a compressed body) other than identity, 400 for
    a Content-Length that is not a whole number, 411 for a body of unknown length the server cannot hand
    over to its end, 413 past ``limit`` (declared or counted while reading).
    """
    encoding = request.META.get("HTTP_CONTENT_ENCODING", "").strip().lower()
    if encoding and encoding != "identity":
        raise BodyRefused(415, E_ENCODING.format(encoding=encoding), [E_ENCODING_DETAIL])
    length = declared_length(request)
    if length is not None:
        if length > limit:
            raise body_too_large(limit)
        stream = request  # Django's stream, bounded by the declared length
    elif not request.META.get("HTTP_TRANSFER_ENCODING"):
        return b""
    elif chunked(request) and request.META.get("wsgi.input_terminated"):
        stream = request.META["wsgi.input"]
    else:
        raise BodyRefused(411, E_LENGTH_REQUIRED, [E_LENGTH_REQUIRED_DETAIL])
    pieces: list[bytes] = []
    total = 0
    while True:
        piece = stream.read(min(PIECE_BYTES, limit + 1 - total))
        if not piece:
            return b"".join(pieces)
        total += len(piece)
        if total > limit:
            raise body_too_large(limit)
        pieces.append(piece)


def chunked(request: HttpRequest) -> bool:
    """Whether the request says its body comes in chunks (``Transfer-Encoding: chunked``)."""
    codings = request.META.get("HTTP_TRANSFER_ENCODING", "")
    return "chunked" in [c.strip().lower() for c in codings.split(",")]
