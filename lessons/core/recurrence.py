"""Recurrence: was a session still corrected on a lesson's topic after it was shown the lesson?

The pure core: plain functions over immutable records, no ORM, no clock, no model calls. Services map
stored exposures, corrections and lesson versions to these records (``NamedTuple`` rows: a recompute
makes one per stored row, and a named tuple is made several times faster than a frozen dataclass, in
less memory) and store or render the result.
All times are integer milliseconds since the Unix epoch (UTC). docs/piles-and-recurrence.md, "Recurrence".
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple, TypeVar

from lessons.core.tokens import (
    STOP_WORDS,
    anchors,
    content_tokens,
    correction_tokens,
    correction_topics,
    runs,
    text_matches,
    tokens_match,
)

__all__ = [
    "AMBIGUOUS",
    "DURING",
    "EARLIER_VERSION",
    "NOT_ATTRIBUTED",
    "OUTCOMES",
    "RECURRED",
    "STOP_WORDS",
    "UNKNOWN",
    "UNMATCHED",
    "USER_CORRECTION",
    "Attribution",
    "Correction",
    "Counts",
    "Exposure",
    "LessonKey",
    "LessonVersion",
    "RecurrenceResult",
    "anchors",
    "attribute",
    "attribute_profiled",
    "content_tokens",
    "correction_tokens",
    "current_hashes",
    "correction_topics",
    "lesson_key",
    "lesson_profile",
    "runs",
    "text_matches",
    "unmatched_topics",
    "version_profiles",
]

LessonKey = str
V = TypeVar("V")

USER_CORRECTION = "user_correction"

RECURRED = "recurred"
DURING = "during"
UNKNOWN = "unknown"
EARLIER_VERSION = "earlier_version"
AMBIGUOUS = "ambiguous"
UNMATCHED = "unmatched"
NOT_ATTRIBUTED = "not_attributed"
OUTCOMES = (RECURRED, DURING, UNKNOWN, EARLIER_VERSION, AMBIGUOUS, UNMATCHED, NOT_ATTRIBUTED)
# The outcomes an attribution row stores (a correction not attributed has no row).
STORED_OUTCOMES = tuple(o for o in OUTCOMES if o != NOT_ATTRIBUTED)
# Outcomes that charge exactly one lesson's current version.
SINGLE_OUTCOMES = (RECURRED, DURING, UNKNOWN, EARLIER_VERSION)

UNMATCHED_TOPICS_LIMIT = 5
UNMATCHED_TOPIC_MIN_SESSIONS = 2
RECURRING_MIN_SESSIONS = 2

_KEY_SEPARATOR = "\x1f"


def lesson_key(*, hash: str, store: str | None, lesson_id: str | None) -> LessonKey:  # noqa: A002
    """A lesson's recurrence key: ``"id:{store}\\x1f{lesson_id}"`` when it has a ``lesson_id``, else
    ``"hash:{hash}"``.

    All versions of one ``(store, lesson_id)`` share a key; the same id in another store does not. A
    missing store with a ``lesson_id`` is the empty store. docs/piles-and-recurrence.md, "Recurrence".
    """
    if lesson_id:
        return f"id:{store or ''}{_KEY_SEPARATOR}{lesson_id}"
    return f"hash:{hash}"


class LessonVersion(NamedTuple):
    """One text of a lesson key. ``is_current``: this is the key's current text (live, else newest).

    ``text_hash`` is ``sha256_hex(normalize(text))`` (docs/interchange.md); every key that has versions must
    have exactly one current ``text_hash``.
    """

    key: LessonKey
    hash: str
    text: str
    text_hash: str
    is_current: bool


class Exposure(NamedTuple):
    """Session ``session`` was shown the text ``text_hash`` of lesson ``key`` at ``shown_at_ms``."""

    session: str
    key: LessonKey
    text_hash: str
    shown_at_ms: int


class Correction(NamedTuple):
    """A correction signal; ``turn_started_at_ms`` is ``None`` when the turn's start is unknown."""

    session: str
    id: str
    kind: str
    text: str
    corrected_at_ms: int
    turn_started_at_ms: int | None


