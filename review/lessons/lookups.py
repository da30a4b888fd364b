"""The lesson an address names (``/lessons/<host>/<hash>/``), or the problem page. review/web/lookups.py."""

from __future__ import annotations

from lessons.core.interchange import HEX64
from review.lessons.selectors import LessonDetail, lesson_detail
from review.web.lookups import NotFound, has_nul

LESSON_UNKNOWN = "Host {host!r} has no lesson {hash}."
LESSON_HASH_INVALID = "{hash!r} is not a lesson hash: a lesson is named by its 64 lowercase hex characters."


def get_lesson_or_404(host: str, lesson_hash: str) -> LessonDetail:
    """The lesson page's detail of ``(host, hash)``; ``NotFound`` for a malformed hash or no such lesson."""
    if not HEX64.fullmatch(lesson_hash):
        raise NotFound("Not a lesson", LESSON_HASH_INVALID.format(hash=lesson_hash))
    detail = None if has_nul(host) else lesson_detail(host_name=host, lesson_hash=lesson_hash)
    if detail is None:
        raise NotFound("Unknown lesson", LESSON_UNKNOWN.format(host=host, hash=lesson_hash))
    return detail
