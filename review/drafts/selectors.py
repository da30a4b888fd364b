"""Reads for the draft page: one consolidation draft with its members, coverage, prompt preview and decisions.

Three queries whatever the number of members: the draft (host joined), every lesson of its entity
(recurrence counts joined), the decisions naming the draft (host acknowledgements joined). The coverage
rules come from ``lessons.core.coverage``, the status from ``lessons.selectors.piles.draft_status`` and the
pile version from ``lessons.selectors.piles.pile_version``, so the page agrees with the JSON and with the
decision services. The prompt preview and the per-member summaries are pure functions below.
docs/interchange.md ("draft: a drafted consolidating lesson"), docs/piles-and-recurrence.md ("Which lesson a
correction is about"), docs/piles-and-recurrence.md, "Piles" (rules 2-5), docs/decisions.md ("The actions").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from lessons.core.coverage import MemberCoverage, draft_coverage, requires_confirmation
from lessons.core.piles import is_over_budget, pile_target
from lessons.core.recurrence import COUNT_FIELDS
from lessons.core.text import lesson_hash
from lessons.models import Draft, Host, Lesson
from lessons.selectors.piles import draft_status, entity_lessons, pile_version
from lessons.serializers import recurrence_dict
from review.models import Decision

# The token estimate of a prompt block: characters / 4, rounded up. A rough rule of thumb for English
# text with common tokenizers; the page says it is an estimate.
CHARS_PER_TOKEN = 4
LINE_PREFIX = "- "
NOT_ON_ENTITY = "not on this entity: the draft names a lesson its entity does not have"


# --- pure helpers ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Chip:
    """One of a member's words as the coverage matrix shows it: ``anchor`` (a full anchor, backticked in
    the member) or a plain content token; ``kept`` when the draft's text has it among its runs."""

    word: str
    anchor: bool
    kept: bool


def coverage_chips(coverage: MemberCoverage) -> tuple[tuple[Chip, ...], tuple[Chip, ...]]:
    """``(kept, dropped)`` chips of one member: anchors first, then plain tokens, each group sorted.

    A full anchor that is also a content token is shown once, as an anchor.
    """
    anchors_all = set(coverage.kept_anchors) | set(coverage.dropped_anchors)
    kept = [Chip(a, True, True) for a in coverage.kept_anchors]
    kept += [Chip(t, False, True) for t in coverage.kept_tokens if t not in anchors_all]
    dropped = [Chip(a, True, False) for a in coverage.dropped_anchors]
    dropped += [Chip(t, False, False) for t in coverage.dropped_tokens if t not in anchors_all]
    return tuple(kept), tuple(dropped)


def _backticked(words: Sequence[str]) -> str:
    return ", ".join(f"`{w}`" for w in words)


def coverage_summary(coverage: MemberCoverage) -> str:
    """One line per member, e.g. ``keeps 5 of 6 tokens; drops anchor `to_utc```.

    "tokens" counts the member's content tokens and full anchors together (each word once). Anchors are
    named: dropped ones always, kept ones when none is dropped.
    """
    kept, dropped = coverage_chips(coverage)
    total = len(kept) + len(dropped)
    parts = [f"keeps {len(kept)} of {total} token{'s' if total != 1 else ''}"]
    if coverage.dropped_anchors:
        n = len(coverage.dropped_anchors)
        parts.append(f"drops anchor{'s' if n != 1 else ''} {_backticked(coverage.dropped_anchors)}")
    elif coverage.kept_anchors:
        n = len(coverage.kept_anchors)
        parts.append(f"keeps anchor{'s' if n != 1 else ''} {_backticked(coverage.kept_anchors)}")
    return "; ".join(parts)


# What the "Now" block says of a live lesson the next decision would take out. Conditional: before the
# decision nothing has left (the newcomer run's item 5: an approved draft's live consolidation was shown
# struck through as "retracted by a roll back" before any roll back).
LEAVES_IF_APPROVED = "superseded if approved"
LEAVES_IF_ROLLED_BACK = "retracted if rolled back"


@dataclass(frozen=True)
class PromptLine:
    """One lesson of a prompt block; ``hash`` is None for the consolidation an approval would create.

    ``new``: it enters the prompt with the decision; ``leaving``: empty, or why it would leave the prompt
    with the decision (``LEAVES_IF_APPROVED``, ``LEAVES_IF_ROLLED_BACK``): it is still live now.
    """

    hash: str | None
    text: str
    new: bool = False
    leaving: str = ""


