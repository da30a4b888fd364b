"""Recurrence of one lesson, for its page: the sessions shown it, the corrections charged to it, the
corrections on its topic that were not, its verdicts, and the same text on other hosts.

A fixed number of queries whatever the number of exposures; long lists are capped (the newest rows
are kept) and the totals say how many there were. docs/piles-and-recurrence.md, "Recurrence".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import Case, Count, Min, Q, Value, When

from lessons.core.recurrence import (
    EVIDENCE_FIELDS,
    USER_CORRECTION,
    content_tokens,
    has_evidence,
    is_recurring,
)
from lessons.core.text import from_ms, to_ms
from lessons.core.tokens import (
    RULE_B_MIN_SHARE_DENOMINATOR,
    RULE_B_MIN_SHARE_NUMERATOR,
    RULE_B_MIN_SHARED,
    anchors,
    text_matches,
)
from lessons.models import (
    Correction,
    CorrectionAttribution,
    Exposure,
    Lesson,
    RecurrenceCount,
    ShownText,
    Verdict,
)
from lessons.recurrence.versions import EpochMs, Version, current_versions, key_of, key_versions
from lessons.serializers import recurrence_dict

TIMELINE_SESSIONS = 200  # sessions drawn and listed (the newest by first exposure)
ATTRIBUTION_LIMIT = 200  # charged corrections listed (the newest)
# The host's newest user corrections a lesson page looks among for corrections on its topic: a bound,
# so that the page reads the same few rows at 1,000 corrections and at 1,000,000 (issue 10).
TOPIC_WINDOW = 2000
TOPIC_CANDIDATES = 2000  # newest uncharged corrections sharing a word with the lesson, checked by the rules
TOPIC_LIMIT = 50  # uncharged corrections on its topic shown
SHOWN_TEXTS_LIMIT = 20  # texts shown that are no stored version, listed (the first seen)
MAX_QUERIES = 12  # two of them only when the key has texts shown that are no stored version

OUTCOME_LABELS = {
    "recurred": "recurred",
    "during": "during the turn",
    "unknown": "unknown timing",
    "earlier_version": "earlier version shown",
    "ambiguous": "ambiguous",
}


@dataclass(frozen=True)
class SessionShown:
    """A session shown the lesson's key: first exposure of any version, and of the current text."""

    session: str
    first_shown: datetime
    first_current: datetime | None


@dataclass(frozen=True)
class ChargedCorrection:
    """A user correction charged to the lesson; ``others`` are the other candidates when ambiguous."""

    id: int
    session: str
    text: str
    outcome: str
    corrected_at: datetime
    turn_started_at: datetime | None
    others: tuple[Lesson, ...] = ()

    @property
    def label(self) -> str:
        return OUTCOME_LABELS.get(self.outcome, self.outcome)


@dataclass(frozen=True)
class TopicCorrection:
    """A user correction on the lesson's topic that was not charged to it (the session had not been
    shown the lesson by then, or never was)."""

    id: int
    session: str
    text: str
    corrected_at: datetime


@dataclass(frozen=True)
class SessionCorrections:
    """One session of the list: when it was first shown the lesson, and what was charged there."""

    session: str
    shown: SessionShown | None
    corrections: tuple[ChargedCorrection, ...]


@dataclass(frozen=True)
class TextShown:
    """A text sessions were shown under the lesson's key that is no stored version (``ShownText``):
    ``sessions`` shown it, ``first_shown`` (UTC). Corrections matching only it count as earlier version."""

    text: str
    text_hash: str
    sessions: int
    first_shown: datetime | None


@dataclass(frozen=True)
class OtherHostLesson:
    """The same text (equal ``text_hash``) on another host, with its status, verdict and counts."""

    lesson: Lesson
    counts: dict[str, int]

    @property
    def recurring(self) -> bool:
        return is_recurring(self.counts)

    @property
    def topic_window(self) -> int:
        """How many of the host's newest user corrections ``on_topic`` was looked for among."""
        return TOPIC_WINDOW


@dataclass(frozen=True)
class LessonRecurrence:
    """Everything the lesson page's recurrence section shows. ``current`` is the version holding the
    counts (the key's live version, else its newest); ``is_current`` whether that is this lesson."""

    lesson: Lesson
    current: Version
    is_current: bool
    counts: dict[str, int]
    sessions: tuple[SessionShown, ...]
    sessions_total: int
    charged: tuple[ChargedCorrection, ...]
    on_topic: tuple[TopicCorrection, ...]
    verdicts: tuple[Verdict, ...]
    other_hosts: tuple[OtherHostLesson, ...]
    by_session: tuple[SessionCorrections, ...] = field(default=())
    texts_shown: tuple[TextShown, ...] = field(default=())

    @property
    def recurring(self) -> bool:
        return is_recurring(self.counts)

    @property
    def has_evidence(self) -> bool:
        return has_evidence(self.counts)

    @property
    def charged_total(self) -> int:
        return sum(self.counts[f] for f in EVIDENCE_FIELDS)

    @property
    def first_current(self) -> datetime | None:
        """When any session was first shown the current text."""
        times = [s.first_current for s in self.sessions if s.first_current is not None]
        return min(times) if times else None


