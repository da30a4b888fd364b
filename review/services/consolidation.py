"""Consolidation decisions: approve, reject and roll back a drafted consolidating lesson.

Import these from ``review.services.decisions``. docs/decisions.md, "The actions"; docs/interchange.md,
"draft: a drafted consolidating lesson".
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from lessons.core.coverage import draft_coverage, requires_confirmation
from lessons.core.text import hash8, lesson_hash, text_hash
from lessons.models import Draft, Host, Lesson
from lessons.selectors.piles import entity_lessons
from lessons.serializers import recurrence_dict
from lessons.services.data_version import for_host
from lessons.services.entity_counts import entity_counts_for_lessons, entity_counts_refresh
from lessons.services.principals import draft_names_user
from lessons.services.status import lesson_status_set, recurrence_after_commit
from review.models import Action, Decision
from review.services.chain import decision_append
from review.services.claims import claims_release_on_decision
from review.services.common import (
    DecisionRefused,
    check_decision,
    check_version,
    decision_now,
    live_count,
    lock_entity,
    new_batch,
    verdict_shown,
)

DRAFT_NOT_PENDING = "Draft {draft} is {status}; only a pending draft can be approved."
DRAFT_GATE_FAILED = (
    "Draft {draft} failed the {gates} gate; a draft that failed a gate can be rejected, never approved."
)
DRAFT_BY_AUTHOR = "{user} drafted draft {draft}, so another reviewer must approve it."
DRAFT_BY_WRITER = "{user} wrote draft {draft}, so another reviewer must approve it."
DRAFT_BY_TRIGGER = "{user} triggered draft {draft}, so another reviewer must approve it."
DRAFT_STALE = (
    "Draft {draft} is stale: {lessons} it supersedes {verb} no longer live. It can be rejected, not approved."
)
CONSOLIDATION_EXISTS = (
    "A lesson with this draft's text already exists on the entity ({short}…, {status}); "
    "approving would duplicate it."
)
DRAFT_DROPS_ANCHORS = (
    "This draft drops {anchors} from lessons that held at the Verify gate. "
    "Confirm the dropped anchors to approve it anyway."
)
REJECT_NOT_PENDING = "Draft {draft} is {status}; only a pending or stale draft can be rejected."
ROLLBACK_NOT_APPROVED = "Draft {draft} is {status}; only an approved consolidation can be rolled back."
ROLLBACK_NOT_LIVE = (
    "The consolidation {short}… created by draft {draft} is {status}, not live; "
    "there is nothing to roll back."
)

LLM_LABEL_PREFIX = "llm:"


def _failed_gates(draft: Draft) -> str:
    failed = [
        name
        for name, value in (("GROUND", draft.gate_ground), ("VERIFY", draft.gate_verify))
        if value != "pass"
    ]
    return " and ".join(failed)


def _origin(drafted_by: str) -> str:
    """``llm`` when a model drafted it (``llm:…``), else ``human``."""
    return Lesson.Origin.LLM if drafted_by.startswith(LLM_LABEL_PREFIX) else Lesson.Origin.HUMAN


def _lock_draft(draft: Draft) -> Draft:
    return Draft.objects.select_for_update().select_related("host").get(pk=draft.pk)


def _sync(target: Draft, source: Draft) -> None:
    """Copy the decided fields back onto the caller's instance so it shows the new state."""
    target.status = source.status
    target.created_lesson_id = source.created_lesson_id
    target.decided_at = source.decided_at


