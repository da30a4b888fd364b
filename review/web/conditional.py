"""Conditional reads, shared by the JSON API and the signed-in pages: a strong ``ETag`` that is a digest
of the data version (``lessons.services.data_version.current``, read before anything else) and of what
else the answer depends on, and whether a request's ``If-None-Match`` holds it.

Any committed write raises the version, so a tag stops matching as soon as anything a page or a read
shows may have changed. docs: docs/api.md ("Conditional reads"), docs/production.md ("Cache").
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from django.http import HttpRequest
from django.utils.http import parse_etags


def etag(version: str, parts: Iterable[str]) -> str:
    """The quoted strong tag of an answer: 32 hex digits of SHA-256 over ``version`` and ``parts``."""
    return '"' + hashlib.sha256("\0".join((version, *parts)).encode()).hexdigest()[:32] + '"'


def matches(request: HttpRequest, tag: str) -> bool:
    """Whether ``request``'s ``If-None-Match`` holds ``tag`` (weak or strong). ``*`` is not honoured: it
    would answer before anything about the request (its token, its session) is checked."""
    wanted = request.headers.get("If-None-Match")
    if not wanted:
        return False
    tags = parse_etags(wanted)
    return tag in tags or f"W/{tag}" in tags
