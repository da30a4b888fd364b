"""The outcome of a decision: did the cut help? Pure rules over what arrived after the decision, no ORM.

A decision's outcome is derived and dated: it is computed from the corrections, sessions and verdicts
stored after the decision's time ``T``, never changes the hash-chained record, and carries the ids of
its evidence. docs: docs/decisions.md, "Outcomes".

- **retire** of lesson L: the host's ``user_correction``s after ``T`` on L's topic (the matching rules of
  docs/piles-and-recurrence.md, "Which lesson a correction is about") that no shown lesson matched
  (attributed ``unmatched``: no live lesson on the topic was in front of the agent), plus those charged
  (``recurred``) to a lesson that keeps L's fact (a live lesson of L's entity on L's topic: the kept
  restatement is still corrected). In ``CONTRADICTED_SESSIONS`` or more distinct sessions:
  **contradicted**; none, with at least ``support_sessions`` sessions of the host after ``T``:
  **supported**; otherwise **too early**.
- **approve** of a consolidation C: C's latest verdict measured after ``T`` (held supports; regressed or
  drifted contradicts) and C's own recurrence after ``T`` (corrections charged ``recurred`` to C in
  ``CONTRADICTED_SESSIONS`` or more sessions: contradicted). Neither yet: too early.
- **restore** and **rollback**: the lessons made live again, judged as an approve judges C (their
  verdicts and recurrence after ``T``); none of them with evidence yet: too early.
"""

from __future__ import annotations

import bisect
import hashlib
import json
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from lessons.core import verdicts
from lessons.core.recurrence import RECURRED, UNMATCHED, lesson_profile
from lessons.core.tokens import (
    RULE_B_MIN_SHARE_DENOMINATOR,
    RULE_B_MIN_SHARE_NUMERATOR,
    RULE_B_MIN_SHARED,
    correction_tokens,
    correction_tokens_in,
)

SUPPORTED = "supported"
CONTRADICTED = "contradicted"
TOO_EARLY = "too_early"
OUTCOMES = (SUPPORTED, CONTRADICTED, TOO_EARLY)
LABELS = {SUPPORTED: "supported", CONTRADICTED: "contradicted", TOO_EARLY: "too early"}
CONTRADICTED_SESSIONS = 2  # as a lesson is "recurring" (docs/piles-and-recurrence.md)
HELD_VERDICTS = frozenset({verdicts.HELD})
WORSE = frozenset({verdicts.REGRESSED, verdicts.DRIFTED})
# bumped when a rule changes: stored outcomes of another version are recomputed. 2: the evidence lists the
# first EVIDENCE_CORRECTIONS corrections and counts them all (corrections_total); a supported retire's
# sentence names the sessions it needed, not the count so far (that count is ``sessions_after``); the latest
# verdict ties as a lesson's latest verdict does (horizon, then ingest order); a retire counts corrections
# charged to any lesson of its entity on its topic, live now or not (it was shown when charged).
# 3: a contradicted outcome is compared by its kind, the corrections it lists, its verdicts and what it rests
# on (``Outcome.rests_on``), not by its total and the counts in its sentence, which stay as computed.
OUTCOMES_VERSION = 3
EVIDENCE_CORRECTIONS = 10  # corrections listed in a decision's evidence; the rest are counted


@dataclass(frozen=True, slots=True)
class CorrectionSeen:
    """One ``user_correction`` after a decision: its id, session, time (epoch ms, UTC), text, and what
    it was attributed to: ``(outcome, lesson hash or None)`` pairs (``unmatched`` has no lesson)."""

    id: int
    session: str
    at_ms: int
    text: str
    charged: tuple[tuple[str, str | None], ...]


class Counted(NamedTuple):
    """A correction an outcome counts, as kept between refreshes (``review.models.OutcomeCharge``): its id,
    session and time (epoch ms, UTC). ``Later`` takes these as it takes ``CorrectionSeen``."""

    id: int
    session: str
    at_ms: int


@dataclass(frozen=True)
class VerdictSeen:
    """One verdict of a lesson: the lesson's hash, the verdict, when it was measured (epoch ms, UTC), and
    what breaks a tie of times as a lesson's latest verdict does (docs/interchange.md, "verdict"): the
    horizon (ms; None ranks lowest), then the order it was ingested in (``seq``: its row id)."""

    lesson: str
    verdict: str
    at_ms: int
    horizon_ms: int | None = None
    seq: int = 0

    def rank(self) -> tuple[int, int, int]:
        """The order of a lesson's verdicts, the latest last."""
        return self.at_ms, -1 if self.horizon_ms is None else self.horizon_ms, self.seq


