"""Reads for the JSON API: the lessons a hash names and the decisions naming a lesson (the JSON shape is
``lessons.serializers.lesson_detail_json``). docs/interchange.md ("lesson"), docs/decisions.md (the record).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import QuerySet

from lessons.core.text import format_datetime
from lessons.models import Lesson
from review.models import Decision, DecisionOutcome


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


def decisions_outcomes(decisions: list[Decision]) -> dict[str, dict]:
    """The stored outcomes of ``decisions`` (docs/decisions.md, "Outcomes") as the API gives them, by
    seq (a string key): ``{"outcome", "sessions_after", "evidence", "computed_at"}``. One query."""
    by_id = {d.id: d.seq for d in decisions}
    rows = DecisionOutcome.objects.filter(decision_id__in=list(by_id)).order_by("decision_id")
    return {
        str(by_id[row.decision_id]): {
            "outcome": row.outcome,
            "sessions_after": row.sessions_after,
            "evidence": row.evidence,
            "computed_at": format_datetime(row.computed_at),
        }
        for row in rows
    }