@dataclass(frozen=True)
class PromptBlock:
    """The entity's live lessons as the agent's prompt lists them: oldest first (docs/piles-and-recurrence.md,
    "Piles" rule 5).

    ``chars`` is the length of the block rendered as one ``- text`` line per lesson joined by newlines;
    ``tokens_estimate`` is ``ceil(chars / 4)``, an estimate, not a tokenizer's count.
    """

    lines: tuple[PromptLine, ...]
    max_active: int
    budget_enabled: bool

    @property
    def count(self) -> int:
        return len(self.lines)

    @property
    def over_budget(self) -> bool:
        return is_over_budget(
            live_count=self.count, max_active=self.max_active, budget_enabled=self.budget_enabled
        )

    @property
    def budget_label(self) -> str:
        """``10 / 8 over budget``, ``1 / 8 within budget`` or ``… budget not enabled``:
        docs/piles-and-recurrence.md, "Piles" rules 3-4."""
        if not self.budget_enabled:
            return f"{self.count} / {self.max_active}, budget not enabled"
        state = "over budget" if self.over_budget else "within budget"
        return f"{self.count} / {self.max_active} {state}"

    @property
    def chars(self) -> int:
        return len("\n".join(LINE_PREFIX + line.text for line in self.lines))

    @property
    def tokens_estimate(self) -> int:
        return math.ceil(self.chars / CHARS_PER_TOKEN)


def prompt_after_approval(
    live: Sequence[Lesson], *, supersedes: Sequence[str], text: str
) -> tuple[PromptLine, ...]:
    """The prompt lines once the draft is approved: the live lessons it does not supersede, oldest first,
    then the consolidation, the newest (its ``created_at`` is the moment of approval)."""
    gone = set(supersedes)
    kept = [PromptLine(x.hash, x.text) for x in live if x.hash not in gone]
    return (*kept, PromptLine(None, text, new=True))


def prompt_after_rollback(lessons: Sequence[Lesson], *, consolidation: Lesson) -> tuple[PromptLine, ...]:
    """The prompt lines once an approved consolidation is rolled back: it leaves, the members it
    superseded come back, all oldest first (``lessons`` are already in that order)."""
    back = set(consolidation.consolidates or [])
    return tuple(
        PromptLine(x.hash, x.text, new=x.status != Lesson.Status.LIVE)
        for x in lessons
        if x.pk != consolidation.pk
        and (
            x.status == Lesson.Status.LIVE
            or (
                x.status == Lesson.Status.SUPERSEDED
                and x.superseded_by == consolidation.hash
                and x.hash in back
            )
        )
    )


# --- the draft page ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class MemberRow:
    """A lesson the draft supersedes, as its row in the coverage matrix.

    ``lesson`` is None when the draft names a hash that is not on its entity. ``counts``: the seven
    recurrence counts. ``kept`` / ``dropped``: chips. ``summary``: ``coverage_summary``.
    """

    hash: str
    lesson: Lesson | None
    coverage: MemberCoverage | None
    counts: dict
    kept: tuple[Chip, ...]
    dropped: tuple[Chip, ...]
    summary: str

    @property
    def verdict(self) -> str | None:
        return self.lesson.latest_verdict if self.lesson else None

    @property
    def live(self) -> bool:
        return self.lesson is not None and self.lesson.status == Lesson.Status.LIVE

    @property
    def needs_confirmation(self) -> bool:
        return self.coverage is not None and self.coverage.held and bool(self.coverage.dropped_anchors)


@dataclass(frozen=True)
class DraftDetail:
    """One draft as the draft page shows it.

    ``status``: pending, approved, rejected or stale (docs/piles-and-recurrence.md, "How the piles JSON is
    built"). ``members``: the lessons it
    supersedes in pile order (oldest first), then any hash not on the entity. ``not_live``: the hashes it
    supersedes that are not live (why it is stale). ``confirm_anchors``: the full anchors it drops from
    held members (approving needs a confirmation). ``consolidation``: the lesson an approval created (or
    None). ``duplicate``: a lesson already carrying the consolidation's hash (an approval would be refused).
    ``version``: the entity's pile version. ``decisions``: records naming the draft, ``seq`` order.
    ``preview_now`` / ``preview_after``: prompt blocks; ``preview_after_label`` says after what (approval of
    a pending draft whose gates pass, or a roll back of a live consolidation); ``preview_after`` is None
    when no decision on the draft can change the prompt.
    """

    draft: Draft
    host: Host
    status: str
    members: tuple[MemberRow, ...]
    not_live: tuple[str, ...]
    confirm_anchors: tuple[str, ...]
    consolidation: Lesson | None
    duplicate: Lesson | None
    version: str
    decisions: tuple[Decision, ...]
    preview_now: PromptBlock
    preview_after: PromptBlock | None
    preview_after_label: str

    @property
    def target(self) -> str:
        return pile_target(self.draft.namespace, self.draft.subject)

    @property
    def failed_gates(self) -> tuple[str, ...]:
        if self.draft.written_by_reviewer:  # no gate was run: none failed
            return ()
        gates = (("GROUND", self.draft.gate_ground), ("VERIFY", self.draft.gate_verify))
        return tuple(name for name, value in gates if value != "pass")

    @property
    def origin(self) -> str:
        """How the page names the draft's origin (``draft_origin``)."""
        return draft_origin(self.draft)

    @property
    def waivers(self) -> list[tuple[str, str]]:
        """A reviewer-written draft's waived anchors with their reasons, in anchor order."""
        return sorted((self.draft.waivers or {}).items())

    @property
    def consolidation_live(self) -> bool:
        return self.consolidation is not None and self.consolidation.status == Lesson.Status.LIVE

    @property
    def rolled_back(self) -> bool:
        """Approved, and the consolidation it created is no longer live."""
        return self.draft.status == Draft.Status.APPROVED and not self.consolidation_live