@dataclass(frozen=True)
class Outcome:
    """A decision's outcome: ``outcome`` in ``OUTCOMES``; the evidence it rests on, oldest first: the
    corrections (``{"id", "session", "at_ms"}``, the first ``EVIDENCE_CORRECTIONS`` of
    ``corrections_total``) and verdicts (``{"lesson", "verdict", "at_ms"}``); ``why``: one sentence. The
    count of the host's sessions after the decision is the caller's (it is in ``why`` only while too
    early), so decisions judged alike share one ``Outcome``."""

    outcome: str
    corrections: tuple[dict, ...]
    verdicts: tuple[dict, ...]
    why: str
    corrections_total: int = 0
    # what a contradicted outcome rests on besides the corrections and verdicts it lists (the sentence
    # without its counts): with those, all that ``digest`` compares of it
    rests_on: str = ""

    def as_evidence(self) -> dict:
        """The stored (JSON) evidence."""
        return {
            "corrections": list(self.corrections),
            "corrections_total": self.corrections_total,
            "verdicts": list(self.verdicts),
            "why": self.why,
        }

    def digest(self) -> str:
        """16 hex digits that change when the kind or the evidence does: a stored outcome is compared by
        it, without reading its evidence back. A contradicted outcome stays contradicted however many more
        corrections come: its digest leaves out the total and the sentence (their counts only grow), and
        takes the corrections it lists, its verdicts and ``rests_on`` instead, so that more corrections after
        those it lists leave it as it was computed (docs/decisions.md, "Outcomes")."""
        said = self.as_evidence()
        if self.outcome == CONTRADICTED:
            said = {
                "corrections": said["corrections"],
                "verdicts": said["verdicts"],
                "rests_on": self.rests_on,
            }
        text = json.dumps([self.outcome, said], sort_keys=True, separators=(",", ":"))
        return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def _sessions(n: int) -> str:
    return f"{n} session" if n == 1 else f"{n} sessions"


def _when(c: CorrectionSeen) -> tuple[int, int]:
    return c.at_ms, c.id


class Later:
    """Corrections in time order (``(at_ms, id)``) with how many distinct sessions each tail holds, so that
    what came after a time is a position (``start``) and its sessions a look-up (``sessions_from``), not
    a scan per decision. Kept as arrays (positions into the corrections, their times and sessions), so that
    a retired lesson's thousands of corrections cost a few array operations; ``items`` and ``listed`` build
    ``CorrectionSeen`` objects only for what they return."""

    def __init__(self, corrections: Iterable[CorrectionSeen], *, ordered: bool = False) -> None:
        """``ordered``: the corrections already come in time order (not sorted again)."""
        items = list(corrections) if ordered else sorted(corrections, key=_when)
        codes: dict[str, int] = {}
        sessions = [codes.setdefault(c.session, len(codes)) for c in items]
        self._fill(
            items,
            np.arange(len(items), dtype=np.int64),
            np.array([c.at_ms for c in items], dtype=np.int64),
            np.array(sessions, dtype=np.int64),
        )

    @classmethod
    def of(
        cls, source: Sequence[CorrectionSeen], positions: np.ndarray, times: np.ndarray, sessions: np.ndarray
    ) -> Later:
        """The corrections ``source[p]`` for ``p`` in ``positions`` (in time order), whose times (epoch ms)
        and session codes (any integers, equal for one session) are ``times`` and ``sessions``."""
        later = cls.__new__(cls)
        later._fill(source, positions, times, sessions)
        return later

    def _fill(
        self, source: Sequence[CorrectionSeen], positions: np.ndarray, times: np.ndarray, sessions: np.ndarray
    ) -> None:
        self._source, self._positions, self.times = source, positions, times
        # sessions_from[i]: the distinct sessions of the corrections from position i on (0 past the end):
        # each session counted at its last correction, summed from the end
        last = np.zeros(len(sessions), dtype=np.int64)
        if len(sessions):
            _codes, first_from_end = np.unique(sessions[::-1], return_index=True)
            last[len(sessions) - 1 - first_from_end] = 1
        self.sessions_from = np.append(np.cumsum(last[::-1])[::-1], 0)

    @property
    def items(self) -> list[CorrectionSeen]:
        """The corrections, oldest first."""
        return [self._source[i] for i in self._positions.tolist()]

    def start(self, after_ms: int) -> int:
        """The position of the first correction made after ``after_ms`` (epoch ms, UTC)."""
        return int(np.searchsorted(self.times, after_ms, side="right"))

    def starts(self, after_ms: np.ndarray) -> np.ndarray:
        """``start`` of each of ``after_ms`` (an array of epoch ms), at once."""
        return np.searchsorted(self.times, after_ms, side="right")

    def sessions(self, start: int) -> int:
        """The distinct sessions of the corrections from ``start`` on."""
        return int(self.sessions_from[start])

    def listed(self, start: int) -> tuple[tuple[dict, ...], int]:
        """The evidence from ``start`` on: the first ``EVIDENCE_CORRECTIONS`` as ``{"id", "session",
        "at_ms"}``, oldest first, and how many there are in all."""
        shown = (self._source[i] for i in self._positions[start : start + EVIDENCE_CORRECTIONS].tolist())
        listed = tuple({"id": c.id, "session": c.session, "at_ms": c.at_ms} for c in shown)
        return listed, len(self._positions) - start


