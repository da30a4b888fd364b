"""Reading recurrence: stored counts per lesson, unmatched topics per host, the coverage report.

The counts are stored by ``lessons.recurrence.refresh``; topics and coverage are read on demand
(topics only look at corrections and lessons that contain a backtick). docs/piles-and-recurrence.md,
"Recurrence";
README.md, "Commands" (``recurrence``).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Count, Q, QuerySet

from lessons.core.recurrence import (
    SINGLE_OUTCOMES,
    UNMATCHED_TOPICS_LIMIT,
    USER_CORRECTION,
    correction_topics,
    unmatched_topics,
)
from lessons.core.recurrence import Correction as CoreCorrection
from lessons.models import Correction, CorrectionAttribution, Exposure, Host, Lesson, RecurrenceCount
from lessons.serializers import lesson_counts_json

# Counts that are evidence of a correction; a lesson with none of them has "no observed correction".
NO_OBSERVED_CORRECTION = "no observed correction"


def recurrence_counts(*, host: Host | None = None) -> QuerySet[RecurrenceCount]:
    """Stored counts, one per current lesson version, with lesson and host joined.

    Order: host name, recurring first (``recurred_sessions`` desc), ``recurred`` desc, then the
    other evidence, then lesson hash (unique per host).
    """
    rows = RecurrenceCount.objects.select_related("lesson__host")
    if host is not None:
        rows = rows.filter(lesson__host=host)
    return rows.order_by(
        "lesson__host__name",
        "-recurred_sessions",
        "-recurred",
        "-during",
        "-unknown",
        "-earlier_version",
        "-ambiguous",
        "lesson__hash",
    )


def recurrence_coverage(*, host: Host | None = None) -> dict:
    """How much was analysed: ``sessions``, ``exposures``, ``corrections_by_kind`` (kind -> count,
    sorted by kind), ``attributed`` (charged to exactly one lesson), ``ambiguous``, ``unmatched``.

    Four queries. docs/piles-and-recurrence.md, "Unmatched topics" (the whole stored history).
    """
    exposures = Exposure.objects.all()
    corrections = Correction.objects.all()
    attributions = CorrectionAttribution.objects.all()
    if host is not None:
        exposures = exposures.filter(host=host)
        corrections = corrections.filter(host=host)
        attributions = attributions.filter(host=host)
    sessions = (
        exposures.order_by()
        .values_list("host_id", "session")
        .union(corrections.order_by().values_list("host_id", "session"))
        .count()
    )
    kinds = {
        row["kind"]: row["n"]
        for row in corrections.order_by().values("kind").annotate(n=Count("id")).order_by("kind")
    }
    outcomes = {
        row["outcome"]: row["n"]
        for row in attributions.order_by().values("outcome").annotate(n=Count("correction_id", distinct=True))
    }
    return {
        "sessions": sessions,
        "exposures": exposures.count(),
        "corrections_by_kind": kinds,
        "attributed": sum(outcomes.get(o, 0) for o in SINGLE_OUTCOMES),
        "ambiguous": outcomes.get("ambiguous", 0),
        "unmatched": outcomes.get("unmatched", 0),
    }


@dataclass(frozen=True)
class TopicExample:
    """One correction that names a topic: its session, text and time."""

    session: str
    text: str
    corrected_at: datetime


@dataclass(frozen=True)
class UnmatchedTopic:
    """A topic corrected in ``sessions`` distinct sessions that no live lesson of the host anchors."""

    topic: str
    sessions: int
    examples: tuple[TopicExample, ...] = field(default=())


def _user_corrections_with_anchors(host: Host) -> QuerySet:
    # A topic is a run inside a backtick span: corrections without a backtick cannot name one.
    return Correction.objects.filter(host=host, kind=USER_CORRECTION, text__contains="`")


def host_unmatched_topics(
    *, host: Host, limit: int = UNMATCHED_TOPICS_LIMIT, examples: int = 0
) -> list[UnmatchedTopic]:
    """The host's unmatched topics: named in user corrections of two or more distinct sessions, a full
    anchor of no live lesson of the host; sessions desc, then topic; at most ``limit``.

    With ``examples > 0`` each topic carries its newest ``examples`` corrections (one more query).
    Two or three queries; corrections are streamed. docs/piles-and-recurrence.md, "Unmatched topics".
    """

    def stream() -> Iterator[CoreCorrection]:
        # Unordered: the topics do not depend on the order (an id order would sort the host's corrections,
        # as no index of them starts with (host, id)).
        rows = _user_corrections_with_anchors(host).order_by()
        rows = rows.values_list("id", "session", "text", "corrected_at")
        for pk, session, text, _at in rows.iterator(chunk_size=2000):
            yield CoreCorrection(
                session=session,
                id=str(pk),
                kind=USER_CORRECTION,
                text=text,
                corrected_at_ms=0,
                turn_started_at_ms=None,
            )

    live_texts = Lesson.objects.filter(host=host, status=Lesson.Status.LIVE, text__contains="`").values_list(
        "text", flat=True
    )
    rows = unmatched_topics(corrections=stream(), live_lesson_texts=list(live_texts), limit=limit)
    found: dict[str, list[TopicExample]] = defaultdict(list)
    if examples and rows:
        wanted = {topic for topic, _n in rows}
        named = Q()
        for topic in sorted(wanted):
            named |= Q(text__icontains=topic)
        for session, text, corrected_at in (
            _user_corrections_with_anchors(host)
            .filter(named)
            .order_by("-corrected_at", "-id")
            .values_list("session", "text", "corrected_at")
            .iterator(chunk_size=2000)
        ):
            for topic in sorted(correction_topics(text) & wanted):
                if len(found[topic]) < examples:
                    found[topic].append(TopicExample(session, text, corrected_at))
            if all(len(found[topic]) >= examples for topic in wanted):
                break
    return [UnmatchedTopic(topic, n, tuple(found.get(topic, ()))) for topic, n in rows]


def recurrence_report(*, host: Host | None = None) -> dict:
    """The ``recurrence`` command's JSON: ``lessons`` (every current version, see ``recurrence_counts``),
    ``hosts`` (per host: ``unmatched_topics`` as ``{"topic", "sessions"}`` and ``coverage``), and the
    overall ``coverage``. docs/piles-and-recurrence.md, "Recurrence"; README.md, "Commands" (``recurrence``).
    """
    hosts = [host] if host is not None else list(Host.objects.order_by("name"))
    return {
        "lessons": [lesson_counts_json(row) for row in recurrence_counts(host=host)],
        "hosts": [
            {
                "host": h.name,
                "unmatched_topics": [
                    {"topic": t.topic, "sessions": t.sessions} for t in host_unmatched_topics(host=h)
                ],
                "coverage": recurrence_coverage(host=h),
            }
            for h in hosts
        ],
        "coverage": recurrence_coverage(host=host),
    }


def format_counts(counts: dict[str, int]) -> str:
    """A one-line reading of the counts for text output, e.g. ``recurred 2 in 2 sessions, ambiguous 1``.

    Only non-zero evidence is named; never says a lesson was "followed".
    """
    parts = []
    if counts["recurred"]:
        parts.append(f"recurred {counts['recurred']} in {counts['recurred_sessions']} session(s)")
    for f in ("during", "unknown", "ambiguous", "earlier_version"):
        if counts[f]:
            parts.append(f"{f.replace('_', ' ')} {counts[f]}")
    return ", ".join(parts) or NO_OBSERVED_CORRECTION


__all__ = [
    "NO_OBSERVED_CORRECTION",
    "TopicExample",
    "UnmatchedTopic",
    "format_counts",
    "host_unmatched_topics",
    "recurrence_counts",
    "recurrence_coverage",
    "recurrence_report",
]
