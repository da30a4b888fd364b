"""Pile claims: a reviewer says "I am on this pile" for ``CLAIM_MINUTES`` minutes. Issue 12, Build 3.

A claim is advisory. Anyone with the reviewer role may still decide on a claimed pile (the pile version
check of docs/decisions.md, "The actions", stays the guarantee); a claim only tells the others who
is on it and since when. It lasts ``CLAIM_MINUTES`` from its claim or its last renewal and is released by
its holder, or by the holder's own decision on the pile (``claims_release_on_decision``, called inside
the decision services' transactions). An expired claim is treated as absent: every read
(``review.piles.selectors``) compares ``expires_at`` with now, so no background job is needed; the next
claim replaces the expired row.

Refusals raise ``ClaimRefused`` (a ``DecisionRefused``: ``str()`` is the message to show) or
``NotAllowed``; nothing is written then. Times are UTC, cut to milliseconds like the decision record.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

from lessons.models import Host
from lessons.services.data_version import for_host
from review.models import PileClaim
from review.roles import PERM_CLAIM
from review.services.common import DecisionRefused, check_actor, decision_now

CLAIM_MINUTES = 15
CLAIM_LENGTH = timedelta(minutes=CLAIM_MINUTES)

# Every text a claim refusal shows. Tests assert these exact values.
NOT_ALLOWED_CLAIM = "{user} may not claim a pile: that needs the reviewer role."
CLAIM_HELD_BY_OTHER = (
    "{holder} has claimed this pile since {since} UTC (until {until} UTC); you can still act on it, "
    "or claim it when the claim ends."
)
CLAIM_NOT_HELD = "You hold no claim on this pile (it was released or it expired); claim it again."
CLAIM_RACE = "Someone claimed this pile at the same moment; reload it to see who."


class ClaimRefused(DecisionRefused):
    """A claim, renewal or release that cannot be done; ``str(exc)`` is the message."""


def _hhmm(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M")


def _locked(host: Host, namespace: str, subject: str) -> PileClaim | None:
    return (
        PileClaim.objects.select_for_update()
        .select_related("user")
        .filter(host=host, namespace=namespace, subject=subject)
        .first()
    )


def pile_claim(
    *, host: Host, namespace: str, subject: str, user: AbstractBaseUser, now: datetime | None = None
) -> PileClaim:
    """Claim the entity ``(host, namespace, subject)`` for ``user`` until now + ``CLAIM_MINUTES``.

    Claiming a pile one already holds renews it (``claimed_at`` kept); an expired claim of anyone is
    replaced. Returns the claim row. Raises ``NotAllowed`` (no ``review.claim_pile``) or ``ClaimRefused``
    (another user holds a live claim; two claims at the same moment). Issue 12, Build 3.
    """
    check_actor(user, PERM_CLAIM, NOT_ALLOWED_CLAIM)
    at = decision_now(now)
    with for_host(host.name), transaction.atomic():  # host-narrowed (docs/production.md, "Cache")
        claim = _locked(host, namespace, subject)
        if claim is not None and claim.expires_at > at and claim.user_id != user.pk:
            raise ClaimRefused(
                CLAIM_HELD_BY_OTHER.format(
                    holder=claim.user.get_username(),
                    since=_hhmm(claim.claimed_at),
                    until=_hhmm(claim.expires_at),
                )
            )
        if claim is None:
            try:
                with transaction.atomic():
                    return PileClaim.objects.create(
                        host=host,
                        namespace=namespace,
                        subject=subject,
                        user=user,
                        claimed_at=at,
                        expires_at=at + CLAIM_LENGTH,
                    )
            except IntegrityError:
                raise ClaimRefused(CLAIM_RACE) from None
        if claim.user_id != user.pk or claim.expires_at <= at:
            claim.user = user
            claim.claimed_at = at
        claim.expires_at = at + CLAIM_LENGTH
        claim.save(update_fields=["user", "claimed_at", "expires_at"])
        return claim


def pile_claim_renew(
    *, host: Host, namespace: str, subject: str, user: AbstractBaseUser, now: datetime | None = None
) -> PileClaim:
    """Extend ``user``'s live claim to now + ``CLAIM_MINUTES`` (``claimed_at`` kept).

    Raises ``NotAllowed`` or ``ClaimRefused`` (``CLAIM_NOT_HELD`` when ``user`` holds no live claim on the
    pile: released, expired, or someone else's).
    """
    check_actor(user, PERM_CLAIM, NOT_ALLOWED_CLAIM)
    at = decision_now(now)
    with for_host(host.name), transaction.atomic():  # host-narrowed (docs/production.md, "Cache")
        claim = _locked(host, namespace, subject)
        if claim is None or claim.user_id != user.pk or claim.expires_at <= at:
            raise ClaimRefused(CLAIM_NOT_HELD)
        claim.expires_at = at + CLAIM_LENGTH
        claim.save(update_fields=["expires_at"])
        return claim


def pile_claim_release(
    *, host: Host, namespace: str, subject: str, user: AbstractBaseUser, now: datetime | None = None
) -> None:
    """Delete ``user``'s live claim on the pile. Raises ``NotAllowed`` or ``ClaimRefused``
    (``CLAIM_NOT_HELD``: only the holder releases a claim; anyone else waits for it to expire)."""
    check_actor(user, PERM_CLAIM, NOT_ALLOWED_CLAIM)
    at = decision_now(now)
    with for_host(host.name):  # host-narrowed (docs/production.md, "Cache")
        deleted, _ = PileClaim.objects.filter(
            host=host, namespace=namespace, subject=subject, user=user, expires_at__gt=at
        ).delete()
    if not deleted:
        raise ClaimRefused(CLAIM_NOT_HELD)


def claims_release_on_decision(*, host: Host, namespace: str, subject: str, actor: AbstractBaseUser) -> int:
    """Release ``actor``'s claim on the entity, if any: called by every decision service on the pile, in
    its transaction, so a refused decision keeps the claim. Returns the rows deleted (0 or 1); one query.
    Another reviewer's claim stays: deciding on a claimed pile is allowed and does not end their claim."""
    deleted, _ = PileClaim.objects.filter(
        host=host, namespace=namespace, subject=subject, user_id=actor.pk
    ).delete()
    return deleted
