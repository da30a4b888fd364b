"""What every decision service shares: refusals and their texts, reason/actor checks, the entity lock,
and the evidence of what the reviewer saw. docs/decisions.md, "The actions".

Callers import each name from here (not through another service module); this module exists so the
lesson, draft and budget services can share them without importing each other.
"""

from __future__ import annotations

import unicodedata
import uuid
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.utils import timezone

from lessons.core.piles import verdict_label
from lessons.models import Host, Lesson
from lessons.selectors.piles import entity_lessons, pile_version
from lessons.serializers import recurrence_dict
from review.models import ReasonCode
from review.roles import PERM_DECIDE
from review.services.chain import truncate_to_ms

REASON_MAX = 500
# Zero-width and other format characters survive str.strip(); a reason of only those says nothing.
_INVISIBLE = frozenset({"Cf", "Cc", "Zs", "Zl", "Zp"})

# Every text a user can be shown by a refusal. Tests assert these exact values.
# REASON_MAX and these two texts are the one home of the reason's limits: the forms build theirs from them.
REASON_REQUIRED = f"A reason is required: write why, in 1 to {REASON_MAX} characters."
REASON_TOO_LONG = f"The reason is {{length}} characters long; at most {REASON_MAX} are allowed."
REASON_HAS_NUL = "The reason contains a NUL character; remove it."
REASON_CODE_UNKNOWN = "Unknown reason code {code!r}; use one of: {codes}."
NOT_ALLOWED_DECIDE = "{user} may not decide on lessons: that needs the reviewer role."
NOT_ALLOWED_BUDGET = "{user} may not change a host's budget: that needs the admin role."
NOT_ALLOWED_INACTIVE = "{user} is not an active user."
STALE_PILE = (
    "This pile changed since you loaded it; nothing was written. Review the fresh pile and try again."
)
UNDO_STALE = (
    "This Undo reverses {seqs}, which someone has undone since (the lessons were restored, and may have been "
    "retired again by a later decision); nothing was written. Review the fresh pile and restore from it if "
    "you still mean to."
)


class DecisionRefused(Exception):
    """A refusal the user caused (a precondition, a stale view, bad input); ``str(exc)`` is the message.
    ``field``: the input it is about ("reason", "reason_code", "max_active"), so a page shows it beside that
    field; ``None`` when it is about the action as a whole."""

    def __init__(self, message: str, *, field: str | None = None):
        super().__init__(message)
        self.message = message
        self.field = field


class NotAllowed(DecisionRefused):
    """The actor lacks the permission the action needs (or is inactive)."""


class StalePile(DecisionRefused):
    """The pile changed since the reviewer loaded it; ``fresh_version`` is the version now."""

    def __init__(self, fresh_version: str, message: str = STALE_PILE):
        super().__init__(message)
        self.fresh_version = fresh_version


class UndoStale(StalePile):
    """An Undo whose retire is no longer the latest decision on its lessons (someone restored them, even
    if a later retire made the pile look as it did): a conflict, like a stale pile. ``seqs``: the retire's
    decisions."""

    def __init__(self, fresh_version: str, seqs: list[int]):
        super().__init__(fresh_version, UNDO_STALE.format(seqs=", ".join(f"#{s}" for s in sorted(seqs))))


def new_batch() -> str:
    """A fresh batch id shared by the records of one submission: 32 lowercase hex characters."""
    return uuid.uuid4().hex


def clean_reason(reason: str | None) -> str:
    """The reason trimmed; refused unless 1..500 characters. docs/decisions.md, "The record"."""
    text = (reason or "").strip()
    if not text or all(unicodedata.category(c) in _INVISIBLE for c in text):
        raise DecisionRefused(REASON_REQUIRED, field="reason")
    if len(text) > REASON_MAX:
        raise DecisionRefused(REASON_TOO_LONG.format(length=len(text)), field="reason")
    if "\x00" in text:  # PostgreSQL text cannot hold it; refuse rather than fail on write
        raise DecisionRefused(REASON_HAS_NUL, field="reason")
    return text


def clean_reason_code(code: str | None) -> str | None:
    """``None`` (or empty) or one of ``ReasonCode``; refused otherwise."""
    if code is None or code == "":
        return None
    if code not in ReasonCode.values:
        raise DecisionRefused(
            REASON_CODE_UNKNOWN.format(code=code, codes=", ".join(ReasonCode.values)), field="reason_code"
        )
    return code


def check_actor(actor: AbstractBaseUser, perm: str, message: str) -> None:
    """Refuse (``NotAllowed``) unless ``actor`` is active and holds ``perm``."""
    name = actor.get_username()
    if not actor.is_active:
        raise NotAllowed(NOT_ALLOWED_INACTIVE.format(user=name))
    if not actor.has_perm(perm):
        raise NotAllowed(message.format(user=name))


def check_decision(
    actor: AbstractBaseUser,
    reason: str | None,
    reason_code: str | None,
    *,
    perm: str = PERM_DECIDE,
    message: str = NOT_ALLOWED_DECIDE,
) -> tuple[str, str | None]:
    """What every decision service checks first: the actor (``check_actor``), then the reason and its code.

    Returns ``(reason, reason_code)`` cleaned. Raises ``NotAllowed`` or ``DecisionRefused``.
    docs/decisions.md, "The actions".
    """
    check_actor(actor, perm, message)
    return clean_reason(reason), clean_reason_code(reason_code)


def decision_now(now: datetime | None) -> datetime:
    """``now`` (or the clock) in UTC, cut to milliseconds: the ``at`` of the record and ``decided_at``."""
    return truncate_to_ms(now or timezone.now())


def lock_entity(*, host: Host, namespace: str, subject: str) -> list[Lesson]:
    """Every lesson of the entity, oldest first, locked (``SELECT … FOR UPDATE``) until the transaction ends.

    Locking in one fixed order (created_at, hash) means two writers on one pile queue instead of
    deadlocking. ``of=("self",)`` because the recurrence join is an outer join. On SQLite the lock is a
    no-op and the IMMEDIATE transaction mode (settings) serializes writers instead.
    """
    qs: QuerySet[Lesson] = entity_lessons(host=host, namespace=namespace, subject=subject)
    return list(qs.select_for_update(of=("self",)))


def check_version(lessons: list[Lesson], expected: str | None) -> str:
    """The pile version of the locked ``lessons``; ``StalePile`` when ``expected`` is given and differs."""
    version = pile_version(lessons)
    if expected is not None and expected != version:
        raise StalePile(version)
    return version


def verdict_shown(lesson: Lesson) -> str:
    """The latest verdict as the pages show it (docs/piles-and-recurrence.md, "Piles" rule 6)."""
    return verdict_label(lesson.latest_verdict)


def lesson_evidence(*, lesson: Lesson, live_count: int, host: Host) -> dict:
    """What the reviewer saw of a lesson: ``{"count", "max_active", "verdict", "recurrence"}``.

    ``count`` is the entity's live count before the decision. docs/decisions.md, "The record".
    """
    return {
        "count": live_count,
        "max_active": host.max_active,
        "verdict": verdict_shown(lesson),
        "recurrence": recurrence_dict(lesson),
    }


def live_count(lessons: list[Lesson]) -> int:
    return sum(1 for lesson in lessons if lesson.status == Lesson.Status.LIVE)
