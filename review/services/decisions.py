"""Reviewer decisions on lessons as services: retire and restore (consolidations: ``consolidation``,
budgets: ``budget``; each name is imported from the module that defines it).

Every service checks the actor, the reason and the preconditions of docs/decisions.md, "The actions"; writes
the
change and its ``Decision`` record(s) in one ``transaction.atomic()``; locks what it checks
(``select_for_update`` on the entity's lessons, the draft or the host) and re-checks the pile version
under the lock, so two reviewers acting at once on one pile: exactly one succeeds. Refusals raise
``DecisionRefused`` (``NotAllowed``, ``StalePile``) whose ``str()`` is the message to show; nothing is
written then. Every lesson a decision changes gets ``decided_at = now`` so a later import never
silently undoes it (docs/interchange.md, "lesson").
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from lessons.core.piles import entity_label
from lessons.core.text import hash8
from lessons.models import Host, Lesson
from lessons.services.data_version import for_host
from lessons.services.status import lesson_status_set
from review.models import Action, Decision
from review.services.chain import DecisionEntry, decisions_append_many
from review.services.claims import claims_release_on_decision
from review.services.common import (
    DecisionRefused,
    UndoStale,
    check_decision,
    check_version,
    decision_now,
    lesson_evidence,
    live_count,
    lock_entity,
    new_batch,
)

RETIRE_NOTHING = "Choose at least one lesson to retire."
RESTORE_NOTHING = "Choose at least one lesson to restore."
LESSON_UNKNOWN = "No lesson {hash} on host {host}."
LESSONS_NOT_ONE_ENTITY = "The lessons retired together must all be on one entity; these are on {entities}."
LESSON_NOT_LIVE = "Lesson {short}… is {status}, not live; only a live lesson can be retired."
RESTORE_NOT_RETRACTED = "Lesson {short}… is {status}; only a retracted lesson can be restored."
RESTORE_NOT_BY_RETIRE = (
    "Lesson {short}… was not retracted by a retire decision (the source retracted it, or a rollback did), "
    "so it cannot be restored."
)


def lessons_retire(
    *,
    host: Host,
    hashes: list[str],
    actor: AbstractBaseUser,
    reason: str,
    reason_code: str | None = None,
    pile_version: str | None = None,
    now: datetime | None = None,
    namespace: str | None = None,
    subject: str | None = None,
) -> list[Decision]:
    """Retire live lessons of one entity: each becomes ``retracted``; one record each, one shared batch.

    ``hashes`` are full 64-hex hashes of lessons of ``host``, all on one entity. ``namespace`` and
    ``subject`` name that entity when the caller has resolved it (the pile page); without them the
    entity is looked up from ``hashes``. ``pile_version`` is the version the reviewer saw
    (``lessons.selectors.piles.pile_version``); ``None`` skips the check (the CLI acts on fresh state).
    The entity's lessons are read once, under the lock; the statuses change in one statement and the
    records are appended together, so the queries do not grow with the number of lessons.
    Returns the decisions in pile order (oldest lesson first).
    Raises ``NotAllowed`` (no ``review.decide``), ``StalePile``, or ``DecisionRefused`` (reason, unknown
    lesson, several entities, a lesson not live). docs/decisions.md, "The actions" (``retire``).
    """
    reason, reason_code = check_decision(actor, reason, reason_code)
    wanted = list(dict.fromkeys(hashes))
    if not wanted:
        raise DecisionRefused(RETIRE_NOTHING)
    if namespace is None or subject is None:
        namespace, subject = _entity_of(host, wanted)
    at = decision_now(now)
    batch = new_batch()
    with for_host(host.name), transaction.atomic():  # host-narrowed (docs/production.md, "Cache")
        lessons = lock_entity(host=host, namespace=namespace, subject=subject)
        on_entity = {lesson.hash for lesson in lessons}
        for h in wanted:
            if h not in on_entity:
                raise DecisionRefused(LESSON_UNKNOWN.format(hash=h, host=host.name))
        check_version(lessons, pile_version)
        chosen = [lesson for lesson in lessons if lesson.hash in set(wanted)]
        for lesson in chosen:
            if lesson.status != Lesson.Status.LIVE:
                raise DecisionRefused(LESSON_NOT_LIVE.format(short=hash8(lesson.hash), status=lesson.status))
        decisions = _status_decisions(
            action=Action.RETIRE,
            status=Lesson.Status.RETRACTED,
            entity=(host, namespace, subject),
            lessons=lessons,
            chosen=chosen,
            actor=actor,
            batch=batch,
            reason=reason,
            reason_code=reason_code,
            at=at,
        )
    return decisions


def _entity_of(host: Host, hashes: list[str]) -> tuple[str, str]:
    """The one entity ``(namespace, subject)`` of the lessons ``hashes`` on ``host``; ``DecisionRefused``
    for an unknown hash or lessons on several entities. One query."""
    found = {
        row["hash"]: (row["namespace"], row["subject"])
        for row in Lesson.objects.filter(host=host, hash__in=hashes).values("hash", "namespace", "subject")
    }
    for h in hashes:
        if h not in found:
            raise DecisionRefused(LESSON_UNKNOWN.format(hash=h, host=host.name))
    entities = sorted(set(found.values()))
    if len(entities) > 1:
        raise DecisionRefused(
            LESSONS_NOT_ONE_ENTITY.format(entities=", ".join(entity_label(ns, s) for ns, s in entities))
        )
    return entities[0]


def lessons_restore(
    *,
    host: Host,
    namespace: str,
    subject: str,
    hashes: list[str],
    actor: AbstractBaseUser,
    reason: str,
    reason_code: str | None = None,
    pile_version: str | None = None,
    now: datetime | None = None,
    undoes: Collection[int] | None = None,
) -> list[Decision]:
    """Make lessons of one entity that ``retire`` decisions retracted live again, with one reason: one
    record each, one shared batch, all in one transaction (all restored, or none).

    ``undoes``: the seqs of the retire decisions a retire notice's Undo reverses; then each lesson's latest
    decision must still be one of them, else ``UndoStale`` (restored since, if retired again meanwhile:
    the pile version alone would match). docs/decisions.md, "The actions" (Undo).

    ``hashes`` are full hashes of lessons on the entity ``(host, namespace, subject)``. Each is checked
    under the entity lock: it is ``retracted`` and the latest decision naming it is a ``retire`` (not a
    source's retraction, not a consolidation rollback). One query reads the latest decisions of them all,
    so the queries do not grow with the number of lessons. Returns the decisions in pile order.
    Raises ``NotAllowed``, ``StalePile`` or ``DecisionRefused`` (reason, none chosen, unknown lesson, a
    lesson not restorable). docs/decisions.md, "The actions" (``restore``); issue 12, finding 7.
    """
    reason, reason_code = check_decision(actor, reason, reason_code)
    wanted = set(hashes)
    if not wanted:
        raise DecisionRefused(RESTORE_NOTHING)
    at = decision_now(now)
    with for_host(host.name), transaction.atomic():  # host-narrowed (docs/production.md, "Cache")
        lessons = lock_entity(host=host, namespace=namespace, subject=subject)
        version = check_version(lessons, pile_version)
        on_entity = {lesson.hash for lesson in lessons}
        unknown = sorted(wanted - on_entity)
        if unknown:
            raise DecisionRefused(LESSON_UNKNOWN.format(hash=unknown[0], host=host.name))
        chosen = [lesson for lesson in lessons if lesson.hash in wanted]
        for lesson in chosen:
            if lesson.status != Lesson.Status.RETRACTED:
                raise DecisionRefused(
                    RESTORE_NOT_RETRACTED.format(short=hash8(lesson.hash), status=lesson.status)
                )
        latest: dict[str, tuple[str, int]] = {}
        naming = Decision.objects.filter(host=host.name, lesson_hash__in=sorted(wanted)).order_by("-seq")
        for lesson_hash, action, seq in naming.values_list("lesson_hash", "action", "seq"):
            latest.setdefault(lesson_hash, (action, seq))
        if undoes is not None:
            undone = set(undoes)
            if any(latest.get(x.hash, ("", 0))[1] not in undone for x in chosen):
                raise UndoStale(version, sorted(undone))
        for lesson in chosen:
            if latest.get(lesson.hash, ("", 0))[0] != Action.RETIRE:
                raise DecisionRefused(RESTORE_NOT_BY_RETIRE.format(short=hash8(lesson.hash)))
        decisions = _status_decisions(
            action=Action.RESTORE,
            status=Lesson.Status.LIVE,
            entity=(host, namespace, subject),
            lessons=lessons,
            chosen=chosen,
            actor=actor,
            batch=new_batch(),
            reason=reason,
            reason_code=reason_code,
            at=at,
        )
    return decisions


def _status_decisions(
    *, action, status, entity, lessons, chosen, actor, batch, reason, reason_code, at
) -> list[Decision]:
    """The shared end of a retire and a restore, inside their transaction: one record per ``chosen``
    lesson (evidence with the entity's live count before the change, from ``lessons``), ``status`` set
    with ``decided_at`` = ``at``, the records appended (chain head locked once), the actor's claim on
    the pile released. docs/decisions.md ("The actions", "The decision record")."""
    host, namespace, subject = entity
    count = live_count(lessons)
    entries = [
        DecisionEntry(
            actor=actor.get_username(),
            action=action,
            host=host.name,
            namespace=namespace,
            subject=subject,
            lesson=lesson,
            batch=batch,
            reason=reason,
            reason_code=reason_code,
            evidence=lesson_evidence(lesson=lesson, live_count=count, host=host),
            at=at,
        )
        for lesson in chosen
    ]
    lesson_status_set(lessons=chosen, status=status, decided_at=at)
    decisions = decisions_append_many(entries=entries)
    claims_release_on_decision(host=host, namespace=namespace, subject=subject, actor=actor)
    return decisions


def lesson_restore(
    *,
    lesson: Lesson,
    actor: AbstractBaseUser,
    reason: str,
    reason_code: str | None = None,
    pile_version: str | None = None,
    now: datetime | None = None,
    undoes: Collection[int] | None = None,
) -> Decision:
    """Restore one lesson (``lessons_restore`` of just it, ``undoes`` as there); ``lesson`` shows its new
    status after.

    Raises ``NotAllowed``, ``StalePile`` or ``DecisionRefused``. docs/decisions.md, "The actions"
    (``restore``).
    """
    (decision,) = lessons_restore(
        host=lesson.host,
        namespace=lesson.namespace,
        subject=lesson.subject,
        hashes=[lesson.hash],
        actor=actor,
        reason=reason,
        reason_code=reason_code,
        pile_version=pile_version,
        now=now,
        undoes=undoes,
    )
    lesson.status = Lesson.Status.LIVE
    lesson.decided_at = decision.at
    return decision
