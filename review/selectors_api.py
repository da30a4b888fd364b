"""Reads for the JSON API: the lessons a hash names (their JSON shape is
``lessons.serializers.lesson_detail_json``). spec: interchange.md ("lesson").
"""

from __future__ import annotations

from collections.abc import Iterable

from lessons.models import Lesson


def lessons_by_hash(*, lesson_hash: str, hosts: Iterable[str] | None) -> list[Lesson]:
    """Every lesson with ``lesson_hash`` on ``hosts`` (None: every host), sorted by host name; one query."""
    qs = Lesson.objects.filter(hash=lesson_hash).select_related("host", "recurrence")
    if hosts is not None:
        qs = qs.filter(host__name__in=list(hosts))
    return list(qs.order_by("host__name"))
