"""The lesson an address names (``/lessons/<host>/<hash>/``), or the problem page. review/web/lookups.py."""

from __future__ import annotations

from django.http import HttpRequest

from lessons.core.interchange import HEX64
from review.lessons.selectors import LessonDetail, lesson_detail
from review.web.fragments import fragment
from review.web.lookups import NotFound, has_nul

LESSON_UNKNOWN = "Host {host!r} has no lesson {hash}."
LESSON_HASH_INVALID = "{hash!r} is not a lesson hash: a lesson is named by its 64 lowercase hex characters."


def get_lesson_or_404(host: str, lesson_hash: str, *, request: HttpRequest | None = None) -> LessonDetail:
    """The lesson page's detail of ``(host, hash)``; ``NotFound`` for a malformed hash or no such lesson.
    With ``request`` (a page that only reads), the detail is kept by data version
    (``review.web.fragments``); a page that writes reads it fresh."""
    if not HEX64.fullmatch(lesson_hash):
        raise NotFound("Not a lesson", LESSON_HASH_INVALID.format(hash=lesson_hash))

    def read() -> LessonDetail | None:
        return lesson_detail(host_name=host, lesson_hash=lesson_hash)

    if has_nul(host):
        detail = None
    elif request is None:
        detail = read()
    else:
        detail = fragment(request, ("lesson_detail", host, lesson_hash), read)
    if detail is None:
        raise NotFound("Unknown lesson", LESSON_UNKNOWN.format(host=host, hash=lesson_hash))
    return detail
