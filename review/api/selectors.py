"""Reads for the JSON API: the lessons a hash names and the decisions naming a lesson (the JSON shape is
``lessons.serializers.lesson_detail_json``). docs/interchange.md ("lesson"), docs/decisions.md (the record).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import QuerySet

from lessons.models import Lesson
from review.models import Decision


def lessons_by_hash(*, lesson_hash: str, hosts: Iterable[str] | None) -> list[Lesson]:
    """Every lesson with ``lesson_hash`` on ``hosts`` (None: every host), sorted by host name; one query."""
    qs = Lesson.objects.filter(hash=lesson_hash).select_related("host", "recurrence")
    if hosts is not None:
        qs = qs.filter(host__name__in=list(hosts))
    return list(qs.order_by("host__name"))


def lesson_decisions(*, lesson: Lesson) -> QuerySet[Decision]:
    """The decision records naming ``lesson`` on its host, by ``seq`` (``seq``, ``at``, ``action``,
    ``actor`` only); lazy, one query when read."""
    return (
        Decision.objects.filter(host=lesson.host.name, lesson_hash=lesson.hash)
        .order_by("seq")
        .only("seq", "at", "action", "actor")
    )