ORIGIN_REVIEWER = "written by a reviewer"
ORIGIN_MODEL = "drafted by a model"
ORIGIN_HOST = "drafted at the host"
GATE_NOT_RUN_LABEL = "not run: written by a reviewer"


def draft_origin(draft: Draft) -> str:
    """``written by a reviewer`` (written in the dashboard), ``drafted by a model`` (an ``llm:`` author)
    or ``drafted at the host`` (any other author a host sent)."""
    if draft.written_by_reviewer:
        return ORIGIN_REVIEWER
    return ORIGIN_MODEL if draft.drafted_by.startswith("llm:") else ORIGIN_HOST


def draft_get(*, host_name: str, ext_id: str) -> Draft | None:
    """The draft ``(host, id)`` with its host joined, or ``None`` (names holding a NUL: see
    ``review.web.lookups.get_draft_or_404``)."""
    return Draft.objects.select_related("host").filter(host__name=host_name, ext_id=ext_id).first()


def _member_rows(draft: Draft, lessons: Sequence[Lesson]) -> tuple[MemberRow, ...]:
    by_hash = {x.hash: x for x in lessons}
    named = set(draft.supersedes)
    # entity_lessons is oldest first (docs/piles-and-recurrence.md, "Piles" rule 5)
    found = [x for x in lessons if x.hash in named]
    coverage = draft_coverage(
        draft_text=draft.text, members=[(x.hash, x.text, x.latest_verdict) for x in found]
    )
    rows = []
    for lesson, cov in zip(found, coverage, strict=True):
        kept, dropped = coverage_chips(cov)
        rows.append(
            MemberRow(lesson.hash, lesson, cov, recurrence_dict(lesson), kept, dropped, coverage_summary(cov))
        )
    missing = [h for h in dict.fromkeys(draft.supersedes) if h not in by_hash]
    zeros = dict.fromkeys(COUNT_FIELDS, 0)
    rows += [MemberRow(h, None, None, dict(zeros), (), (), NOT_ON_ENTITY) for h in missing]
    return tuple(rows)


def draft_detail(*, host_name: str, ext_id: str) -> DraftDetail | None:
    """The draft page's data for draft ``ext_id`` of host ``host_name``, or ``None``. Three queries."""
    draft = draft_get(host_name=host_name, ext_id=ext_id)
    if draft is None:
        return None
    host = draft.host
    lessons = list(entity_lessons(host=host, namespace=draft.namespace, subject=draft.subject))
    live = [x for x in lessons if x.status == Lesson.Status.LIVE]
    live_hashes = {x.hash for x in live}
    members = _member_rows(draft, lessons)
    coverage = [m.coverage for m in members if m.coverage is not None]
    consolidation = next((x for x in lessons if x.pk == draft.created_lesson_id), None)
    new_hash = lesson_hash(draft.namespace, draft.subject, draft.text)
    duplicate = None
    if draft.status == Draft.Status.PENDING:
        duplicate = next((x for x in lessons if x.hash == new_hash), None)
    status = draft_status(draft, live_hashes)
    leaving: set[str] = set()
    after_lines, after_label, leaves = None, "", ""
    if status == "pending" and draft.gates_pass:  # a draft that failed a gate is never approved
        leaving = set(draft.supersedes)
        after_lines = prompt_after_approval(live, supersedes=draft.supersedes, text=draft.text)
        after_label, leaves = "after approval", LEAVES_IF_APPROVED
    elif consolidation is not None and consolidation.status == Lesson.Status.LIVE:
        leaving = {consolidation.hash}
        after_lines = prompt_after_rollback(lessons, consolidation=consolidation)
        after_label, leaves = "after a roll back", LEAVES_IF_ROLLED_BACK
    budget = {"max_active": host.max_active, "budget_enabled": host.budget_enabled}
    now_lines = (PromptLine(x.hash, x.text, leaving=leaves if x.hash in leaving else "") for x in live)
    now = PromptBlock(tuple(now_lines), **budget)
    after = PromptBlock(after_lines, **budget) if after_lines is not None else None
    decisions = tuple(
        Decision.objects.filter(host=host.name, draft_id=draft.ext_id).select_related("ack").order_by("seq")
    )
    return DraftDetail(
        draft=draft,
        host=host,
        status=status,
        members=members,
        not_live=tuple(h for h in dict.fromkeys(draft.supersedes) if h not in live_hashes),
        confirm_anchors=tuple(requires_confirmation(coverage)),
        consolidation=consolidation,
        duplicate=duplicate,
        version=pile_version(lessons),
        decisions=decisions,
        preview_now=now,
        preview_after=after,
        preview_after_label=after_label,
    )
