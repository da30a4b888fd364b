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

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lessons.core import verdicts
from lessons.core.recurrence import RECURRED, UNMATCHED, lesson_profile
from lessons.core.tokens import correction_tokens, tokens_match

SUPPORTED = "supported"
CONTRADICTED = "contradicted"
TOO_EARLY = "too_early"
OUTCOMES = (SUPPORTED, CONTRADICTED, TOO_EARLY)
LABELS = {SUPPORTED: "supported", CONTRADICTED: "contradicted", TOO_EARLY: "too early"}
CONTRADICTED_SESSIONS = 2  # as a lesson is "recurring" (docs/piles-and-recurrence.md)
HELD_VERDICTS = frozenset({verdicts.HELD})
WORSE = frozenset({verdicts.REGRESSED, verdicts.DRIFTED})
OUTCOMES_VERSION = 1  # bumped when a rule changes: stored outcomes of another version are recomputed


@dataclass(frozen=True)
class CorrectionSeen:
    """One ``user_correction`` after a decision: its id, session, time (epoch ms, UTC), text, and what
    it was attributed to: ``(outcome, lesson hash or None)`` pairs (``unmatched`` has no lesson)."""

    id: int
    session: str
    at_ms: int
    text: str
    charged: tuple[tuple[str, str | None], ...]


@dataclass(frozen=True)
class VerdictSeen:
    """One verdict of a lesson: the lesson's hash, the verdict, when it was measured (epoch ms, UTC)."""

    lesson: str
    verdict: str
    at_ms: int


@dataclass(frozen=True)
class Outcome:
    """A decision's outcome: ``outcome`` in ``OUTCOMES``; ``sessions_after``: the host's sessions with
    activity after the decision; ``evidence``: the corrections (``{"id", "session", "at_ms"}``) and
    verdicts (``{"lesson", "verdict", "at_ms"}``) it rests on, oldest first; ``why``: one sentence."""

    outcome: str
    sessions_after: int
    corrections: tuple[dict, ...]
    verdicts: tuple[dict, ...]
    why: str

    def as_evidence(self) -> dict:
        """The stored (JSON) evidence."""
        return {"corrections": list(self.corrections), "verdicts": list(self.verdicts), "why": self.why}


def on_topic(lesson_text: str, correction_text: str) -> bool:
    """Whether a correction is on a lesson text's topic (rules A and B)."""
    content, anchors = lesson_profile(lesson_text)
    return tokens_match(content=content, full_anchors=anchors, tokens=correction_tokens(correction_text))


def _sessions(corrections: Iterable[CorrectionSeen]) -> set[str]:
    return {c.session for c in corrections}


def _listed(corrections: Iterable[CorrectionSeen]) -> tuple[dict, ...]:
    return tuple(
        {"id": c.id, "session": c.session, "at_ms": c.at_ms}
        for c in sorted(corrections, key=lambda c: (c.at_ms, c.id))
    )


def retire_outcome(
    *,
    lesson_text: str,
    kept: Sequence[tuple[str, str]],
    corrections: Sequence[CorrectionSeen],
    sessions_after: int,
    support_sessions: int,
) -> Outcome:
    """The outcome of retiring a lesson of text ``lesson_text``. ``kept``: ``(hash, text)`` of the live
    lessons of its entity on its topic (they keep its fact); ``corrections``: the host's user corrections
    after the decision; ``sessions_after``: the host's sessions with activity after it."""
    kept_hashes = {h for h, text in kept}
    against = [
        c
        for c in corrections
        if on_topic(lesson_text, c.text)
        and any(o == UNMATCHED or (o == RECURRED and h in kept_hashes) for o, h in c.charged)
    ]
    sessions = _sessions(against)
    listed = _listed(against)
    if len(sessions) >= CONTRADICTED_SESSIONS:
        kept_note = " (or with the lesson that keeps its fact shown)" if kept_hashes else ""
        why = f"corrected on its topic again in {len(sessions)} sessions after the retire{kept_note}"
        return Outcome(CONTRADICTED, sessions_after, listed, (), why)
    if not against and sessions_after >= support_sessions:
        why = f"no correction on its topic in the {sessions_after} sessions after the retire"
        return Outcome(SUPPORTED, sessions_after, listed, (), why)
    why = (
        f"{sessions_after} sessions after the retire ({support_sessions} needed), "
        f"corrected on its topic in {len(sessions)}"
    )
    return Outcome(TOO_EARLY, sessions_after, listed, (), why)


def live_again_outcome(
    *,
    lessons: Sequence[str],
    verdicts: Sequence[VerdictSeen],
    corrections: Sequence[CorrectionSeen],
    sessions_after: int,
    what: str,
) -> Outcome:
    """The outcome of a decision that made ``lessons`` (hashes) live: an approved consolidation, or the
    lessons a restore or roll back brought back (``what`` names it in ``why``). ``verdicts``: theirs
    measured after the decision; ``corrections``: the host's user corrections after it."""
    mine = set(lessons)
    recurred = [c for c in corrections if any(o == RECURRED and h in mine for o, h in c.charged)]
    sessions = _sessions(recurred)
    latest: dict[str, VerdictSeen] = {}
    for v in sorted(verdicts, key=lambda v: (v.at_ms, v.verdict)):
        if v.lesson in mine:
            latest[v.lesson] = v
    shown = tuple(
        {"lesson": v.lesson, "verdict": v.verdict, "at_ms": v.at_ms}
        for v in sorted(latest.values(), key=lambda v: (v.at_ms, v.lesson))
    )
    listed = _listed(recurred)
    worse = [v for v in latest.values() if v.verdict in WORSE]
    if worse or len(sessions) >= CONTRADICTED_SESSIONS:
        parts = [f"{v.verdict} when re-measured" for v in worse[:1]]
        if len(sessions) >= CONTRADICTED_SESSIONS:
            parts.append(f"shown, then corrected on its topic in {len(sessions)} sessions")
        return Outcome(CONTRADICTED, sessions_after, listed, shown, f"{what}: " + "; ".join(parts))
    if any(v.verdict in HELD_VERDICTS for v in latest.values()):
        return Outcome(SUPPORTED, sessions_after, listed, shown, f"{what}: held when re-measured")
    why = f"{what}: no verdict since the decision, corrected on its topic in {len(sessions)} sessions"
    return Outcome(TOO_EARLY, sessions_after, listed, shown, why)