def _draft_decision(
    draft: Draft,
    *,
    actor: AbstractBaseUser,
    reason: str,
    reason_code: str | None,
    now: datetime | None,
    act: Callable[[Draft, datetime], dict],
) -> Decision:
    """What every decision on a draft shares: the actor and reason checked (``check_decision``), then in
    one transaction the draft locked, ``act(locked, at)`` (its own checks, raising ``DecisionRefused``,
    and its changes; it returns the record's ``action``, ``evidence`` and ``lesson`` or ``created_hash``)
    and the one record of it (the draft, its host and entity, a fresh batch), the actor's claim on the
    pile released with it (issue 12, Build 3); the caller's ``draft`` then shows the decided state.
    ``at`` is ``decision_now(now)``. Raises ``NotAllowed`` or what ``act`` raises. docs/decisions.md,
    "The actions" and "The record"."""
    reason, reason_code = check_decision(actor, reason, reason_code)
    at = decision_now(now)
    with for_host() as scope, transaction.atomic():  # host-narrowed (docs/production.md, "Cache")
        locked = _lock_draft(draft)
        scope.add(locked.host.name)
        record = act(locked, at)
        claims_release_on_decision(
            host=locked.host, namespace=locked.namespace, subject=locked.subject, actor=actor
        )
        decision = decision_append(
            actor=actor.get_username(),
            host=locked.host.name,
            namespace=locked.namespace,
            subject=locked.subject,
            draft_id=locked.ext_id,
            batch=new_batch(),
            reason=reason,
            reason_code=reason_code,
            at=at,
            **record,
        )
    _sync(draft, locked)
    return decision


def draft_evidence(*, draft: Draft, lessons: list[Lesson], host: Host) -> dict:
    """What the reviewer saw of a draft: ``{"count", "max_active", "supersedes", "gates", "members"}``.

    ``members`` lists each superseded lesson still on the entity as ``{"hash", "verdict", "recurrence"}``
    in ``supersedes`` order. A draft written by a reviewer adds ``"written"``: ``{"by", "text",
    "waivers"}`` (its author label, its text, ``{anchor: reason}``), since no host has it to apply from.
    docs/decisions.md, "The record" (``evidence``); docs/reviewing.md, "Writing a consolidation".
    """
    by_hash = {lesson.hash: lesson for lesson in lessons}
    written = {}
    if draft.written_by_reviewer:
        written = {"written": {"by": draft.drafted_by, "text": draft.text, "waivers": dict(draft.waivers)}}
    return {
        **written,
        "count": live_count(lessons),
        "max_active": host.max_active,
        "supersedes": list(draft.supersedes),
        "gates": {"ground": draft.gate_ground, "verify": draft.gate_verify},
        "members": [
            {"hash": h, "verdict": verdict_shown(by_hash[h]), "recurrence": recurrence_dict(by_hash[h])}
            for h in draft.supersedes
            if h in by_hash
        ],
    }


def approval_refusal(*, draft: Draft, user, not_live: Sequence[str], duplicate: Lesson | None) -> str:
    """Why ``user`` may not approve ``draft`` now, or "" when they may: the draft's own preconditions
    (``draft_refusal``), then its members' (``members_refusal``). The one answer for the draft page (before
    it offers the form) and ``draft_approve`` (again, under its locks); the role is checked apart
    (``NotAllowed``). docs/decisions.md, "The actions" (``approve_consolidation``)."""
    return draft_refusal(draft=draft, user=user) or members_refusal(
        draft=draft, not_live=not_live, duplicate=duplicate
    )


def draft_refusal(*, draft: Draft, user) -> str:
    """ "" or why the draft itself cannot be approved by ``user``: it is not pending, a gate failed, or
    ``user`` drafted, wrote or triggered it."""
    if draft.status != Draft.Status.PENDING:
        return DRAFT_NOT_PENDING.format(draft=draft.ext_id, status=draft.status)
    if not draft.gates_pass:
        return DRAFT_GATE_FAILED.format(draft=draft.ext_id, gates=_failed_gates(draft))
    username = user.get_username()
    if draft_names_user(draft=draft, user=user, role="drafted"):
        by = DRAFT_BY_WRITER if draft.written_by_reviewer else DRAFT_BY_AUTHOR
        return by.format(user=username, draft=draft.ext_id)
    if draft_names_user(draft=draft, user=user, role="triggered"):
        return DRAFT_BY_TRIGGER.format(user=username, draft=draft.ext_id)
    return ""