def lesson_recurrence(
    *, lesson: Lesson, verdicts: Iterable[Verdict] | None = None, versions: list[Version] | None = None
) -> LessonRecurrence:
    """The recurrence section of ``lesson``'s page: at most ``MAX_QUERIES`` queries, whatever the data size.

    ``verdicts``: the lesson's verdicts when the caller already has them (any order; else one query).
    ``versions``: the versions of the lesson's key (``key_versions``) when the caller already read them
    (else one query).
    The counts come from ``lesson.recurrence`` when it was joined and the lesson is current.

    ``sessions``: newest ``TIMELINE_SESSIONS`` by first exposure; ``charged``: newest ``ATTRIBUTION_LIMIT``
    corrections charged to the current version; ``on_topic``: up to ``TOPIC_LIMIT`` newest uncharged
    user corrections that match the current text by rules A/B, among the ``TOPIC_CANDIDATES`` newest
    sharing a word with it, of the host's ``TOPIC_WINDOW`` newest user corrections.
    docs/piles-and-recurrence.md, "Recurrence".
    """
    key = key_of(lesson)
    if versions is None:
        versions = key_versions(host_id=lesson.host_id, keys=[key])
    current = _current_version(lesson, key, versions)
    if current.id == lesson.id and Lesson._meta.get_field("recurrence").is_cached(lesson):
        counts = recurrence_dict(lesson)
    else:
        counts = recurrence_dict(RecurrenceCount.objects.filter(lesson_id=current.id).first())
    grouped, sessions, sessions_total = _sessions_shown(lesson.host_id, key, current)
    charged = _charged(current)
    if verdicts is None:
        verdicts = Verdict.objects.filter(lesson_id=lesson.id)
    return LessonRecurrence(
        lesson=lesson,
        current=current,
        is_current=current.id == lesson.id,
        counts=counts,
        sessions=sessions,
        sessions_total=sessions_total,
        charged=charged,
        on_topic=_on_topic(lesson.host_id, current, {c.id for c in charged}),
        verdicts=tuple(
            sorted(
                verdicts, key=lambda v: (v.measured_at, -1 if v.horizon_ms is None else v.horizon_ms, v.id)
            )
        ),
        other_hosts=_other_hosts(lesson),
        by_session=_by_session(grouped, sessions, charged),
        texts_shown=_texts_shown(lesson.host_id, key, {v.text_hash for v in versions}),
    )


def _current_version(lesson: Lesson, key: str, versions: list[Version]) -> Version:
    """The current version of ``lesson``'s key among ``versions``, or the lesson itself as one."""
    return current_versions(versions).get(key) or Version(
        lesson.id,
        lesson.hash,
        key,
        lesson.text,
        lesson.text_hash,
        lesson.status == "live",
        to_ms(lesson.created_at),
        lesson.status,
    )


def _sessions_shown(host_id: int, key: str, current: Version):
    """``(grouped, sessions, total)``: the key's exposures grouped by session (a queryset: each session's
    first exposure, and its first of the current text), the newest ``TIMELINE_SESSIONS`` of them, and how
    many sessions there are (counted only when the page is full)."""
    exposures = Exposure.objects.filter(host_id=host_id, lesson_key=key)
    grouped = (
        exposures.values("session")
        .order_by()
        .annotate(first=Min("shown_at"), first_current=Min("shown_at", filter=Q(text_hash=current.text_hash)))
    )
    sessions = tuple(
        SessionShown(r["session"], r["first"], r["first_current"])
        for r in grouped.order_by("-first", "session")[:TIMELINE_SESSIONS]
    )
    total = len(sessions)
    if total == TIMELINE_SESSIONS:  # only then can there be more
        total = exposures.aggregate(n=Count("session", distinct=True))["n"]
    return grouped, sessions, total


def _charged(current: Version) -> tuple[ChargedCorrection, ...]:
    """The newest ``ATTRIBUTION_LIMIT`` corrections charged to the current version, each ambiguous one with
    the other lessons it was charged to."""
    attributions = list(
        CorrectionAttribution.objects.filter(lesson_id=current.id)
        .select_related("correction")
        .order_by("-correction__corrected_at", "-correction_id")[:ATTRIBUTION_LIMIT]
    )
    others: dict[int, list[Lesson]] = defaultdict(list)
    ambiguous_ids = [
        a.correction_id for a in attributions if a.outcome == CorrectionAttribution.Outcome.AMBIGUOUS
    ]
    if ambiguous_ids:
        for other in (
            CorrectionAttribution.objects.filter(correction_id__in=ambiguous_ids)
            .exclude(lesson_id=current.id)
            .select_related("lesson__host")
            .order_by("lesson__hash")
        ):
            others[other.correction_id].append(other.lesson)
    return tuple(
        ChargedCorrection(
            id=a.correction_id,
            session=a.session,
            text=a.correction.text,
            outcome=a.outcome,
            corrected_at=a.correction.corrected_at,
            turn_started_at=a.correction.turn_started_at,
            others=tuple(others.get(a.correction_id, ())),
        )
        for a in attributions
    )


