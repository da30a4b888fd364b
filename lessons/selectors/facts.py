"""Reading the facts of a pile (``lessons.core.facts``) and a host's restatement marks.

A pile's facts are stored on its ``EntityCount`` row when its lessons change
(``lessons.services.entity_counts``, ``lessons.services.facts``); a page reads them, it does not
recompute them. docs: docs/piles-and-recurrence.md ("Facts: which members state the same fact").
"""

from __future__ import annotations

from lessons.core.facts import FACTS_VERSION, Fact, Mark, grouped, pile_facts
from lessons.core.text import to_ms
from lessons.models import EntityCount, Host, Lesson, RestatementMark
from lessons.selectors.embeddings import vectors_stored


def _host_id(host: Host | int) -> int:
    return host if isinstance(host, int) else host.id


def host_marks(*, host: Host | int) -> list[Mark]:
    """The host's restatement marks (``RestatementMark``), ordered by ``(a, b)``. One query."""
    rows = RestatementMark.objects.filter(host_id=_host_id(host)).order_by("a", "b")
    return [Mark(a=a, b=b, same=same) for a, b, same in rows.values_list("a", "b", "same")]


def pile_facts_stored(*, host: Host | int, namespace: str, subject: str) -> tuple[Fact, ...]:
    """The facts of the entity's live members, oldest first: the stored ones (one query) while the
    entity is a pile and they were stored by this ``FACTS_VERSION``; else computed from its lessons
    (any status) and the host's marks (``compute_facts``: three more queries; an entity that is not
    a pile has nothing stored). ``()`` for an entity without live lessons."""
    host_id = _host_id(host)
    stored = (
        EntityCount.objects.filter(host_id=host_id, namespace=namespace, subject=subject)
        .values_list("over_budget", "facts_version", "fact_groups")
        .first()
    )
    if stored is not None and stored[0] and stored[1] == FACTS_VERSION:
        return tuple(Fact.from_dict(f) for f in stored[2])
    return compute_facts(host_id=host_id, namespace=namespace, subject=subject)


def compute_facts(*, host_id: int, namespace: str, subject: str) -> tuple[Fact, ...]:
    """The facts of the entity's live members computed now, grouped over its lessons whatever their status
    (``lessons.core.facts.grouped_over``): its lessons, their stored text vectors and the host's marks
    (three queries), whatever is stored. ``()`` for an entity without live lessons."""
    rows = Lesson.objects.filter(host_id=host_id, namespace=namespace, subject=subject).values_list(
        "created_at", "hash", "latest_verdict", "text", "status", "kind", "consolidates"
    )
    members, texts, consolidated = grouped((to_ms(at), *rest) for at, *rest in rows)
    if not any(m.status == Lesson.Status.LIVE for m in members):
        return ()
    vectors_stored(texts.values())  # encode only what was never stored
    return pile_facts(members=members, texts=texts, marks=host_marks(host=host_id), consolidated=consolidated)
