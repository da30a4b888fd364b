"""Reads for the JSON API: one lesson with its versions, verdicts, recurrence and decisions.

spec: interchange.md ("lesson", "verdict"), recurrence.md (counts), decisions.md (the record).
"""

from __future__ import annotations

from collections.abc import Iterable

from lessons.core.piles import pile_target, verdict_label
from lessons.core.text import format_datetime
from lessons.models import Lesson, Verdict
from lessons.selectors.piles import recurrence_dict
from lessons.services.verdicts import latest_verdict_order
from review.models import Decision


def lessons_by_hash(*, lesson_hash: str, hosts: Iterable[str] | None) -> list[Lesson]:
    """Every lesson with ``lesson_hash`` on ``hosts`` (None: every host), sorted by host name; one query."""
    qs = Lesson.objects.filter(hash=lesson_hash).select_related("host", "recurrence")
    if hosts is not None:
        qs = qs.filter(host__name__in=list(hosts))
    return list(qs.order_by("host__name"))


def _verdict_json(verdict: Verdict) -> dict:
    return {
        "verdict": verdict.verdict,
        "metric": verdict.metric,
        "baseline": verdict.baseline,
        "current": verdict.current,
        "horizon_ms": verdict.horizon_ms,
        "measured_at": format_datetime(verdict.measured_at),
    }


def lesson_detail_json(lesson: Lesson) -> dict:
    """The API shape of one lesson (three more queries: verdicts, versions, decisions).

    ``verdicts`` latest first (interchange.md, "latest verdict"); ``versions`` are the lessons sharing
    its ``store`` + ``lesson_id`` on its host, oldest first (just itself when it has no ``lesson_id``);
    ``decisions`` are the log records naming it, by ``seq``.
    """
    verdicts = Verdict.objects.filter(lesson=lesson).order_by(*latest_verdict_order())
    if lesson.lesson_id is not None:
        versions = Lesson.objects.filter(host=lesson.host, store=lesson.store, lesson_id=lesson.lesson_id)
    else:
        versions = Lesson.objects.filter(pk=lesson.pk)
    decisions = Decision.objects.filter(host=lesson.host.name, lesson_hash=lesson.hash).order_by("seq")
    return {
        "host": lesson.host.name,
        "hash": lesson.hash,
        "namespace": lesson.namespace,
        "subject": lesson.subject,
        "target": pile_target(lesson.namespace, lesson.subject),
        "text": lesson.text,
        "status": lesson.status,
        "kind": lesson.kind,
        "lesson_id": lesson.lesson_id,
        "store": lesson.store,
        "origin": lesson.origin,
        "created_at": format_datetime(lesson.created_at),
        "superseded_by": lesson.superseded_by,
        "consolidates": list(lesson.consolidates or []),
        "verdict": verdict_label(lesson.latest_verdict),
        "recurrence": recurrence_dict(lesson),
        "verdicts": [_verdict_json(v) for v in verdicts],
        "versions": [
            {"hash": v.hash, "status": v.status, "created_at": format_datetime(v.created_at), "text": v.text}
            for v in versions.order_by("created_at", "hash")
        ],
        "decisions": [
            {"seq": d.seq, "at": format_datetime(d.at), "action": d.action, "actor": d.actor}
            for d in decisions.only("seq", "at", "action", "actor")
        ],
    }
