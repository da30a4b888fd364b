"""Restatement marks: a reviewer corrects how a host's piles are grouped into facts (issue 22, Build 2).

A mark says that two lessons of a host state one fact (``same``) or different facts, with a reason, who
and when (``lessons.models.RestatementMark``). Marks win over the automatic grouping and survive
regrouping (``lessons.core.facts.pile_facts`` applies them); they change no lesson and are not decisions:
nothing enters the hash-chained log and hosts never apply them. A newer mark of the same pair replaces the
older one. Writing marks refreshes the stored facts of the entities they name in the same transaction.
Refusals raise ``DecisionRefused`` (``str()`` is the message) or ``NotAllowed``; nothing is written then.
docs/reviewing.md ("Correcting the facts").
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from lessons.core.facts import Fact
from lessons.core.text import hash8
from lessons.models import Host, Lesson, RestatementMark
from lessons.services.data_version import for_host
from lessons.services.facts import facts_refresh
from review.roles import PERM_DECIDE
from review.services.common import DecisionRefused, check_actor, clean_reason, decision_now

# Every text a refusal shows. Tests assert these exact values.
NOT_ALLOWED_MARK = "{user} may not correct the grouping of facts: that needs the reviewer role."
MARK_NOTHING = "Name two lessons to mark."
MARK_ITSELF = "A lesson cannot be marked against itself; choose two different lessons."
MARK_NOT_LIVE = "Lesson {short}… is not a live lesson of host {host}; reload the pile and choose again."
SPLIT_ALONE = "Lesson {short}… is already a fact of its own."


def restatement_mark(
    *,
    host: Host,
    pairs: Sequence[tuple[str, str]],
    same: bool,
    actor: AbstractBaseUser,
    reason: str,
    now: datetime | None = None,
) -> int:
    """Mark each pair of lessons of ``host`` (64-hex hashes, both live) as one fact (``same``) or as
    different facts, with one ``reason`` (1..500 characters after trimming), by ``actor`` at ``now``
    (UTC, cut to milliseconds; default: now). Each pair is stored ordered (``a < b``); a mark of the same
    pair replaces the older one. Then the stored facts of the entities the lessons are on are recomputed
    (``lessons.services.facts.facts_refresh``), in the same transaction. Returns how many marks were
    written. Queries: one to check the lessons, one upsert, and the refresh's.

    Raises ``NotAllowed`` (no ``review.decide``) or ``DecisionRefused`` (no pair, a lesson paired with
    itself, a lesson that is not live on the host, the reason).
    """
    check_actor(actor, PERM_DECIDE, NOT_ALLOWED_MARK)
    reason = clean_reason(reason)
    ordered = list(dict.fromkeys(tuple(sorted(pair)) for pair in pairs))
    if not ordered:
        raise DecisionRefused(MARK_NOTHING)
    if any(a == b for a, b in ordered):
        raise DecisionRefused(MARK_ITSELF)
    at = decision_now(now)
    wanted = sorted({h for pair in ordered for h in pair})
    with for_host(host.name), transaction.atomic():  # host-narrowed (docs/production.md, "Cache")
        rows = Lesson.objects.filter(host=host, hash__in=wanted, status=Lesson.Status.LIVE)
        entities = {h: (ns, subject) for h, ns, subject in rows.values_list("hash", "namespace", "subject")}
        for h in wanted:
            if h not in entities:
                raise DecisionRefused(MARK_NOT_LIVE.format(short=hash8(h), host=host.name))
        marks = [
            RestatementMark(host=host, a=a, b=b, same=same, reason=reason, made_by=actor, made_at=at)
            for a, b in ordered
        ]
        RestatementMark.objects.bulk_create(
            marks,
            update_conflicts=True,
            unique_fields=["host", "a", "b"],
            update_fields=["same", "reason", "made_by", "made_at"],
        )
        facts_refresh(host_id=host.id, keys=sorted(set(entities.values())))
    return len(marks)


def facts_merge(*, host: Host, fact: Fact, other: Fact, actor: AbstractBaseUser, reason: str) -> int:
    """Mark two facts of one pile as one: their oldest members (``Fact.name``) as one fact, which joins
    the two groups (``lessons.core.facts``). Returns the marks written (1). Refusals as
    ``restatement_mark``'s."""
    return restatement_mark(host=host, pairs=[(fact.name, other.name)], same=True, actor=actor, reason=reason)


def fact_split(*, host: Host, fact: Fact, member: str, actor: AbstractBaseUser, reason: str) -> int:
    """Take ``member`` out of ``fact`` as a fact of its own: it is marked a different fact from each other
    member. Returns the marks written. Refusals as ``restatement_mark``'s, and ``DecisionRefused`` when
    ``member`` is the fact's only member."""
    others = [h for h in fact.members if h != member]
    if not others:
        raise DecisionRefused(SPLIT_ALONE.format(short=hash8(member)))
    pairs = [(member, h) for h in others]
    return restatement_mark(host=host, pairs=pairs, same=False, actor=actor, reason=reason)
