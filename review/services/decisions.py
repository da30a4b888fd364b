"""Reviewer decisions on lessons as services: retire and restore (consolidations: ``consolidation``,
budgets: ``budget``; each name is imported from the module that defines it).

Every service checks the actor, the reason and the preconditions of decisions.md, "Actions"; writes the
change and its ``Decision`` record(s) in one ``transaction.atomic()``; locks what it checks
(``select_for_update`` on the entity's lessons, the draft or the host) and re-checks the pile version
under the lock, so two reviewers acting at once on one pile: exactly one succeeds. Refusals raise
``DecisionRefused`` (``NotAllowed``, ``StalePile``) whose ``str()`` is the message to show; nothing is
written then. Every lesson a decision changes gets ``decided_at = now`` so a later import never
silently undoes it (interchange.md, "lesson").
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from lessons.core.piles import entity_label
from lessons.models import Host, Lesson
from review.models import Action, Decision
from review.services.chain import decision_append
from review.services.common import (
    DecisionRefused,
    check_decision,
    check_version,
    decision_now,
    lesson_evidence,
    live_count,
    lock_entity,
    new_batch,
)

RETIRE_NOTHING = "Choose at least one lesson to retire."
LESSON_UNKNOWN = "No lesson {hash} on host {host}."
LESSONS_NOT_ONE_ENTITY = "The lessons retired together must all be on one entity; these are on {entities}."
LESSON_NOT_LIVE = "Lesson {short}… is {status}, not live; only a live lesson can be retired."
RESTORE_NOT_RETRACTED = "Lesson {short}… is {status}; only a retracted lesson can be restored."
RESTORE_NOT_BY_RETIRE = (
    "Lesson {short}… was not retracted by a retire decision (the source retracted it, or a rollback did), "
    "so it cannot be restored."
)


def lesson_retire(
    *,
    host: Host,
    hashes: list[str],
    actor: AbstractBaseUser,
    reason: str,
    reason_code: str | None = None,
    pile_version: str | None = None,
    now: datetime | None = None,
) -> list[Decision]:
    """Retire live lessons of one entity: each becomes ``retracted``; one record each, one shared batch.

    ``hashes`` are full 64-hex hashes of lessons of ``host``, all on one entity. ``pile_version`` is the
    version the reviewer saw (``lessons.selectors.piles.pile_version``); ``None`` skips the check (the
    CLI acts on fresh state). Returns the decisions in pile order (oldest lesson first).
    Raises ``NotAllowed`` (no ``review.decide``), ``StalePile``, or ``DecisionRefused`` (reason, unknown
    lesson, several entities, a lesson not live). spec: decisions.md, "Actions" (``retire``).
    """
    reason, reason_code = check_decision(actor, reason, reason_code)
    wanted = list(dict.fromkeys(hashes))
    if not wanted:
        raise DecisionRefused(RETIRE_NOTHING)
    found = {
        row["hash"]: (row["namespace"], row["subject"])
        for row in Lesson.objects.filter(host=host, hash__in=wanted).values("hash", "namespace", "subject")
    }
    for h in wanted:
        if h not in found:
            raise DecisionRefused(LESSON_UNKNOWN.format(hash=h, host=host.name))
    entities = sorted(set(found.values()))
    if len(entities) > 1:
        raise DecisionRefused(
            LESSONS_NOT_ONE_ENTITY.format(entities=", ".join(entity_label(ns, s) for ns, s in entities))
        )
    namespace, subject = entities[0]
    at = decision_now(now)
    batch = new_batch()
    with transaction.atomic():
        lessons = lock_entity(host=host, namespace=namespace, subject=subject)
        check_version(lessons, pile_version)
        chosen = [lesson for lesson in lessons if lesson.hash in found]
        for lesson in chosen:
            if lesson.status != Lesson.Status.LIVE:
                raise DecisionRefused(LESSON_NOT_LIVE.format(short=lesson.hash[:8], status=lesson.status))
        count = live_count(lessons)
        decisions = []
        for lesson in chosen:
            evidence = lesson_evidence(lesson=lesson, live_count=count, host=host)
            lesson.status = Lesson.Status.RETRACTED
            lesson.decided_at = at
            lesson.save(update_fields=["status", "decided_at", "updated_at"])
            decisions.append(
                decision_append(
                    actor=actor.get_username(),
                    action=Action.RETIRE,
                    host=host.name,
                    namespace=namespace,
                    subject=subject,
                    lesson=lesson,
                    batch=batch,
                    reason=reason,
                    reason_code=reason_code,
                    evidence=evidence,
                    at=at,
                )
            )
    return decisions


def lesson_restore(
    *,
    lesson: Lesson,
    actor: AbstractBaseUser,
    reason: str,
    reason_code: str | None = None,
    pile_version: str | None = None,
    now: datetime | None = None,
) -> Decision:
    """Make a lesson retracted by a ``retire`` decision live again; one record.

    The precondition is checked under the entity lock: the lesson is ``retracted`` and the latest
    decision naming it is a ``retire`` (not a source's retraction, not a consolidation rollback).
    Raises ``NotAllowed``, ``StalePile`` or ``DecisionRefused``. spec: decisions.md, "Actions" (``restore``).
    """
    reason, reason_code = check_decision(actor, reason, reason_code)
    at = decision_now(now)
    host = lesson.host
    with transaction.atomic():
        lessons = lock_entity(host=host, namespace=lesson.namespace, subject=lesson.subject)
        check_version(lessons, pile_version)
        current = next((x for x in lessons if x.hash == lesson.hash), None)
        if current is None:
            raise DecisionRefused(LESSON_UNKNOWN.format(hash=lesson.hash, host=host.name))
        if current.status != Lesson.Status.RETRACTED:
            raise DecisionRefused(RESTORE_NOT_RETRACTED.format(short=current.hash[:8], status=current.status))
        latest = (
            Decision.objects.filter(host=host.name, lesson_hash=current.hash)
            .order_by("-seq")
            .only("action")
            .first()
        )
        if latest is None or latest.action != Action.RETIRE:
            raise DecisionRefused(RESTORE_NOT_BY_RETIRE.format(short=current.hash[:8]))
        evidence = lesson_evidence(lesson=current, live_count=live_count(lessons), host=host)
        current.status = Lesson.Status.LIVE
        current.decided_at = at
        current.save(update_fields=["status", "decided_at", "updated_at"])
        decision = decision_append(
            actor=actor.get_username(),
            action=Action.RESTORE,
            host=host.name,
            namespace=current.namespace,
            subject=current.subject,
            lesson=current,
            batch=new_batch(),
            reason=reason,
            reason_code=reason_code,
            evidence=evidence,
            at=at,
        )
    lesson.status = current.status
    lesson.decided_at = current.decided_at
    return decision
