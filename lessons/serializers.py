"""The JSON shapes of lessons, piles and recurrence counts, in one place. They read the rows they are
given (and, for ``lesson_detail_json``, the lesson's verdicts, versions and decisions) and build plain
dicts; the CLI, the API and the decision records all use them.

docs/piles-and-recurrence.md ("How the piles JSON is built"), docs/piles-and-recurrence.md ("The seven
counts"), docs/interchange.md ("lesson",
"verdict"), docs/decisions.md (the record).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from lessons.core.facts import pile_facts
from lessons.core.piles import draft_state, pile_target, verdict_label
from lessons.core.recurrence import COUNT_FIELDS, is_recurring
from lessons.core.text import format_datetime
from lessons.models import Lesson, RecurrenceCount, Verdict
from lessons.selectors.verdicts import latest_verdict_order

if TYPE_CHECKING:
    from lessons.selectors.piles import EntityPile


class DecisionRow(Protocol):
    """What the lesson JSON shows of a decision record (``review.models.Decision`` has it)."""

    seq: int
    at: datetime
    action: str
    actor: str


def recurrence_dict(source: Lesson | RecurrenceCount | None) -> dict[str, int]:
    """The seven recurrence counts in spec order (zeros before any analysis): of a stored count row, or
    of a lesson (its row; join it with ``select_related("recurrence")`` to spare a query).
    docs/piles-and-recurrence.md, "The seven counts".
    """
    row = _count_row(source) if isinstance(source, Lesson) else source
    return {f: getattr(row, f) if row is not None else 0 for f in COUNT_FIELDS}


def _count_row(lesson: Lesson) -> RecurrenceCount | None:
    try:
        return lesson.recurrence
    except Lesson.recurrence.RelatedObjectDoesNotExist:  # the reverse one-to-one raises when missing
        return None


def pile_as_json(entity: EntityPile) -> dict:
    """One pile in the JSON shape of docs/piles-and-recurrence.md, "How the piles JSON is built", each member
    with the extra keys (docs/piles-and-recurrence.md, "Piles"
    allows extra keys; docs/piles-and-recurrence.md, "Facts"): ``group``, the name (oldest live member's hash)
    of its fact; ``fact``, that fact's label; ``umbrella``, the names of the facts it covers when it is an
    umbrella (a lesson stating several of the pile's facts), else ``[]``. Read from the stored facts
    (``entity.facts``), not recomputed."""
    pile = entity.pile
    facts = entity.facts
    if facts is None:  # a pile built by hand, without stored facts: computed here (no marks)
        facts = pile_facts(
            members=pile.members, texts={lesson.hash: lesson.text for lesson in entity.lessons}
        )
    fact_of = {h: fact for fact in facts for h in fact.members}
    return {
        "host": entity.host.name,
        "namespace": pile.namespace,
        "subject": pile.subject,
        "target": pile_target(pile.namespace, pile.subject),
        "max_active": pile.max_active,
        "count": pile.count,
        "severity": pile.severity,
        "summary": pile.summary,
        "members": [
            {
                "hash": lesson.hash,
                "lesson_id": lesson.lesson_id,
                "store": lesson.store,
                "kind": lesson.kind,
                "text": lesson.text,
                "created_at": format_datetime(lesson.created_at),
                "verdict": verdict_label(member.verdict),
                "recurrence": dict(lesson.recurrence),
                "group": fact_of[lesson.hash].name,
                "fact": fact_of[lesson.hash].label,
                "umbrella": list(fact_of[lesson.hash].covers),
            }
            for lesson, member in zip(entity.lessons, pile.members, strict=True)
        ],
        "drafts": [
            {
                "id": d.ext_id,
                "status": draft_state(
                    status=d.status, supersedes=d.supersedes, live_hashes=entity.live_hashes
                ),
                "text": d.text,
                "supersedes": list(d.supersedes),
                "gates": {"ground": d.gate_ground, "verify": d.gate_verify},
                "drafted_by": d.drafted_by,
                "triggered_by": d.triggered_by,
                "confidence": d.confidence,
            }
            for d in entity.drafts
        ],
    }


def lesson_counts_json(row: RecurrenceCount) -> dict:
    """One lesson of the ``recurrence`` command's JSON: identity, text and the seven counts."""
    lesson = row.lesson
    counts = recurrence_dict(row)
    return {
        "host": lesson.host.name,
        "hash": lesson.hash,
        "lesson_id": lesson.lesson_id,
        "store": lesson.store,
        "namespace": lesson.namespace,
        "subject": lesson.subject,
        "status": lesson.status,
        "text": lesson.text,
        "recurrence": counts,
        "recurring": is_recurring(counts),
    }


def _verdict_json(verdict: Verdict) -> dict:
    return {
        "verdict": verdict.verdict,
        "metric": verdict.metric,
        "baseline": verdict.baseline,
        "current": verdict.current,
        "horizon_ms": verdict.horizon_ms,
        "measured_at": format_datetime(verdict.measured_at),
    }


def lesson_detail_json(lesson: Lesson, *, decisions: Iterable[DecisionRow]) -> dict:
    """The API shape of one lesson (two more queries: verdicts, versions; and reading ``decisions``).

    ``verdicts`` latest first (docs/interchange.md, "verdict: an outcome of the Verify gate"); ``versions``
    are the lessons sharing
    its ``store`` + ``lesson_id`` on its host, oldest first (just itself when it has no ``lesson_id``);
    ``decisions`` are the log records naming it, by ``seq``, as the caller read them (the decision log
    belongs to the review app: ``review.api.selectors.lesson_decisions``).
    """
    verdicts = Verdict.objects.filter(lesson=lesson).order_by(*latest_verdict_order())
    if lesson.lesson_id is not None:
        versions = Lesson.objects.filter(host=lesson.host, store=lesson.store, lesson_id=lesson.lesson_id)
    else:
        versions = Lesson.objects.filter(pk=lesson.pk)
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
            for d in decisions
        ],
    }