@dataclass(frozen=True)
class Counts:
    """Recurrence evidence of one current lesson version. docs/piles-and-recurrence.md, "The seven counts"."""

    sessions_shown: int = 0
    recurred: int = 0
    recurred_sessions: int = 0
    during: int = 0
    unknown: int = 0
    ambiguous: int = 0
    earlier_version: int = 0

    @property
    def recurring(self) -> bool:
        """Shown, and still corrected on its topic, in two or more sessions."""
        return self.recurred_sessions >= RECURRING_MIN_SESSIONS

    def as_dict(self) -> dict[str, int]:
        """The seven counts, in declaration order."""
        return {name: getattr(self, name) for name in COUNT_FIELDS}


# The seven counts' names in spec order, for every JSON shape, stored row and page that lists them.
COUNT_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Counts))


def is_recurring(counts: Mapping[str, int] | None) -> bool:
    """Recurring: ``recurred_sessions >= RECURRING_MIN_SESSIONS`` in counts as ``Counts.as_dict`` gives
    them (``None``: no counts, not recurring). docs/piles-and-recurrence.md, "The seven counts"."""
    return bool(counts) and counts.get("recurred_sessions", 0) >= RECURRING_MIN_SESSIONS


# The counts of corrections attributed to a lesson (its evidence); sessions_shown and recurred_sessions are
# not corrections.
EVIDENCE_FIELDS = ("recurred", "during", "unknown", "ambiguous", "earlier_version")


def has_evidence(counts: Mapping[str, int] | None) -> bool:
    """Whether any correction was attributed to the lesson (else it has "no observed correction").
    docs/piles-and-recurrence.md, "The seven counts"."""
    return bool(counts) and any(counts.get(f, 0) for f in EVIDENCE_FIELDS)


class Attribution(NamedTuple):
    """What one correction was attributed to; ``keys`` are the matching candidates, sorted."""

    correction_id: str
    session: str
    outcome: str
    keys: tuple[LessonKey, ...] = ()


@dataclass(frozen=True)
class RecurrenceResult:
    """``counts`` per current ``(key, text_hash)`` (every current version, zeros included, in sorted
    order), one ``Attribution`` per correction, and the coverage report."""

    counts: dict[tuple[LessonKey, str], Counts]
    attributions: tuple[Attribution, ...]
    coverage: dict = field(default_factory=dict)


def current_version(versions: Iterable[V], *, live: Callable[[V], bool], newest: Callable[[V], Any]) -> V:
    """The current version of one lesson key: its newest live version, else its newest version.

    ``live`` tells a live version; ``newest`` is the sort key of "newest" (callers order by
    ``(created_at, hash)``). ``versions`` must not be empty. docs/piles-and-recurrence.md, "Recurrence" ("Its
    current text is the text of its live version (else its newest version)");
    docs/interchange.md, "verdict: an outcome of the Verify gate" (a ``store`` + ``lesson_id`` reference names
    the same version).
    """
    group = list(versions)
    return max([v for v in group if live(v)] or group, key=newest)


def _current_hashes(versions: list[LessonVersion]) -> dict[LessonKey, str]:
    """The current ``text_hash`` of every key of ``versions``; ``ValueError`` (for the first such key in
    sorted order) when a key has none or two."""
    result: dict[LessonKey, str] = {}
    keys: set[LessonKey] = set()
    for version in versions:
        keys.add(version.key)
        if version.is_current and result.setdefault(version.key, version.text_hash) != version.text_hash:
            return _current_hashes_checked(versions)  # two current texts: the error, as the check words it
    return result if len(result) == len(keys) else _current_hashes_checked(versions)