def _other_hosts(lesson: Lesson) -> tuple[OtherHostLesson, ...]:
    """The same text on other hosts, with their counts (a missing reverse one-to-one is no counts)."""
    return tuple(
        OtherHostLesson(other, recurrence_dict(other))
        for other in Lesson.objects.filter(text_hash=lesson.text_hash)
        .exclude(host_id=lesson.host_id)
        .select_related("host", "recurrence")
        .order_by("host__name", "hash")
    )


def _by_session(grouped, sessions, charged) -> tuple[SessionCorrections, ...]:
    """The charged corrections by session, newest first, each session with its first exposure (a charged
    session older than the newest ``TIMELINE_SESSIONS`` still gets it listed: one more query then)."""
    shown_by_session = {s.session: s for s in sessions}
    missing = sorted({c.session for c in charged} - shown_by_session.keys())
    if missing:
        for r in grouped.filter(session__in=missing):
            shown_by_session[r["session"]] = SessionShown(r["session"], r["first"], r["first_current"])
    grouped_charged: dict[str, list[ChargedCorrection]] = defaultdict(list)
    for correction in charged:
        grouped_charged[correction.session].append(correction)
    return tuple(
        SessionCorrections(session, shown_by_session.get(session), tuple(items))
        for session, items in sorted(grouped_charged.items(), key=lambda kv: (-_newest(kv[1]), kv[0]))
    )


def _texts_shown(host_id: int, key: str, stored: set[str]) -> tuple[TextShown, ...]:
    """The key's texts shown that no stored version has: one query, plus one when there are any."""
    kept = [
        (digest, text)
        for digest, text in ShownText.objects.filter(host_id=host_id, lesson_key=key)
        .order_by("first_seen_at", "text_hash")
        .values_list("text_hash", "text")[: SHOWN_TEXTS_LIMIT + len(stored)]
        if digest not in stored
    ][:SHOWN_TEXTS_LIMIT]
    if not kept:
        return ()
    seen = {
        r["text_hash"]: r
        for r in Exposure.objects.filter(host_id=host_id, lesson_key=key, text_hash__in=[d for d, _t in kept])
        .values("text_hash")
        .order_by()
        .annotate(sessions=Count("session", distinct=True), first=Min("shown_at"))
    }
    return tuple(
        TextShown(text, digest, seen.get(digest, {}).get("sessions", 0), seen.get(digest, {}).get("first"))
        for digest, text in kept
    )


def _newest(items: list[ChargedCorrection]) -> float:
    return max(c.corrected_at.timestamp() for c in items)


def _contained(words: Iterable[str]):
    """How many of ``words`` a correction's text contains (case-insensitive substrings), as an expression."""
    terms = [Case(When(text__icontains=word, then=Value(1)), default=Value(0)) for word in sorted(words)]
    return sum(terms[1:], terms[0]) if terms else Value(0)


def _on_topic(host_id: int, current: Version, charged_ids: set[int]) -> tuple[TopicCorrection, ...]:
    # What the rules need, as substrings (a superset of token matches), so the filter loses no match and
    # the rules decide: rule A a full anchor of the lesson and one more of its words, rule B at least 3 of
    # its content tokens and 60% of them. Most of a busy host's corrections share one common word with a
    # lesson; only those the rules could take are read (issue 10).
    content, full = content_tokens(current.text), anchors(current.text)[0]
    if not content | full:
        return ()
    share = -(-len(content) * RULE_B_MIN_SHARE_NUMERATOR // RULE_B_MIN_SHARE_DENOMINATOR)
    rule_b = max(RULE_B_MIN_SHARED, share)
    could = Q(shared_content__gte=rule_b) if len(content) >= RULE_B_MIN_SHARED else Q(pk__in=[])
    for anchor in sorted(full):
        could |= Q(text__icontains=anchor)
    shares_a_word = Q(shared_words__gte=2) & could
    user_corrections = Correction.objects.filter(host_id=host_id, kind=USER_CORRECTION)
    newest = user_corrections.order_by("-corrected_at", "-id").values("id")[:TOPIC_WINDOW]
    candidates = (
        Correction.objects.filter(id__in=newest)
        .alias(shared_words=_contained(content | full), shared_content=_contained(content))
        .filter(shares_a_word)
        .exclude(attributions__lesson_id=current.id)
        .order_by("-corrected_at", "-id")
        # the time as epoch ms from the database: most candidates fail the rules, and Django's datetime
        # converter on each of up to 2,000 rows was a third of the look-up
        .annotate(at_ms=EpochMs("corrected_at"))
        .values_list("id", "session", "text", "at_ms")[:TOPIC_CANDIDATES]
    )
    found = []
    for pk, session, text, at_ms in candidates:
        if pk not in charged_ids and text_matches(current.text, text):
            found.append(TopicCorrection(pk, session, text, from_ms(at_ms)))
            if len(found) >= TOPIC_LIMIT:
                break
    return tuple(found)
