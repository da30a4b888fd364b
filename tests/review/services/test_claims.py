"""Pile claims: claim, renew, release, expiry on a fixed clock, two reviewers, release on the holder's
decision, viewers refused. Issue 12, Build 3."""

from __future__ import annotations

from datetime import timedelta

import pytest

from lessons.models import Draft, Host, Lesson
from review.models import PileClaim
from review.piles.selectors import claim_shown
from review.services.claims import (
    CLAIM_HELD_BY_OTHER,
    CLAIM_NOT_HELD,
    NOT_ALLOWED_CLAIM,
    ClaimRefused,
    pile_claim,
    pile_claim_release,
    pile_claim_renew,
)
from review.services.common import NotAllowed, StalePile
from review.services.consolidation import draft_approve, draft_reject
from review.services.decisions import lesson_restore, lessons_retire
from tests.fixtures.decisions import NOW, NS, SUBJECT

MS_NOW = NOW.replace(microsecond=123000)  # the service keeps milliseconds, like the decision record


def acme() -> Host:
    return Host.objects.get(name="acme")


def claim(user, now=NOW, **entity):
    entity = entity or {"namespace": NS, "subject": SUBJECT}
    return pile_claim(host=acme(), user=user, now=now, **entity)


def shown(now=NOW, **entity):
    entity = entity or {"namespace": NS, "subject": SUBJECT}
    return claim_shown(host=acme(), now=now, **entity)


def refusal(call) -> str:
    with pytest.raises(ClaimRefused) as exc:
        call()
    return str(exc.value)


def test_a_claim_lasts_fifteen_minutes_from_now(pile, reviewer):
    row = claim(reviewer)
    assert (row.user, row.claimed_at, row.expires_at) == (reviewer, MS_NOW, MS_NOW + timedelta(minutes=15))
    seen = shown(now=NOW + timedelta(minutes=4, seconds=59))
    assert (seen.username, seen.claimed_at, seen.minutes_ago) == ("rita", MS_NOW, 4)


def test_a_claim_is_absent_once_it_expires_without_any_job(pile, reviewer):
    claim(reviewer)
    assert shown(now=NOW + timedelta(minutes=14, seconds=59)).username == "rita"
    assert shown(now=NOW + timedelta(minutes=15)) is None
    assert PileClaim.objects.count() == 1  # nothing deleted it: it is simply not shown


def test_renewing_extends_the_claim_and_keeps_since_when(pile, reviewer):
    claim(reviewer)
    later = NOW + timedelta(minutes=10)
    row = pile_claim_renew(host=acme(), namespace=NS, subject=SUBJECT, user=reviewer, now=later)
    assert (row.claimed_at, row.expires_at) == (MS_NOW, MS_NOW + timedelta(minutes=25))
    assert shown(now=NOW + timedelta(minutes=20)).minutes_ago == 20


def test_claiming_again_renews_ones_own_claim(pile, reviewer):
    claim(reviewer)
    row = claim(reviewer, now=NOW + timedelta(minutes=5))
    assert (row.claimed_at, row.expires_at) == (MS_NOW, MS_NOW + timedelta(minutes=20))
    assert PileClaim.objects.count() == 1


def test_an_expired_claim_cannot_be_renewed(pile, reviewer):
    claim(reviewer)
    late = NOW + timedelta(minutes=16)
    assert refusal(
        lambda: pile_claim_renew(host=acme(), namespace=NS, subject=SUBJECT, user=reviewer, now=late)
    ) == (CLAIM_NOT_HELD)


def test_releasing_removes_the_claim_and_a_second_release_is_refused(pile, reviewer):
    claim(reviewer)
    pile_claim_release(host=acme(), namespace=NS, subject=SUBJECT, user=reviewer, now=NOW)
    assert shown() is None and PileClaim.objects.count() == 0
    assert refusal(
        lambda: pile_claim_release(host=acme(), namespace=NS, subject=SUBJECT, user=reviewer, now=NOW)
    ) == (CLAIM_NOT_HELD)


def test_a_second_reviewer_sees_the_first_claim_and_cannot_take_it(pile, reviewer, second_reviewer):
    claim(reviewer)
    message = refusal(lambda: claim(second_reviewer, now=NOW + timedelta(minutes=3)))
    assert message == CLAIM_HELD_BY_OTHER.format(
        holder="rita", since="2026-03-01 12:00", until="2026-03-01 12:15"
    )
    assert message.startswith(
        "rita has claimed this pile since 2026-03-01 12:00 UTC (until 2026-03-01 12:15 UTC)"
    )
    assert refusal(
        lambda: pile_claim_release(host=acme(), namespace=NS, subject=SUBJECT, user=second_reviewer, now=NOW)
    ) == (CLAIM_NOT_HELD)
    assert shown().username == "rita"


def test_after_expiry_another_reviewer_takes_the_claim(pile, reviewer, second_reviewer):
    claim(reviewer)
    later = NOW + timedelta(minutes=15)
    row = claim(second_reviewer, now=later)
    assert (row.user, row.claimed_at) == (second_reviewer, later.replace(microsecond=123000))
    assert PileClaim.objects.count() == 1


def test_the_second_reviewer_can_still_retire_and_the_first_keeps_the_claim(pile, reviewer, second_reviewer):
    claim(reviewer)
    lessons_retire(host=acme(), hashes=[pile[0]], actor=second_reviewer, reason="restates", now=NOW)
    assert shown().username == "rita"


def test_the_claim_is_released_by_the_holders_retire(pile, reviewer):
    claim(reviewer)
    lessons_retire(host=acme(), hashes=[pile[0]], actor=reviewer, reason="restates", now=NOW)
    assert shown() is None and PileClaim.objects.count() == 0


def test_the_claim_is_released_by_the_holders_restore(pile, reviewer, second_reviewer):
    lessons_retire(host=acme(), hashes=[pile[0]], actor=second_reviewer, reason="restates", now=NOW)
    claim(reviewer)
    lesson_restore(lesson=Lesson.objects.get(hash=pile[0]), actor=reviewer, reason="needed", now=NOW)
    assert PileClaim.objects.count() == 0


def test_a_refused_decision_keeps_the_claim(pile, reviewer):
    claim(reviewer)
    with pytest.raises(StalePile):
        lessons_retire(
            host=acme(), hashes=[pile[0]], actor=reviewer, reason="x", pile_version="stale", now=NOW
        )
    assert shown().username == "rita"


@pytest.mark.parametrize("decide", [draft_approve, draft_reject])
def test_the_claim_is_released_by_the_holders_draft_decision(small_draft, reviewer, second_reviewer, decide):
    small_draft(2)
    draft = Draft.objects.get(ext_id="d-2")
    pile_claim(host=acme(), namespace=draft.namespace, subject=draft.subject, user=reviewer)
    pile_claim(host=acme(), namespace=NS, subject=SUBJECT, user=reviewer)  # another entity: kept
    decide(draft=draft, actor=reviewer, reason="one rule")
    assert list(PileClaim.objects.values_list("subject", "namespace")) == [(SUBJECT, NS)]


def test_a_viewer_may_not_claim(pile, viewer):
    with pytest.raises(NotAllowed) as exc:
        claim(viewer)
    assert str(exc.value) == NOT_ALLOWED_CLAIM.format(user="vera")
    assert PileClaim.objects.count() == 0


def test_claims_are_per_entity(pile, reviewer, second_reviewer):
    claim(reviewer)
    claim(second_reviewer, namespace=NS, subject="other_subject")
    assert shown().username == "rita"
    assert shown(namespace=NS, subject="other_subject").username == "rob"