def _current_hashes_checked(versions: list[LessonVersion]) -> dict[LessonKey, str]:
    current: dict[LessonKey, set[str]] = defaultdict(set)
    keys: set[LessonKey] = set()
    for version in versions:
        keys.add(version.key)
        if version.is_current:
            current[version.key].add(version.text_hash)
    result: dict[LessonKey, str] = {}
    for key in sorted(keys):
        hashes = current.get(key, set())
        # Evidence is keyed by the current (key, text_hash): with none or two, there is nowhere
        # unambiguous to put it, and guessing would make the result depend on input order.
        if len(hashes) != 1:
            raise ValueError(f"lesson key {key!r} has {len(hashes)} current texts; expected exactly 1")
        result[key] = next(iter(hashes))
    return result


def _correction_order(correction: Correction) -> tuple:
    # Ends in every field so equal sort keys mean equal corrections: output never depends on input order.
    started = correction.turn_started_at_ms
    return (
        correction.session,
        correction.corrected_at_ms,
        correction.id,
        correction.kind,
        correction.text,
        started is not None,
        started or 0,
    )


def lesson_profile(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """What matching reads of a version's text: ``(content_tokens(text), anchors(text)[0])``."""
    return content_tokens(text), anchors(text)[0]


def attribute(
    *,
    versions: Iterable[LessonVersion],
    exposures: Iterable[Exposure],
    corrections: Iterable[Correction],
    profile: Callable[[str], tuple[frozenset[str], frozenset[str]]] | None = None,
) -> RecurrenceResult:
    """Attribute every ``user_correction`` to the lesson the session was shown on its topic.

    For a correction in session ``s`` at ``k = corrected_at_ms`` with turn start ``t``: the candidates
    are the keys with an exposure in ``s`` at or before ``k``; a candidate matches when the correction
    matches (rules A/B) the text of any version ``s`` was shown at or before ``k`` (an exposure whose
    ``text_hash`` is no version of its key cannot match). Two or more matches: ``ambiguous`` for each.
    One match ``L``: when ``s`` was shown ``L``'s current text at or before ``k``, with ``e`` the earliest
    such ``shown_at_ms``: ``t`` unknown gives ``unknown``, ``e <= t`` ``recurred``, ``t < e`` ``during``;
    otherwise ``earlier_version``. Other kinds are only counted in ``coverage``.

    Returns a ``RecurrenceResult``: ``counts`` keyed by every current ``(key, text_hash)``; one
    ``Attribution`` per correction sorted by ``(session, corrected_at_ms, id)``; ``coverage`` with
    ``sessions``, ``exposures``, ``corrections_by_kind``, ``attributed`` (one lesson charged),
    ``ambiguous`` and ``unmatched``. Input order never changes the result.
    ``profile``: a version text's ``(content_tokens, full anchors)``, for a caller attributing chunk after
    chunk over the same versions that remembers them (``lesson_profile``, the default, computes them).
    Raises ``ValueError`` when a key with versions has no current text, or more than one.
    docs/piles-and-recurrence.md, "Attributing one correction".
    """
    versions = list(versions)
    exposures = list(exposures)
    corrections = _sorted(corrections)
    current = _current_hashes(versions)
    attributions = _attributions(version_profiles(versions, profile), exposures, corrections, current)

    shown_sessions: dict[LessonKey, set[str]] = defaultdict(set)
    for exposure in exposures:
        if current.get(exposure.key) == exposure.text_hash:
            shown_sessions[exposure.key].add(exposure.session)
    tallies: dict[LessonKey, Counter[str]] = defaultdict(Counter)
    recurred_in: dict[LessonKey, set[str]] = defaultdict(set)
    for attribution in attributions:
        # Unmatched corrections have no keys; ambiguous ones charge each candidate (spec step 4).
        for key in attribution.keys:
            tallies[key][attribution.outcome] += 1
        if attribution.outcome == RECURRED:
            recurred_in[attribution.keys[0]].add(attribution.session)

    counts = {
        (key, current[key]): Counts(
            sessions_shown=len(shown_sessions[key]),
            recurred=tallies[key][RECURRED],
            recurred_sessions=len(recurred_in[key]),
            during=tallies[key][DURING],
            unknown=tallies[key][UNKNOWN],
            ambiguous=tallies[key][AMBIGUOUS],
            earlier_version=tallies[key][EARLIER_VERSION],
        )
        for key in sorted(current)
    }
    return RecurrenceResult(
        counts=counts,
        attributions=attributions,
        coverage=_coverage(exposures, corrections, list(attributions)),
    )


def attribute_corrections(
    *,
    versions: Iterable[LessonVersion],
    exposures: Iterable[Exposure],
    corrections: Iterable[Correction],
    profile: Callable[[str], tuple[frozenset[str], frozenset[str]]] | None = None,
) -> tuple[Attribution, ...]:
    """``attribute(...).attributions`` alone, without the counts and coverage (for a caller that sums
    the counts from the stored attributions, as the recurrence refresh does in SQL). Same arguments,
    same order, same ``ValueError``. docs/piles-and-recurrence.md, "Attributing one correction".
    """
    versions = list(versions)
    current = _current_hashes(versions)
    return _attributions(version_profiles(versions, profile), exposures, _sorted(corrections), current)


Profile = tuple[frozenset[str], frozenset[str]]
Profiles = dict[tuple[LessonKey, str], set[Profile]]


def current_hashes(versions: Iterable[LessonVersion]) -> dict[LessonKey, str]:
    """The current ``text_hash`` of every key of ``versions``. Raises ``ValueError`` (for the first such
    key in sorted order) when a key has no current text or two. docs/piles-and-recurrence.md, "Recurrence"."""
    return _current_hashes(list(versions))


def version_profiles(
    versions: Iterable[LessonVersion],
    profile: Callable[[str], Profile] | None = None,
    into: Profiles | None = None,
) -> Profiles:
    """What matching reads of ``versions``: the profile (``lesson_profile``, or ``profile`` for a caller
    that remembers them) of each version's text by ``(key, text_hash)``; several versions of a key may
    share a text_hash (the same normalized text), and any of them may match. Added to ``into`` when given
    (and returned)."""
    # ``is None``, not truthiness: a caller's memo is a dict, empty (so falsy) until its first text.
    profile_of = lesson_profile if profile is None else profile
    profiles: Profiles = {} if into is None else into
    for version in versions:
        found = profiles.get((version.key, version.text_hash))
        if found is None:
            found = profiles[version.key, version.text_hash] = set()
        found.add(profile_of(version.text))
    return profiles


def attribute_profiled(
    *,
    profiles: Mapping[tuple[LessonKey, str], Collection[Profile]],
    current: Mapping[LessonKey, str],
    exposures: Iterable[Exposure],
    corrections: Iterable[Correction],
) -> tuple[Attribution, ...]:
    """``attribute_corrections`` with the versions given as ``version_profiles`` and ``current_hashes``
    made of them, for a caller that attributes chunk after chunk of one host's sessions and keeps both
    (the recurrence refresh's rebuild of a host: made once, not once per chunk). They may hold the
    versions of keys no exposure shows: only the shown keys' are read. Same order, same attributions.
    docs/piles-and-recurrence.md, "Attributing one correction"."""
    return _attributions(profiles, exposures, _sorted(corrections), current)


def _sorted(corrections: Iterable[Correction]) -> list[Correction]:
    return sorted(corrections, key=_correction_order)


def _attributions(
    profiles: Mapping[tuple[LessonKey, str], Collection[Profile]],
    exposures: Iterable[Exposure],
    corrections: list[Correction],
    current: Mapping[LessonKey, str],
) -> tuple[Attribution, ...]:
    """One ``Attribution`` per correction of ``corrections`` (sorted by ``_correction_order``)."""
    by_session: dict[str, list[Exposure]] = defaultdict(list)
    for exposure in exposures:
        by_session[exposure.session].append(exposure)

    attributions: list[Attribution] = []
    for correction in corrections:
        if correction.kind != USER_CORRECTION:
            attributions.append(Attribution(correction.id, correction.session, NOT_ATTRIBUTED))
            continue
        outcome, keys = _attribute_one(correction, by_session.get(correction.session, ()), profiles, current)
        attributions.append(Attribution(correction.id, correction.session, outcome, keys))
    return tuple(attributions)


def _attribute_one(
    correction: Correction,
    session_exposures: Iterable[Exposure],
    profiles: Mapping[tuple[LessonKey, str], Collection[Profile]],
    current: Mapping[LessonKey, str],
) -> tuple[str, tuple[LessonKey, ...]]:
    k = correction.corrected_at_ms
    # Candidates: keys this session saw at or before the correction (spec step 1); a lesson first
    # shown later cannot have been ignored by the answer being corrected.
    shown: dict[LessonKey, set[str]] = defaultdict(set)
    for exposure in session_exposures:
        if exposure.shown_at_ms <= k:
            shown[exposure.key].add(exposure.text_hash)

    tokens = correction_tokens(correction.text)
    matching = tuple(
        sorted(
            key
            for key, text_hashes in shown.items()
            if any(
                tokens_match(content=content, full_anchors=full, tokens=tokens)
                for text_hash in text_hashes
                for content, full in profiles.get((key, text_hash), ())
            )
        )
    )
    if not matching:
        return UNMATCHED, ()
    if len(matching) > 1:
        # Several lessons the session saw fit the correction: charging any one of them would be a guess.
        return AMBIGUOUS, matching

    (key,) = matching
    current_hash = current.get(key)
    current_shown = [
        exposure.shown_at_ms
        for exposure in session_exposures
        if exposure.key == key and exposure.text_hash == current_hash and exposure.shown_at_ms <= k
    ]
    if not current_shown:
        return EARLIER_VERSION, matching
    turn_started = correction.turn_started_at_ms
    if turn_started is None:
        return UNKNOWN, matching
    # e <= t: the current text was in front of the agent before it began the corrected answer.
    return (RECURRED if min(current_shown) <= turn_started else DURING), matching


def _coverage(
    exposures: list[Exposure], corrections: list[Correction], attributions: list[Attribution]
) -> dict:
    outcomes = Counter(attribution.outcome for attribution in attributions)
    kinds = Counter(correction.kind for correction in corrections)
    sessions = {exposure.session for exposure in exposures} | {c.session for c in corrections}
    return {
        "sessions": len(sessions),
        "exposures": len(exposures),
        "corrections_by_kind": {kind: kinds[kind] for kind in sorted(kinds)},
        "attributed": sum(outcomes[outcome] for outcome in SINGLE_OUTCOMES),
        "ambiguous": outcomes[AMBIGUOUS],
        "unmatched": outcomes[UNMATCHED],
    }


def unmatched_topics(
    *,
    corrections: Iterable[Correction],
    live_lesson_texts: Iterable[str],
    limit: int = UNMATCHED_TOPICS_LIMIT,
) -> list[tuple[str, int]]:
    """Topics corrected in two or more sessions that no live lesson anchors, as ``(topic, sessions)``.

    Pass one host's corrections and the texts of that host's live lessons. A topic is a full anchor of
    a ``user_correction``'s own text; topics that are a full anchor of any live lesson text are left
    out. Sorted by distinct sessions (descending), then topic; at most ``limit`` rows.
    Raises ``ValueError`` for a negative ``limit``. docs/piles-and-recurrence.md, "Unmatched topics".
    """
    if limit < 0:
        raise ValueError("limit must be >= 0")
    covered: set[str] = set()
    for text in live_lesson_texts:
        covered |= anchors(text)[0]
    sessions_by_topic: dict[str, set[str]] = defaultdict(set)
    for correction in corrections:
        if correction.kind != USER_CORRECTION:
            continue
        for topic in correction_topics(correction.text) - covered:
            sessions_by_topic[topic].add(correction.session)
    rows = [
        (topic, len(sessions))
        for topic, sessions in sessions_by_topic.items()
        if len(sessions) >= UNMATCHED_TOPIC_MIN_SESSIONS
    ]
    rows.sort(key=lambda row: (-row[1], row[0]))
    return rows[:limit]
