"""Reads for the queue and the pile page: the queue, one pile. Views never build queries.

Each selector runs a fixed number of queries whatever the size of the entity (the page tests assert it):
members, their recurrence counts (joined) and their verdict histories (one query) are read in bulk.
The pile rules come from ``lessons.core.piles`` and the pile version from ``lessons.selectors.piles``,
so the pages, the JSON and the decision services agree. docs/piles-and-recurrence.md, "Piles",
docs/decisions.md.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import NamedTuple

from django.db.models import Exists, F, OuterRef, Prefetch, Q, QuerySet, Subquery, Sum, Value
from django.db.models.functions import Coalesce

from lessons.core.facts import Fact, fact_counts
from lessons.core.groups import marked_pieces
from lessons.core.piles import PENDING, SEVERITY, is_over_budget, pile_summary, pile_target
from lessons.core.recurrence import COUNT_FIELDS
from lessons.core.resolve import Resolution, resolve_by_facts
from lessons.core.text import hash8
from lessons.core.tokens import content_tokens
from lessons.models import Draft, Host, Lesson, RestatementMark, Verdict
from lessons.selectors.facts import pile_facts_stored
from lessons.selectors.piles import (
    draft_status,
    entity_lessons,
    pile_queue,
    pile_version,
    to_member,
)
from lessons.selectors.verdicts import latest_verdict_order
from review.models import Action, Decision, PileClaim
from review.services.common import decision_now
from review.web.paging import COUNT_CAP, KeysetPage, keyset_page


def host_pile_counts(host: str = "") -> dict[str, int]:
    """The over-budget entities (``HostCount.pile_count``, kept with the entity counts; 0 without a row)
    of ``host``: ``{host: n}``, or ``{}`` when no host has that name; without a host, of every host:
    ``{"": total}``. One query, whatever the number of hosts: the queue's total when no filter but the
    host is set (``queue_page``'s ``pile_counts``), and whether a typed host exists."""
    piles = Coalesce(F("counts__pile_count"), Value(0))
    if host:
        return dict(Host.objects.filter(name=host).values_list("name", piles))
    return {"": Host.objects.aggregate(total=Coalesce(Sum(piles), Value(0)))["total"]}


# --- the queue -------------------------------------------------------------------------------------


# The queue's default order: worst first (most over budget, then most live lessons), ties by entity.
QUEUE_DEFAULT_ORDER = ("-overage", "-live", "host_name", "namespace", "subject")
_TIE = ("host_name", "namespace", "subject")
# The sorts the queue table offers (its column names, ``?sort=``): the stored fields each orders by, then
# the tie. Each is served by an index over the over-budget rows (lessons.models.EntityCount).
QUEUE_SORTS = {
    "host_name": ("host_name",),
    "target": ("namespace", "subject"),
    "count": ("live",),
    "overage": ("overage",),
    "held": ("held",),
    "regressed": ("regressed",),
    "drifted": ("drifted",),
    "other": ("other",),
    "not_applied": ("not_applied",),
    "recurring": ("recurring",),
    "pending_drafts": ("pending_drafts",),
    "facts": ("facts",),
    "restatements": ("restatements",),
    "oldest": ("oldest",),
}


def queue_order(sort: str | None) -> tuple[str | None, tuple[str, ...]]:
    """``(alias, order)`` for a ``?sort=`` value: the column alias it names (``-`` for descending; None
    when it names no sortable column) and the fields to order by, ending in the unique tie. An unknown
    sort gives the default order (``QUEUE_DEFAULT_ORDER``), and so does ``-overage`` ("Over", most first):
    worst first is that order, so the two list the piles alike."""
    bare = (sort or "").removeprefix("-")
    if bare not in QUEUE_SORTS:
        return None, QUEUE_DEFAULT_ORDER
    if sort == "-overage":
        return sort, QUEUE_DEFAULT_ORDER
    fields = (*QUEUE_SORTS[bare], *(f for f in _TIE if f not in QUEUE_SORTS[bare]))
    descending = (sort or "").startswith("-")
    return sort, tuple(f"-{f}" for f in fields) if descending else fields


def queue_rows(
    *, host: str | None, namespace: str | None, text: str | None, recurring: bool = False
) -> QuerySet:
    """Over-budget entities as rows of the stored counts, filtered (``lessons.selectors.piles.pile_queue``);
    ``recurring``: only piles with at least one recurring member (docs/piles-and-recurrence.md, "Recurrence").
    Ordered by
    ``QUEUE_DEFAULT_ORDER`` (worst first)."""
    rows = pile_queue(host=host or None, namespace=namespace or None, text=text or None)
    rows = rows.order_by(*QUEUE_DEFAULT_ORDER)
    return rows.filter(recurring__gt=0) if recurring else rows


def queue_page(
    *,
    host: str | None,
    namespace: str | None,
    text: str | None,
    recurring: bool = False,
    sort: str | None = None,
    per_page: int,
    number: int = 1,
    after: str | None = None,
    before: str | None = None,
    pile_counts: dict[str, int] | None = None,
    now: datetime | None = None,
) -> KeysetPage:
    """One page of ``queue_rows`` in the order ``sort`` names (``queue_order``), read by keyset: the
    ``after`` / ``before`` cursors of the page's links (``review.web.paging.keyset_page``). Each row also
    carries its entity's live claim (``claim_user``, ``claim_at``, ``claim_until``: None when unclaimed
    or expired at ``now``), read in the same query; ``claims_of_rows`` turns them into ``ClaimShown``.

    Two queries whatever the page: the COUNT over the over-budget rows (at most ``COUNT_CAP + 1`` of
    them: a text filter's total stops growing with its matches), and the page. One when
    ``pile_counts`` (``host_pile_counts``) is given and no filter but the host is set: the total is the
    stored pile count of that host, or of every host."""
    _alias, order = queue_order(sort)
    rows = queue_rows(host=host, namespace=namespace, text=text, recurring=recurring)
    total = None
    if pile_counts is not None and not (namespace or text or recurring):
        total = pile_counts.get(host, 0) if host else pile_counts.get("", 0)
    claims = PileClaim.objects.filter(
        host_id=OuterRef("host_id"),
        namespace=OuterRef("namespace"),
        subject=OuterRef("subject"),
        expires_at__gt=decision_now(now),
    )
    rows = rows.annotate(
        claim_user=Subquery(claims.values("user__username")[:1]),
        claim_at=Subquery(claims.values("claimed_at")[:1]),
        claim_until=Subquery(claims.values("expires_at")[:1]),
    )
    return keyset_page(
        rows,
        order=order,
        per_page=per_page,
        number=number,
        after=after,
        before=before,
        total=total,
        cap=COUNT_CAP,
    )


QUEUE_NO_BUDGET = "no_budget"
QUEUE_HOST_NO_BUDGET = "host_no_budget"
QUEUE_NOTHING_OVER = "nothing_over"
QUEUE_NO_MATCH = "no_match"


def queue_empty_reason(*, filtered: bool, host: str = "") -> str:
    """Why the queue shows no row: ``host_no_budget`` (filtered to a host whose budget is off),
    ``no_budget``, ``nothing_over`` or ``no_match``. docs/piles-and-recurrence.md, "Piles" rule 3.

    Called only when the (filtered) queue is empty, so a full queue costs no extra query.
    """
    if host and Host.objects.filter(name=host, budget_enabled=False).exists():
        return QUEUE_HOST_NO_BUDGET
    if not Host.objects.filter(budget_enabled=True).exists():
        return QUEUE_NO_BUDGET
    if filtered and queue_rows(host=None, namespace=None, text=None).exists():
        return QUEUE_NO_MATCH
    return QUEUE_NOTHING_OVER


# --- one pile ----------------------------------------------------------------------------------------


def verdict_history() -> Prefetch:
    """The verdicts of each lesson as ``.history``, newest first (the pile and the lesson page)."""
    # Newest first, in the order that makes the first row the latest verdict (docs/interchange.md).
    return Prefetch("verdicts", queryset=Verdict.objects.order_by(*latest_verdict_order()), to_attr="history")


ROLLED_BACK = "rolled_back"
# The badge text of each shown status that is not its own word.
DRAFT_STATUS_LABELS = {ROLLED_BACK: "rolled back"}


@dataclass(frozen=True)
class DraftRow:
    """A draft on the entity with its shown ``status``: ``stale`` derived (docs/piles-and-recurrence.md,
    "Piles" "JSON output"), and
    ``rolled_back`` for an approved draft a ``rollback_consolidation`` decision names (docs/decisions.md). A
    rolled-back draft stays ``approved`` in the data and cannot be approved again (approve needs a pending
    draft), so the page says so."""

    draft: Draft
    status: str

    @property
    def label(self) -> str:
        return DRAFT_STATUS_LABELS.get(self.status, self.status)


class HistoryVerdict(NamedTuple):
    """One verdict of a lesson's history as the pile page shows it, straight from its row."""

    verdict: str
    metric: str | None
    baseline: float | None
    current: float | None
    horizon_ms: int | None
    measured_at: datetime


@dataclass(slots=True)
class EntityLesson:
    """One lesson of the entity as the pile page shows it, read straight from its row: no ``Lesson`` and
    ``RecurrenceCount`` model instances (building 200 of each, and the verdicts', was ~6 ms of the page at
    1M lessons; issue 10). ``created_at`` is aware (UTC); ``counts`` the seven recurrence counts in spec
    order (zeros before any analysis, as ``recurrence_dict`` gives them); ``history`` its verdicts, newest
    first; ``restorable`` when it is retracted and the latest decision naming it is a retire.
    ``pieces`` (its text cut so its group's shared words can be marked) and ``pending_drafts`` (the ids of
    the pending drafts superseding it) are filled for live members."""

    hash: str
    text: str
    created_at: datetime
    status: str
    kind: str
    origin: str | None
    superseded_by: str | None
    latest_verdict: str | None
    counts: dict[str, int]
    restorable: bool
    history: tuple[HistoryVerdict, ...] = ()
    pieces: tuple[tuple[str, bool], ...] = ()
    pending_drafts: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class MarkShown:
    """A reviewer's restatement mark as the pages show it (``lessons.models.RestatementMark``): lessons
    ``a`` and ``b`` (hashes, ``a < b``) state one fact (``same``) or different facts; ``made_by`` the
    username (``None`` once the user is deleted); ``made_at`` UTC."""

    a: str
    b: str
    same: bool
    reason: str
    made_by: str | None
    made_at: datetime


@dataclass(frozen=True)
class FactRows:
    """One fact of the pile as the page lists it: ``fact`` (``lessons.core.facts.Fact``), its ``lessons``
        oldest first, each with ``.pieces`` (its text cut so the shared words can be marked), ``covers``
        (an umbrella's covered facts as ``(name, label)``, in pile order), ``label`` (the fact's, or the first
    words of its oldest member when it has none: ``fact_label``) and ``marks`` (the reviewers' marks
        naming one of its members, newest first)."""

    fact: Fact
    lessons: tuple[EntityLesson, ...]
    label: str = ""
    covers: tuple[tuple[str, str], ...] = ()
    marks: tuple[MarkShown, ...] = ()

    @property
    def name(self) -> str:
        return self.fact.name

    @property
    def marked_by(self) -> list[str]:
        """The users whose marks name a member of this fact, each once, newest mark first."""
        return list(dict.fromkeys(m.made_by or "a deleted user" for m in self.marks))


@dataclass(frozen=True)
class PileDetail:
    """One entity as the pile page shows it, within budget or not.

    ``members``: the live lessons, oldest first (docs/piles-and-recurrence.md, "Piles" rule 5), each with
    ``.history`` (verdicts,
    newest first), ``.counts`` (the seven recurrence counts, zeros before any analysis) and
    ``.pending_drafts`` (ids of the pending drafts superseding it).
    ``not_live``: its retracted and superseded lessons, oldest first.
    ``version``: the pile version a decision must carry (docs/decisions.md).
    ``facts``: the members again, by fact (``FactRows``, ordered by each fact's oldest member);
    ``marks``: the reviewers' restatement marks naming a live member, newest first.
    """

    host: Host
    namespace: str
    subject: str
    members: tuple[EntityLesson, ...]
    not_live: tuple[EntityLesson, ...]
    drafts: tuple[DraftRow, ...]
    version: str
    facts: tuple[FactRows, ...] = ()
    marks: tuple[MarkShown, ...] = ()
    seen_seq: int = 0  # the newest decision on the entity when it was read (0: none)

    @property
    def fact_count(self) -> int:
        """The facts the live members state (umbrellas not counted)."""
        return sum(1 for f in self.facts if not f.fact.umbrella)

    @property
    def umbrella_count(self) -> int:
        """The live members that state several of the pile's facts."""
        return sum(1 for f in self.facts if f.fact.umbrella)

    @property
    def restatement_count(self) -> int:
        """The live members that restate a fact another one states (``lessons.core.facts.fact_counts``):
        what "Resolve by facts" would select."""
        return fact_counts([f.fact for f in self.facts])[1]

    def fact_named(self, name: str) -> Fact | None:
        """The fact (or umbrella) whose oldest member is ``name``, or ``None`` (``?keep=``, the marks)."""
        return next((f.fact for f in self.facts if f.fact.name == name), None)

    def label_of(self, name: str) -> str:
        """The shown label of the fact named ``name`` (``FactRows.label``); ``""`` for none."""
        return next((f.label for f in self.facts if f.fact.name == name), "")

    def fact_of(self, member: str) -> Fact | None:
        """The fact holding the live member ``member``, or ``None``."""
        return next((f.fact for f in self.facts if member in f.fact.members), None)

    def resolution(self, picked: list[str] | tuple[str, ...] = ()) -> Resolution:
        """Resolve by facts (``lessons.core.resolve``): keep one member of each fact (``picked`` by the
        reviewer, else the suggested one), select the others, leave the umbrellas alone."""
        return resolve_by_facts([f.fact for f in self.facts], picked)

    @property
    def target(self) -> str:
        return pile_target(self.namespace, self.subject)

    @property
    def restorable(self) -> tuple[EntityLesson, ...]:
        """The not-live lessons a ``retire`` retracted (the latest decision naming each is a retire): the
        ones the pile page offers to restore (docs/decisions.md, ``restore``; issue 12, finding 7)."""
        return tuple(x for x in self.not_live if x.restorable)

    @property
    def count(self) -> int:
        return len(self.members)

    @property
    def max_active(self) -> int:
        return self.host.max_active

    @property
    def budget_enabled(self) -> bool:
        return self.host.budget_enabled

    @property
    def over_budget(self) -> bool:
        return is_over_budget(
            live_count=self.count, max_active=self.max_active, budget_enabled=self.budget_enabled
        )

    @property
    def overage(self) -> int:
        return max(self.count - self.max_active, 0)

    @property
    def severity(self) -> str | None:
        return SEVERITY if self.over_budget else None

    @cached_property
    def summary(self) -> str | None:
        """docs/piles-and-recurrence.md, "Piles" rule 8, when the entity is a pile (computed once: the page
        asks twice)."""
        if not self.over_budget:
            return None
        return pile_summary(self.subject, self.max_active, [to_member(m) for m in self.members])

    @property
    def member_hashes(self) -> list[str]:
        return [m.hash for m in self.members]

    @property
    def pending_drafts(self) -> tuple[DraftRow, ...]:
        """The drafts still approvable (``pending``): retiring a lesson one supersedes makes it stale."""
        return tuple(row for row in self.drafts if row.status == PENDING)

    @property
    def superseding(self) -> dict[str, list[str]]:
        """Each live member hash -> the ids of the pending drafts that supersede it (finding 1's warning)."""
        found: dict[str, list[str]] = {}
        for row in self.pending_drafts:
            for h in row.draft.supersedes:
                found.setdefault(h, []).append(row.draft.ext_id)
        return found

    def made_stale(self, retired: list[str]) -> list[str]:
        """The ids of the pending drafts that retiring ``retired`` makes stale, in the drafts' order."""
        gone = set(retired)
        return [row.draft.ext_id for row in self.pending_drafts if gone & set(row.draft.supersedes)]


# What the pile page shows of each lesson: ``EntityLesson``'s columns (the counts LEFT JOINed: None when the
# lesson has no count row), then what it is read by. Reading only these spares decoding the JSON and
# other columns of 200 rows (issue 10).
_LESSON_COLUMNS = (
    "hash",
    "text",
    "created_at",
    "status",
    "kind",
    "origin",
    "superseded_by",
    "latest_verdict",
    *(f"recurrence__{f}" for f in COUNT_FIELDS),
    "latest_action",
    "id",
    "entity_seq",
)
_NO_COUNTS = (0,) * len(COUNT_FIELDS)
_HISTORY_COLUMNS = ("lesson_id", *HistoryVerdict._fields)


def _entity_lessons(host: Host, namespace: str, subject: str) -> tuple[list[EntityLesson], int]:
    """The entity's lessons, oldest first, each with its counts and verdict history, and the seq of the
    newest decision on the entity (0: none). Two queries: the
    lessons (recurrence counts joined, the latest decision naming each as a subquery), their verdicts."""
    # The latest decision naming each lesson, in the lessons' query: a retracted lesson whose latest is a
    # retire can be restored from the pile page, at no extra query.
    latest_action = (
        Decision.objects.filter(host=host.name, lesson_hash=OuterRef("hash"))
        .order_by("-seq")
        .values("action")
    )
    # The newest decision on the entity, the same on every row (not correlated: computed once): what the
    # page was built after, so a stale refusal can name the decisions that came in between.
    entity_seq = (
        Decision.objects.filter(host=host.name, namespace=namespace, subject=subject)
        .order_by("-seq")
        .values("seq")
    )
    rows = (
        entity_lessons(host=host, namespace=namespace, subject=subject)
        .annotate(latest_action=Subquery(latest_action[:1]), entity_seq=Subquery(entity_seq[:1]))
        .values_list(*_LESSON_COLUMNS)
    )
    counted = 8 + len(COUNT_FIELDS)  # the counts' columns end there
    lessons: list[EntityLesson] = []
    by_id: dict[int, EntityLesson] = {}
    seen_seq = 0
    for row in rows:
        seen_seq = row[counted + 2] or 0
        counts = row[8:counted]
        lesson = EntityLesson(
            *row[:8],
            counts=dict(zip(COUNT_FIELDS, counts if counts[0] is not None else _NO_COUNTS, strict=True)),
            restorable=row[3] == Lesson.Status.RETRACTED and row[counted] == Action.RETIRE,
        )
        lessons.append(lesson)
        by_id[row[counted + 1]] = lesson
    if lessons:
        histories: dict[int, list[HistoryVerdict]] = defaultdict(list)
        # By the entity, not by 200 ids: building a 200-parameter IN list cost more than the query.
        verdicts = Verdict.objects.filter(
            lesson__host=host, lesson__namespace=namespace, lesson__subject=subject
        ).order_by(*latest_verdict_order())
        for lesson_id, *verdict in verdicts.values_list(*_HISTORY_COLUMNS):
            histories[lesson_id].append(HistoryVerdict(*verdict))
        for lesson_id, history in histories.items():
            by_id[lesson_id].history = tuple(history)
    return lessons, seen_seq


def pile_detail(*, host: Host, namespace: str, subject: str) -> PileDetail | None:
    """The entity ``(host, namespace, subject)`` with its lessons (``EntityLesson``), facts, marks and
    drafts, or ``None`` when it has no lesson at all. Five queries for a pile: lessons (recurrence joined),
    their verdicts, its stored facts (``lessons.selectors.facts.pile_facts_stored``; two more for an entity
    within budget, which has none stored), the marks naming its live members, the drafts (each with
    whether a rollback decision names it).
    """
    lessons, seen_seq = _entity_lessons(host, namespace, subject)
    if not lessons:
        return None
    members = tuple(x for x in lessons if x.status == Lesson.Status.LIVE)
    live = {m.hash for m in members}
    by_hash = {m.hash: m for m in members}
    facts = pile_facts_stored(host=host, namespace=namespace, subject=subject) if members else ()
    for fact in facts:
        shared = _shared_words(fact)
        for h in fact.members:
            by_hash[h].pieces = marked_pieces(by_hash[h].text, shared)
    marks = pile_marks(host=host, namespace=namespace, subject=subject) if members else []
    # The rollback decisions are read in the drafts' query (an EXISTS), so the page's query count stays.
    rollback = Decision.objects.filter(host=host.name, action=Action.ROLLBACK, draft_id=OuterRef("ext_id"))
    drafts = (
        Draft.objects.filter(host=host, namespace=namespace, subject=subject)
        .annotate(rolled_back=Exists(rollback))
        .order_by("created_at", "ext_id")
    )
    detail = PileDetail(
        host=host,
        namespace=namespace,
        subject=subject,
        members=members,
        not_live=tuple(x for x in lessons if x.status != Lesson.Status.LIVE),
        drafts=tuple(
            DraftRow(draft=d, status=ROLLED_BACK if d.rolled_back else draft_status(d, live)) for d in drafts
        ),
        version=pile_version(lessons),
        facts=_fact_rows(facts, by_hash, marks),
        marks=tuple(marks),
        seen_seq=seen_seq,
    )
    for member_hash, ids in detail.superseding.items():
        if member_hash in by_hash:
            by_hash[member_hash].pending_drafts = ids
    return detail


def _shared_words(fact: Fact) -> frozenset[str]:
    """The words the page marks in a fact's members: its shared words and its anchors' content words."""
    return frozenset(fact.words).union(*(content_tokens(a) for a in fact.anchors))


LABEL_WORDS = 6  # a fact without a label of its own is named by its oldest member's first words


def fact_label(fact: Fact, oldest_text: str) -> str:
    """``fact.label``, or when it has none (a rule that shares nothing) the first ``LABEL_WORDS`` words
    of its oldest member's text, with "…" when there are more."""
    if fact.label:
        return fact.label
    words = oldest_text.split()
    return " ".join(words[:LABEL_WORDS]) + ("…" if len(words) > LABEL_WORDS else "")


def _fact_rows(
    facts: tuple[Fact, ...], by_hash: dict[str, EntityLesson], marks: list[MarkShown]
) -> tuple[FactRows, ...]:
    labels = {f.name: fact_label(f, by_hash[f.name].text) for f in facts}
    rows = []
    for fact in facts:
        members = set(fact.members)
        rows.append(
            FactRows(
                fact=fact,
                lessons=tuple(by_hash[h] for h in fact.members),
                label=labels[fact.name],
                covers=tuple((name, labels.get(name, hash8(name))) for name in fact.covers),
                marks=tuple(m for m in marks if m.a in members or m.b in members),
            )
        )
    return tuple(rows)


def pile_marks(*, host: Host, namespace: str, subject: str) -> list[MarkShown]:
    """The host's restatement marks naming one of the entity's live members, newest first (``made_at``,
    then id). One query (the members as a subquery, not a list of 200 parameters)."""
    members = Lesson.objects.filter(
        host=host, namespace=namespace, subject=subject, status=Lesson.Status.LIVE
    ).values("hash")
    rows = (
        RestatementMark.objects.filter(host=host)
        .filter(Q(a__in=members) | Q(b__in=members))
        .order_by("-made_at", "-id")
        .values_list("a", "b", "same", "reason", "made_by__username", "made_at")
    )
    return [MarkShown(*row) for row in rows]


# --- claims (issue 12, Build 3) ------------------------------------------------------------------


@dataclass(frozen=True)
class ClaimShown:
    """A live claim as the pages show it: who (``username``), since and until when (UTC datetimes) and
    ``minutes_ago`` (whole minutes since ``claimed_at`` at the moment it was read)."""

    username: str
    claimed_at: datetime
    expires_at: datetime
    minutes_ago: int

    def held_by(self, user) -> bool:
        return self.username == user.get_username()


def _shown(claim: PileClaim, username: str, now: datetime) -> ClaimShown:
    return ClaimShown(
        username=username,
        claimed_at=claim.claimed_at,
        expires_at=claim.expires_at,
        minutes_ago=max(int((now - claim.claimed_at).total_seconds() // 60), 0),
    )


def claim_shown(
    *, host: Host, namespace: str, subject: str, now: datetime | None = None
) -> ClaimShown | None:
    """The live claim on one entity, or ``None`` (none, or expired). One query."""
    at = decision_now(now)
    row = (
        PileClaim.objects.filter(host=host, namespace=namespace, subject=subject, expires_at__gt=at)
        .select_related("user")
        .first()
    )
    return _shown(row, row.user.get_username(), at) if row else None


def claims_of_rows(
    rows: list[dict], *, now: datetime | None = None
) -> dict[tuple[int, str, str], ClaimShown]:
    """The live claims of the queue's rows (``queue_page`` dicts: ``host_id``, ``namespace``, ``subject``
    and the claim read with them), keyed by ``(host_id, namespace, subject)``; no query."""
    at = decision_now(now)
    return {
        (row["host_id"], row["namespace"], row["subject"]): _shown(
            PileClaim(claimed_at=row["claim_at"], expires_at=row["claim_until"]), row["claim_user"], at
        )
        for row in rows
        if row["claim_user"] is not None
    }


STALE_NAMED = 5  # decisions a stale refusal names; more are counted


@dataclass(frozen=True)
class DecisionBetween:
    """A decision on the entity made after the page the reviewer acted on was built."""

    seq: int
    action: str
    actor: str
    lesson_hash: str | None


def decisions_since(
    *, host: Host, namespace: str, subject: str, seq: int
) -> tuple[list[DecisionBetween], int]:
    """The first ``STALE_NAMED`` decisions on the entity after decision ``seq``, oldest first, and how many
    there are in all (one query each; the host's (host, seq) index)."""
    after = Decision.objects.filter(host=host.name, namespace=namespace, subject=subject, seq__gt=seq)
    rows = [
        DecisionBetween(*row)
        for row in after.order_by("seq").values_list("seq", "action", "actor", "lesson_hash")[:STALE_NAMED]
    ]
    total = len(rows) if len(rows) < STALE_NAMED else after.count()
    return rows, total
