"""Keeping each lesson's latest Verify-gate verdict current (the denormalized ``Lesson.latest_verdict``),
in the order of ``lessons.selectors.verdicts.latest_verdict_order``. docs/interchange.md, "verdict: an outcome
of the Verify gate".
"""

from __future__ import annotations

from collections.abc import Iterable

from lessons.models import Lesson, Verdict
from lessons.selectors.verdicts import latest_verdict_order
from lessons.services.entity_counts import CountChanges


def lesson_latest_verdict_refresh(*, lesson_ids: Iterable[int], counts: CountChanges | None = None) -> int:
    """Recompute ``Lesson.latest_verdict`` for ``lesson_ids``; returns how many rows changed.

    The entities of the changed lessons go to ``counts`` when given (the caller's one refresh), else
    their ``EntityCount`` rows (the verdict mix) are refreshed at once, in the caller's transaction.
    """
    ids = list(set(lesson_ids))
    if not ids:
        return 0
    latest: dict[int, str] = {}
    for lesson_id, verdict in (
        Verdict.objects.filter(lesson_id__in=ids)
        .order_by("lesson_id", *latest_verdict_order())
        .values_list("lesson_id", "verdict")
    ):
        latest.setdefault(lesson_id, verdict)
    changed = []
    for lesson in Lesson.objects.filter(id__in=ids).only(
        "id", "latest_verdict", "host_id", "namespace", "subject"
    ):
        value = latest.get(lesson.id)
        if lesson.latest_verdict != value:
            lesson.latest_verdict = value
            changed.append(lesson)
    Lesson.objects.bulk_update(changed, ["latest_verdict"], batch_size=500)
    pending = counts if counts is not None else CountChanges()
    pending.add_lessons(changed)
    if counts is None:
        pending.apply()
    return len(changed)