_COUNTED = (UNMATCHED, RECURRED)  # the charges the outcome rules read


class _Listed(Sequence):
    """The corrections of a ``TopicIndex.from_rows`` as ``CorrectionSeen``, each made when asked for."""

    def __init__(self, columns: tuple[list, list, list, list, list]) -> None:
        self._ids, self._sessions, self._times, self._texts, self._pairs = columns

    def __len__(self) -> int:
        return len(self._ids)

    def __getitem__(self, i):  # an int (Later reads positions one by one)
        pairs = self._pairs[i]
        charged = tuple(pairs if len(pairs) < 2 else sorted(pairs, key=str))
        return CorrectionSeen(self._ids[i], self._sessions[i], self._times[i], self._texts[i], charged)


class TopicIndex:
    """The user corrections of one host after some time, indexed for the outcome rules: which of them
    count against a retired lesson (``against``), which were charged ``recurred`` to given lessons
    (``recurred``). Each correction's tokens are read once, into postings (token -> the positions of the
    corrections that hold it). Rules A and B depend only on how many of a lesson's content tokens a
    correction holds and which of its anchors, so one count over the postings of the lesson's tokens
    answers ``lessons.core.tokens.text_matches`` for every correction at once, in time that grows with
    the postings read, not with lessons x corrections (a test holds it to ``text_matches``)."""

    def __init__(self, corrections: Iterable[CorrectionSeen], topics: Iterable[str] | None = None) -> None:
        """``topics``: the texts of the only lessons ``against`` will be asked about (None: any), so that
        only their tokens are indexed (``against`` of another text raises ``ValueError``)."""
        eligible = [c for c in sorted(corrections, key=_when) if any(o in _COUNTED for o, _h in c.charged)]
        rows = (
            (c.id, c.session, c.at_ms, c.text, o, h) for c in eligible for o, h in c.charged if o in _COUNTED
        )
        self._build(rows, topics)
        self._eligible: Sequence[CorrectionSeen] = eligible

    @classmethod
    def from_rows(cls, rows: Iterable[tuple], topics: Iterable[str] | None = None) -> TopicIndex:
        """The index of charges read as rows ``(correction id, session, at_ms, text, outcome, lesson hash or
        None)``, only ``unmatched`` and ``recurred`` ones, in time order (``(at_ms, id)``) with a
        correction's rows together: what the database gives in one read, without a ``CorrectionSeen`` for
        each correction (one is made for each correction an outcome lists). ``topics`` as ``__init__``."""
        index = cls.__new__(cls)
        index._build(rows, topics)
        index._eligible = _Listed(index._columns)
        return index

    def _build(self, rows: Iterable[tuple], topics: Iterable[str] | None) -> None:
        self._topics = None if topics is None else frozenset(topics)
        vocabulary = None
        if self._topics is not None:
            vocabulary = frozenset().union(*(c | a for c, a in map(lesson_profile, self._topics)))
        ids: list[int] = []
        names: list[str] = []
        times: list[int] = []
        texts: list[str] = []
        pairs: list[list[tuple[str, str | None]]] = []
        unmatched: list[bool] = []
        codes: dict[str, int] = {}
        sessions: list[int] = []
        postings: dict[str, list[int]] = defaultdict(list)
        charged: dict[str, list[int]] = defaultdict(list)
        i = -1
        for correction_id, session, at_ms, text, outcome, lesson in rows:
            if not ids or ids[-1] != correction_id:  # a correction's first row
                i += 1
                ids.append(correction_id)
                names.append(session)
                times.append(at_ms)
                texts.append(text)
                pairs.append([])
                unmatched.append(False)
                sessions.append(codes.setdefault(session, len(codes)))
                if vocabulary is None:
                    tokens = correction_tokens(text)
                else:
                    tokens = correction_tokens_in(text, vocabulary)
                for token in tokens:
                    postings[token].append(i)
            pairs[i].append((outcome, lesson))
            if outcome == UNMATCHED:
                unmatched[i] = True
            elif lesson and (not charged[lesson] or charged[lesson][-1] != i):
                charged[lesson].append(i)
        self._columns = (ids, names, times, texts, pairs)
        self._ids = np.array(ids, dtype=np.int64)
        self.session_names = list(codes)  # by session code
        self._unmatched = np.array(unmatched, dtype=bool)
        self._times = np.array(times, dtype=np.int64)
        self._sessions = np.array(sessions, dtype=np.int64)
        self._postings = {token: np.array(at, dtype=np.int64) for token, at in postings.items()}
        self._charged = {lesson: np.array(at, dtype=np.int64) for lesson, at in charged.items()}

    def _on_topic(self, content: frozenset[str], anchors: frozenset[str]) -> np.ndarray:
        """The positions (sorted) of the corrections rules A or B match: B needs ``need`` shared content
        tokens; A an anchor and another shared content token (two shared when the anchor is one). One
        ``bincount`` over the postings of the lesson's tokens (a sort of them costs more)."""
        held = [self._postings[t] for t in content if t in self._postings]
        if not held:
            return np.empty(0, dtype=np.int64)
        shared = np.bincount(np.concatenate(held), minlength=len(self._eligible))
        share = -(-len(content) * RULE_B_MIN_SHARE_NUMERATOR // RULE_B_MIN_SHARE_DENOMINATOR)  # rounded up
        hit = shared >= max(RULE_B_MIN_SHARED, share)
        for anchor in anchors:
            if anchor in self._postings:
                at = self._postings[anchor]
                hit[at] |= shared[at] >= (2 if anchor in content else 1)
        return np.flatnonzero(hit)

    def against(self, lesson_text: str, kept: Iterable[str]) -> Later:
        """The corrections that count against retiring a lesson of text ``lesson_text`` whose fact the
        lessons ``kept`` (hashes) keep: on its topic, and attributed ``unmatched`` or charged ``recurred``
        to a kept lesson (module docstring, "retire"). Raises ``ValueError`` for a text outside the index's
        ``topics``."""
        if self._topics is not None and lesson_text not in self._topics:
            raise ValueError("a topic outside those indexed")
        found = self._on_topic(*lesson_profile(lesson_text))
        counted = self._unmatched[found]
        charged = [self._charged[lesson] for lesson in set(kept) if lesson in self._charged]
        if charged:
            counted |= np.isin(found, np.concatenate(charged))
        return self._later(found[counted])

    def columns(self, later: Later, start: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The corrections of ``later`` (an answer of this index) from ``start`` on as int64 arrays: their
        ids, times (epoch ms) and sessions (codes: positions in ``session_names``)."""
        at = later._positions[start:]
        return self._ids[at], self._times[at], self._sessions[at]

    def _later(self, positions: np.ndarray) -> Later:
        return Later.of(self._eligible, positions, self._times[positions], self._sessions[positions])

    def recurred(self, lessons: Iterable[str]) -> Later:
        """The corrections charged ``recurred`` to any of ``lessons`` (hashes), each once, in time order
        (a charged correction is always an eligible one: its positions are ``_charged``'s)."""
        charged = [self._charged[lesson] for lesson in set(lessons) if lesson in self._charged]
        found = np.unique(np.concatenate(charged)) if charged else np.empty(0, dtype=np.int64)
        return self._later(found)


class LatestVerdicts:
    """Each lesson's verdicts in order (``VerdictSeen.rank``): ``after`` gives, for the lessons asked, the
    latest verdict measured after a time, in the order their first verdict after it came."""

    def __init__(self, verdicts: Iterable[VerdictSeen]) -> None:
        self._by_lesson: dict[str, list[VerdictSeen]] = defaultdict(list)
        for v in sorted(verdicts, key=VerdictSeen.rank):
            self._by_lesson[v.lesson].append(v)
        self._times = {lesson: [v.at_ms for v in vs] for lesson, vs in self._by_lesson.items()}

    def after(self, lessons: Iterable[str], after_ms: int) -> list[VerdictSeen]:
        """The latest verdict of each of ``lessons`` measured after ``after_ms`` (epoch ms, UTC); lessons
        without one are left out."""
        firsts = []
        for lesson in set(lessons):
            vs = self._by_lesson.get(lesson, [])
            i = bisect.bisect_right(self._times.get(lesson, []), after_ms)
            if i < len(vs):
                firsts.append(((vs[i].rank(), lesson), vs[-1]))
        return [latest for _first, latest in sorted(firsts, key=lambda pair: pair[0])]


def retire_outcome(
    *, against: Later, start: int, kept: bool, sessions_after: int, support_sessions: int
) -> Outcome:
    """The outcome of retiring a lesson. ``against``: the corrections that count against it
    (``TopicIndex.against``), of which those from ``start`` on came after the decision
    (``against.start(T)``); ``kept``: whether another lesson of its entity keeps its fact (on its topic,
    live now or not); ``sessions_after``: the host's sessions with activity after the decision."""
    sessions = against.sessions(start)
    listed, total = against.listed(start)
    if sessions >= CONTRADICTED_SESSIONS:
        kept_note = " (or with the lesson that keeps its fact shown)" if kept else ""
        why = f"corrected on its topic again in {sessions} sessions after the retire{kept_note}"
        return Outcome(CONTRADICTED, listed, (), why, total, rests_on=f"retire{kept_note}")
    if not total and sessions_after >= support_sessions:
        why = f"no correction on its topic in at least {support_sessions} sessions after the retire"
        return Outcome(SUPPORTED, listed, (), why, total)
    if sessions_after >= support_sessions:  # enough sessions, but corrected in one: a second contradicts it
        why = (
            f"corrected on its topic in 1 session of the {sessions_after} after the retire; "
            "a second contradicts it"
        )
    else:
        why = (
            f"{_sessions(sessions_after)} after the retire ({support_sessions} needed), "
            f"corrected on its topic in {sessions}"
        )
    return Outcome(TOO_EARLY, listed, (), why, total)


def live_again_outcome(*, latest: Sequence[VerdictSeen], recurred: Later, start: int, what: str) -> Outcome:
    """The outcome of a decision that made lessons live: an approved consolidation, or the lessons a
    restore or roll back brought back (``what`` names it in ``why``). ``latest``: their latest verdicts
    measured after the decision (``LatestVerdicts.after``); ``recurred``: the corrections charged
    ``recurred`` to them (``TopicIndex.recurred``), of which those from ``start`` on came after it."""
    sessions = recurred.sessions(start)
    listed, total = recurred.listed(start)
    shown = tuple(
        {"lesson": v.lesson, "verdict": v.verdict, "at_ms": v.at_ms}
        for v in sorted(latest, key=lambda v: (v.at_ms, v.lesson))
    )
    worse = [v for v in latest if v.verdict in WORSE]
    if worse or sessions >= CONTRADICTED_SESSIONS:
        parts = [f"{v.verdict} when re-measured" for v in worse[:1]]
        recurred_again = sessions >= CONTRADICTED_SESSIONS
        if recurred_again:
            parts.append(f"shown, then corrected on its topic in {sessions} sessions")
        rests_on = f"{what}: {parts[0] if worse else ''}; corrected again: {recurred_again}"
        return Outcome(CONTRADICTED, listed, shown, f"{what}: " + "; ".join(parts), total, rests_on=rests_on)
    if any(v.verdict in HELD_VERDICTS for v in latest):
        return Outcome(SUPPORTED, listed, shown, f"{what}: held when re-measured", total)
    if latest:  # re-measured, but as neither held nor worse (held_costlier, unmeasured, any other value)
        verdict = latest[-1].verdict
        why = f"{what}: re-measured as {verdict}, which neither supports nor contradicts it"
    else:
        why = f"{what}: no verdict since the decision"
    why += f", corrected on its topic in {_sessions(sessions)}"
    return Outcome(TOO_EARLY, listed, shown, why, total)