def members_refusal(*, draft: Draft, not_live: Sequence[str], duplicate: Lesson | None) -> str:
    """ "" or why the entity's lessons stand in the way: a lesson the draft supersedes is no longer live
    (``not_live``: their hashes; the draft is stale), or its text is already a lesson (``duplicate``)."""
    if not_live:
        shorts = ", ".join(f"{hash8(h)}…" for h in not_live)
        many = len(not_live) > 1
        lessons = f"the lessons {shorts}" if many else f"the lesson {shorts}"
        return DRAFT_STALE.format(draft=draft.ext_id, lessons=lessons, verb="are" if many else "is")
    if duplicate is not None:
        return CONSOLIDATION_EXISTS.format(short=hash8(duplicate.hash), status=duplicate.status)
    return ""


def draft_approve(
    *,
    draft: Draft,
    actor: AbstractBaseUser,
    reason: str,
    reason_code: str | None = None,
    pile_version: str | None = None,
    confirm_dropped_anchors: bool = False,
    now: datetime | None = None,
) -> Decision:
    """Approve a consolidation draft: a live ``consolidation`` lesson with its text is created on the
    entity and each member it supersedes becomes ``superseded`` by it. One record (``lesson_hash`` null,
    ``draft_id``, ``created_hash``).

    Refused, in this order: the draft's own preconditions (``draft_refusal``: pending, gates passed,
    ``actor`` neither its ``drafted_by`` nor its ``triggered_by``), the pile version (``pile_version`` None
    skips that check), its members' (``members_refusal``: every superseded member live, no lesson with
    the consolidation's hash on the host) and, when the text drops a full anchor of a ``held`` member,
    ``confirm_dropped_anchors``. The draft page asks ``approval_refusal`` (the same two) first.
    Raises ``NotAllowed``, ``StalePile`` or ``DecisionRefused``. docs/decisions.md, "The actions".
    """

    def approve(locked: Draft, at: datetime) -> dict:
        host = locked.host
        refusal = draft_refusal(draft=locked, user=actor)
        if refusal:
            raise DecisionRefused(refusal)
        lessons = lock_entity(host=host, namespace=locked.namespace, subject=locked.subject)
        check_version(lessons, pile_version)  # a stale view is refused as such, before what changed in it
        by_hash = {lesson.hash: lesson for lesson in lessons}
        live = {
            h: by_hash[h]
            for h in locked.supersedes
            if h in by_hash and by_hash[h].status == Lesson.Status.LIVE
        }
        new_hash = lesson_hash(locked.namespace, locked.subject, locked.text)
        existing = Lesson.objects.filter(host=host, hash=new_hash).only("hash", "status").first()
        not_live = [h for h in locked.supersedes if h not in live]
        refusal = members_refusal(draft=locked, not_live=not_live, duplicate=existing)
        if refusal:
            raise DecisionRefused(refusal)
        members = [live[h] for h in locked.supersedes]
        coverage = draft_coverage(
            draft_text=locked.text, members=[(m.hash, m.text, m.latest_verdict) for m in members]
        )
        dropped = requires_confirmation(coverage)
        if dropped and not confirm_dropped_anchors:
            raise DecisionRefused(DRAFT_DROPS_ANCHORS.format(anchors=", ".join(f"`{a}`" for a in dropped)))
        evidence = draft_evidence(draft=locked, lessons=lessons, host=host)
        evidence["dropped_anchors"] = dropped
        created = _consolidation_lesson(locked, new_hash, at)
        # The draft is approved before the members' status changes: the status service refreshes the
        # entity's counts (EntityCount), and they then see the new lesson, the members and the draft.
        locked.status = Draft.Status.APPROVED
        locked.created_lesson = created
        locked.decided_at = at
        locked.save(update_fields=["status", "created_lesson", "decided_at"])
        lesson_status_set(
            lessons=members, status=Lesson.Status.SUPERSEDED, superseded_by=new_hash, decided_at=at
        )
        if not members:
            entity_counts_for_lessons([created])
        return {"action": Action.APPROVE, "evidence": evidence, "created_hash": new_hash}

    return _draft_decision(draft, actor=actor, reason=reason, reason_code=reason_code, now=now, act=approve)


