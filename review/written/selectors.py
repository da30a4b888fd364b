"""Reads for the consolidation editor: the entity's live members, its facts, the engine its lessons came
from, and the coverage matrix of a text being written.

A few queries for the editor (the entity's lessons with their recurrence counts, its stored facts,
whether the host syncs an areev memory), whatever the size of the pile. The coverage rules are the draft
page's (``lessons.core.coverage``, ``review.drafts.selectors``), so what the editor shows is what the draft
page will show. spec: docs/reviewing.md, "Writing a consolidation"; docs/piles-and-recurrence.md, "Which
lesson a correction is about".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lessons.core.coverage import draft_coverage
from lessons.core.piles import is_over_budget, pile_target
from lessons.core.text import hash8
from lessons.core.written import Anchor, FactLine, check_text, check_waivers, dropped_anchors, text_limit
from lessons.models import Host, Lesson
from lessons.selectors.engines import host_engine
from lessons.selectors.facts import pile_facts_stored
from lessons.selectors.piles import entity_lessons, pile_version
from lessons.serializers import recurrence_dict
from review.drafts.selectors import MemberRow, coverage_chips, coverage_summary


def pile_fact_lines(
    *, host: Host, namespace: str, subject: str, live: Sequence[Lesson]
) -> tuple[FactLine, ...]:
    """The entity's facts for the editor's prefill, ordered by their oldest member: each fact's keeper,
    its text and whether it is an umbrella (``lessons.selectors.facts.pile_facts_stored``: the stored
    facts, one query, or computed when none are stored). A fact whose keeper is no longer live (facts
    stored before a change) is left out."""
    texts = {m.hash: m.text for m in live}
    facts = pile_facts_stored(host=host, namespace=namespace, subject=subject)
    return tuple(
        FactLine(keep=f.keep, text=texts[f.keep], umbrella=f.umbrella) for f in facts if f.keep in texts
    )


@dataclass(frozen=True)
class WriteDetail:
    """One entity as the editor shows it: ``live`` members oldest first (docs/piles-and-recurrence.md, "Piles"
    rule 5), its ``facts``
    (``FactLine``), the pile ``version`` a submission carries, the ``engine`` its lessons came from and
    the text ``limit`` that engine takes (characters)."""

    host: Host
    namespace: str
    subject: str
    live: tuple[Lesson, ...]
    facts: tuple[FactLine, ...]
    version: str
    engine: str

    @property
    def target(self) -> str:
        return pile_target(self.namespace, self.subject)

    @property
    def limit(self) -> int:
        return text_limit(self.engine)

    @property
    def live_hashes(self) -> list[str]:
        return [m.hash for m in self.live]


def write_detail(*, host: Host, namespace: str, subject: str) -> WriteDetail | None:
    """The editor's entity, or None when it has no lesson at all. Three queries (four when its facts are
    not stored: ``pile_fact_lines``)."""
    lessons = list(entity_lessons(host=host, namespace=namespace, subject=subject))
    if not lessons:
        return None
    live = tuple(x for x in lessons if x.status == Lesson.Status.LIVE)
    return WriteDetail(
        host=host,
        namespace=namespace,
        subject=subject,
        live=live,
        facts=pile_fact_lines(host=host, namespace=namespace, subject=subject, live=live),
        version=pile_version(lessons),
        engine=host_engine(host=host, members=live),
    )


@dataclass(frozen=True)
class Waiver:
    """A dropped anchor as the editor asks for its waiver: the ``anchor`` (``lessons.core.written.Anchor``),
    the superseded members that have it (short hashes, oldest first) and the ``reason`` typed so far."""

    anchor: Anchor
    members: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class WriteMatrix:
    """The coverage of a text being written: ``rows`` (``MemberRow`` per chosen member, oldest first), the
    ``normalized`` text and its ``chars``, ``text_errors`` (empty, too long), ``waivers`` (one per dropped
    anchor) and ``waiver_errors`` (those still without a reason), the live count ``after`` an approval."""

    rows: tuple[MemberRow, ...]
    normalized: str
    chars: int
    limit: int
    text_errors: tuple[str, ...]
    waivers: tuple[Waiver, ...]
    waiver_errors: tuple[str, ...]
    count: int
    after: int
    max_active: int
    budget_enabled: bool

    @property
    def over_after(self) -> bool:
        return is_over_budget(
            live_count=self.after, max_active=self.max_active, budget_enabled=self.budget_enabled
        )

    @property
    def kept_anchors(self) -> int:
        return len({a for row in self.rows for a in row.coverage.kept_anchors})

    @property
    def ready(self) -> bool:
        return bool(self.rows) and not self.text_errors and not self.waiver_errors


def write_matrix(
    detail: WriteDetail, *, text: str, chosen: Sequence[str], waivers: Mapping[str, str]
) -> WriteMatrix:
    """The coverage of ``text`` against the ``chosen`` live members (unknown hashes ignored), with the
    waivers typed so far. No query."""
    picked = set(chosen)
    members = [m for m in detail.live if m.hash in picked]
    normalized, text_errors = check_text(text, engine=detail.engine)
    coverage = draft_coverage(
        draft_text=normalized, members=[(m.hash, m.text, m.latest_verdict) for m in members]
    )
    rows = []
    for member, cov in zip(members, coverage, strict=True):
        kept, dropped = coverage_chips(cov)
        rows.append(
            MemberRow(member.hash, member, cov, recurrence_dict(member), kept, dropped, coverage_summary(cov))
        )
    dropped = dropped_anchors(normalized, [(m.hash, m.text) for m in members])
    _kept, waiver_errors = check_waivers([anchor for anchor, _holders in dropped], waivers)
    shown = tuple(
        Waiver(anchor=anchor, members=tuple(hash8(h) for h in holders), reason=waivers.get(anchor.key, ""))
        for anchor, holders in dropped
    )
    host = detail.host
    return WriteMatrix(
        rows=tuple(rows),
        normalized=normalized,
        chars=len(normalized),
        limit=detail.limit,
        text_errors=tuple(text_errors),
        waivers=shown,
        waiver_errors=tuple(waiver_errors),
        count=len(detail.live),
        after=len(detail.live) - len(members) + 1,
        max_active=host.max_active,
        budget_enabled=host.budget_enabled,
    )
