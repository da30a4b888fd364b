"""What the outcome pages read beyond the decisions and their outcomes. docs/decisions.md, "Outcomes"."""

from __future__ import annotations

from lessons.models import Lesson
from review.models import Decision


def live_now(decisions: list[Decision]) -> set[tuple[str, str]]:
    """``(host, hash)`` of the lessons the ``decisions`` name (retired, restored, created) that are live
    now: one query for all of them, whatever their number (none when they name no lesson)."""
    hashes = {h for d in decisions for h in (d.lesson_hash, d.created_hash) if h}
    if not hashes:
        return set()
    rows = Lesson.objects.filter(
        hash__in=sorted(hashes), host__name__in=sorted({d.host for d in decisions}), status=Lesson.Status.LIVE
    ).values_list("host__name", "hash")
    return set(rows)
