"""Budget decisions: preview and set a host's ``max_active`` / ``budget_enabled``.

Import these from ``review.services.decisions``. docs/decisions.md, "The actions" (``set_budget``);
docs/piles-and-recurrence.md, "Piles", rules 3-4.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import Count

from lessons.core.interchange import MAX_ACTIVE_MAX, MAX_ACTIVE_MIN, MAX_ACTIVE_WANTED
from lessons.core.piles import pile_target
from lessons.models import Host, Lesson
from lessons.services.data_version import for_host
from lessons.tasks import budget_changed_grouping_later
from review.models import Action, Decision
from review.roles import PERM_SET_BUDGET
from review.services.chain import decision_append
from review.services.common import (
    NOT_ALLOWED_BUDGET,
    DecisionRefused,
    check_decision,
    decision_now,
    new_batch,
)

BUDGET_OUT_OF_RANGE = MAX_ACTIVE_WANTED + "; got {value!r}."
BUDGET_NOTHING_GIVEN = "Nothing to change: give a new max_active, or enable or disable the budget."
BUDGET_UNCHANGED = (
    "Host {host} already has max_active {max_active} with the budget {state}; nothing was written."
)


def _state(enabled: bool) -> str:
    return "enabled" if enabled else "disabled"


def check_max_active(value: object) -> int:
    """``value`` when it is an integer in MAX_ACTIVE_MIN..MAX_ACTIVE_MAX (1..10000); ``DecisionRefused``
    (its field ``max_active``) otherwise.
    docs/piles-and-recurrence.md, "Piles" rule 3."""
    if isinstance(value, bool) or not isinstance(value, int) or not MAX_ACTIVE_MIN <= value <= MAX_ACTIVE_MAX:
        raise DecisionRefused(BUDGET_OUT_OF_RANGE.format(value=value), field="max_active")
    return value


def budget_preview(*, host: Host, max_active: int, budget_enabled: bool) -> dict:
    """What a budget change would do to the host's piles, counted in SQL (one query, none when the
    budget is off before and after).

    Returns ``{"over_budget_now": int, "over_budget_after": int, "appear": [target, ...],
    "disappear": [target, ...]}``; targets as docs/piles-and-recurrence.md, "Piles" rule 7, sorted by
    namespace then subject.
    Raises ``DecisionRefused`` when ``max_active`` is outside MAX_ACTIVE_MIN..MAX_ACTIVE_MAX.
    """
    check_max_active(max_active)
    now_limit = host.max_active if host.budget_enabled else None
    after_limit = max_active if budget_enabled else None
    limits = [limit for limit in (now_limit, after_limit) if limit is not None]
    result = {"over_budget_now": 0, "over_budget_after": 0, "appear": [], "disappear": []}
    if not limits:
        return result
    rows = (
        Lesson.objects.filter(host=host, status=Lesson.Status.LIVE)
        .values("namespace", "subject")
        .annotate(count=Count("id"))
        .filter(count__gt=min(limits))
        .order_by("namespace", "subject")
    )
    for row in rows:
        before = now_limit is not None and row["count"] > now_limit
        after = after_limit is not None and row["count"] > after_limit
        result["over_budget_now"] += before
        result["over_budget_after"] += after
        if after and not before:
            result["appear"].append(pile_target(row["namespace"], row["subject"]))
        elif before and not after:
            result["disappear"].append(pile_target(row["namespace"], row["subject"]))
    return result


def host_set_budget(
    *,
    host: Host,
    actor: AbstractBaseUser,
    max_active: int | None,
    budget_enabled: bool | None,
    reason: str,
    reason_code: str | None = None,
    now: datetime | None = None,
) -> Decision:
    """Change a host's ``max_active`` and/or ``budget_enabled`` (``None`` keeps a value); one record.

    ``evidence`` is ``{"before": {"max_active", "budget_enabled"}, "after": {...}, "piles_before": n,
    "piles_after": m}``. The host row is locked while checked and changed. Raises ``NotAllowed`` (no
    ``review.set_budget``) or ``DecisionRefused`` (reason, range, nothing given, nothing would change).
    docs/decisions.md, "The actions" (``set_budget``).
    """
    reason, reason_code = check_decision(
        actor, reason, reason_code, perm=PERM_SET_BUDGET, message=NOT_ALLOWED_BUDGET
    )
    if max_active is None and budget_enabled is None:
        raise DecisionRefused(BUDGET_NOTHING_GIVEN)
    if max_active is not None:
        check_max_active(max_active)
    at = decision_now(now)
    with for_host(host.name), transaction.atomic():  # host-narrowed (docs/production.md, "Cache")
        locked = Host.objects.select_for_update().get(pk=host.pk)
        before = {"max_active": locked.max_active, "budget_enabled": locked.budget_enabled}
        after = {
            "max_active": locked.max_active if max_active is None else max_active,
            "budget_enabled": locked.budget_enabled if budget_enabled is None else bool(budget_enabled),
        }
        if after == before:
            raise DecisionRefused(
                BUDGET_UNCHANGED.format(
                    host=locked.name, max_active=locked.max_active, state=_state(locked.budget_enabled)
                )
            )
        preview = budget_preview(host=locked, **after)
        locked.max_active = after["max_active"]
        locked.budget_enabled = after["budget_enabled"]
        locked.save(update_fields=["max_active", "budget_enabled"])
        budget_changed_grouping_later(host=locked)
        decision = decision_append(
            actor=actor.get_username(),
            action=Action.SET_BUDGET,
            host=locked.name,
            namespace=None,
            subject=None,
            batch=new_batch(),
            reason=reason,
            reason_code=reason_code,
            evidence={
                "before": before,
                "after": after,
                "piles_before": preview["over_budget_now"],
                "piles_after": preview["over_budget_after"],
            },
            at=at,
        )
    host.max_active = locked.max_active
    host.budget_enabled = locked.budget_enabled
    return decision
