"""Conditional reads of the JSON API: an ``ETag`` on every successful GET, and ``304 Not Modified`` without
running the endpoint when the client's ``If-None-Match`` holds the tag of the same read.

The tag is a digest of the data version (``lessons.services.data_version.current``, taken before anything
else is read), the path with its query, and the ``Authorization`` header: another token, another page or
any committed write since gives another tag. A revoked token's revocation is a write, so its old tags stop
matching with it. docs: docs/api.md ("Conditional reads").
"""

from __future__ import annotations

from collections.abc import Callable

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from django.utils.cache import patch_vary_headers

from lessons.services.data_version import current
from review.web.conditional import etag, matches

READS = ("GET", "HEAD")


def read_etag(request: HttpRequest, version: str) -> str:
    """The quoted strong ``ETag`` of a read: 32 hex digits of SHA-256 over the version, the full path and
    the ``Authorization`` header."""
    return etag(version, (request.get_full_path(), request.headers.get("Authorization", "")))


def conditional(view: Callable[..., HttpResponse], request: HttpRequest, *args, **kwargs) -> HttpResponse:
    """``view``'s answer to ``request``; for a read, ``304`` (no body, the ``ETag`` again) when
    ``If-None-Match`` holds this read's tag, else the answer with its ``ETag`` when it is a 200. Both vary
    by ``Authorization``. One query (the version) before ``view`` runs."""
    if request.method not in READS:
        return view(request, *args, **kwargs)
    try:
        version = current()
    except DatabaseError:  # the endpoint meets it again and answers it (503), as without this
        return view(request, *args, **kwargs)
    tag = read_etag(request, version)
    if matches(request, tag):
        response: HttpResponse = HttpResponseNotModified()
        response["ETag"] = tag
    else:
        response = view(request, *args, **kwargs)
        if response.status_code != 200:
            return response
        response["ETag"] = tag
    patch_vary_headers(response, ["Authorization"])
    return response