def _consolidation_lesson(draft: Draft, digest: str, at: datetime) -> Lesson:
    """The live ``consolidation`` lesson an approval creates from ``draft`` (hash ``digest``, created and
    decided at ``at``), its recurrence refreshed once the transaction commits."""
    created = Lesson.objects.create(
        host=draft.host,
        hash=digest,
        namespace=draft.namespace,
        subject=draft.subject,
        text=draft.text,
        text_hash=text_hash(draft.text),
        created_at=at,
        status=Lesson.Status.LIVE,
        kind=Lesson.Kind.CONSOLIDATION,
        origin=_origin(draft.drafted_by),
        consolidates=list(draft.supersedes),
        decided_at=at,
    )
    recurrence_after_commit(lessons=[created])
    return created


def draft_reject(
    *,
    draft: Draft,
    actor: AbstractBaseUser,
    reason: str,
    reason_code: str | None = None,
    now: datetime | None = None,
) -> Decision:
    """Reject a pending (or stale) draft; no lesson changes. One record (``lesson_hash`` null, ``draft_id``).

    Raises ``NotAllowed`` or ``DecisionRefused`` (approved or rejected already). docs/decisions.md.
    """

    def reject(locked: Draft, at: datetime) -> dict:
        host = locked.host
        if locked.status != Draft.Status.PENDING:
            raise DecisionRefused(REJECT_NOT_PENDING.format(draft=locked.ext_id, status=locked.status))
        lessons = list(entity_lessons(host=host, namespace=locked.namespace, subject=locked.subject))
        evidence = draft_evidence(draft=locked, lessons=lessons, host=host)
        locked.status = Draft.Status.REJECTED
        locked.decided_at = at
        locked.save(update_fields=["status", "decided_at"])
        entity_counts_refresh(host=host, keys=[(locked.namespace, locked.subject)])
        return {"action": Action.REJECT, "evidence": evidence}

    return _draft_decision(draft, actor=actor, reason=reason, reason_code=reason_code, now=now, act=reject)


def consolidation_rollback(
    *,
    draft: Draft,
    actor: AbstractBaseUser,
    reason: str,
    reason_code: str | None = None,
    pile_version: str | None = None,
    now: datetime | None = None,
) -> Decision:
    """Roll back an approved consolidation that is still live: it becomes ``retracted`` and the members it
    superseded are live again (``superseded_by`` cleared). The draft stays ``approved``; the rollback is
    told by its record (``lesson_hash`` = the consolidation's hash, ``draft_id``).

    Raises ``NotAllowed``, ``StalePile`` or ``DecisionRefused``. docs/decisions.md, "The actions".
    """

    def roll_back(locked: Draft, at: datetime) -> dict:
        host = locked.host
        if locked.status != Draft.Status.APPROVED or locked.created_lesson_id is None:
            raise DecisionRefused(ROLLBACK_NOT_APPROVED.format(draft=locked.ext_id, status=locked.status))
        lessons = lock_entity(host=host, namespace=locked.namespace, subject=locked.subject)
        check_version(lessons, pile_version)
        created = next((x for x in lessons if x.pk == locked.created_lesson_id), None)
        if created is None or created.status != Lesson.Status.LIVE:
            status = created.status if created is not None else "gone"
            short = hash8(created.hash) if created is not None else "?"
            raise DecisionRefused(ROLLBACK_NOT_LIVE.format(short=short, draft=locked.ext_id, status=status))
        evidence = draft_evidence(draft=locked, lessons=lessons, host=host)
        evidence["verdict"] = verdict_shown(created)
        evidence["recurrence"] = recurrence_dict(created)
        supersedes = set(locked.supersedes)
        # Only the members this consolidation superseded; one changed since (by an import newer than
        # the approval) keeps its state.
        revived = [
            member
            for member in lessons
            if member.hash in supersedes
            and member.status == Lesson.Status.SUPERSEDED
            and member.superseded_by == created.hash
        ]
        lesson_status_set(lessons=[created], status=Lesson.Status.RETRACTED, decided_at=at)
        lesson_status_set(lessons=revived, status=Lesson.Status.LIVE, superseded_by=None, decided_at=at)
        return {"action": Action.ROLLBACK, "evidence": evidence, "lesson": created}

    return _draft_decision(draft, actor=actor, reason=reason, reason_code=reason_code, now=now, act=roll_back)
