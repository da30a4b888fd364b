"""Restatement marks (review.services.restatements): a reviewer's correction of a pile's facts is stored
per host, wins over the automatic grouping at once (the stored facts are refreshed in the same
transaction), replaces an older mark of the same pair, and is no decision."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lessons.models import Host, Lesson, RestatementMark
from lessons.selectors.facts import pile_facts_stored
from review.models import Decision
from review.services.common import REASON_REQUIRED, DecisionRefused, NotAllowed
from review.services.restatements import (
    MARK_ITSELF,
    MARK_NOT_LIVE,
    NOT_ALLOWED_MARK,
    SPLIT_ALONE,
    fact_split,
    facts_merge,
    restatement_mark,
)

pytestmark = pytest.mark.django_db

# Three rules the word rules group (one fact said three ways), and one that shares nothing with them.
TEXTS = [
    "Copy the `claim_id` from the first notice of loss exactly as issued.",
    "Copy the `claim_id` from the first notice of loss exactly as it was issued.",
    "Copy the `claim_id` from the first notice of loss, exactly as issued, never retyped.",
    "Record the date of loss as YYYY-MM-DD from the claimant statement.",
]
AT = datetime(2026, 3, 1, 12, 0, 0, 123000, tzinfo=UTC)


@pytest.fixture
def pile(entity):
    """qa-host's qa/orders (budget 2, enabled): the four ``TEXTS``, oldest first; returns their hashes."""
    return entity(4, texts=TEXTS)


def groups() -> list[tuple[str, ...]]:
    facts = pile_facts_stored(host=Host.objects.get(name="qa-host"), namespace="qa", subject="orders")
    return [f.members for f in facts]


def test_the_pile_starts_as_one_fact_of_three_and_one_alone(pile):
    assert groups() == [tuple(pile[:3]), (pile[3],)]


def test_marking_two_facts_as_one_joins_them_and_stores_who_why_and_when(pile, reviewer):
    facts = pile_facts_stored(host=Host.objects.get(name="qa-host"), namespace="qa", subject="orders")
    host = Host.objects.get(name="qa-host")
    assert (
        facts_merge(
            host=host, fact=facts[0], other=facts[1], actor=reviewer, reason="  One rule: claim ids.  "
        )
        == 1
    )
    assert groups() == [tuple(pile)]
    (mark,) = RestatementMark.objects.values("a", "b", "same", "reason", "made_by__username")
    assert mark == {
        "a": min(pile[0], pile[3]),
        "b": max(pile[0], pile[3]),
        "same": True,
        "reason": "One rule: claim ids.",
        "made_by__username": "rita",
    }


def test_taking_the_oldest_member_out_leaves_the_other_two_one_fact(pile, reviewer):
    host = Host.objects.get(name="qa-host")
    (claim, _alone) = pile_facts_stored(host=host, namespace="qa", subject="orders")
    assert (
        fact_split(host=host, fact=claim, member=pile[0], actor=reviewer, reason="Says when, not what.") == 2
    )
    assert groups() == [(pile[0],), (pile[1], pile[2]), (pile[3],)]


def test_taking_a_newer_member_out_leaves_the_oldest_with_the_rest(pile, reviewer):
    host = Host.objects.get(name="qa-host")
    (claim, _alone) = pile_facts_stored(host=host, namespace="qa", subject="orders")
    fact_split(host=host, fact=claim, member=pile[1], actor=reviewer, reason="Another instruction.")
    assert groups() == [(pile[0], pile[2]), (pile[1],), (pile[3],)]


def test_a_newer_mark_of_the_same_pair_replaces_the_older_one(pile, reviewer, second_reviewer):
    host = Host.objects.get(name="qa-host")
    restatement_mark(host=host, pairs=[(pile[3], pile[0])], same=True, actor=reviewer, reason="same")
    restatement_mark(
        host=host, pairs=[(pile[0], pile[3])], same=False, actor=second_reviewer, reason="no", now=AT
    )
    rows = list(RestatementMark.objects.values_list("same", "reason", "made_by__username", "made_at"))
    assert rows == [(False, "no", "rob", AT)]
    assert groups() == [tuple(pile[:3]), (pile[3],)]


def test_a_mark_changes_no_lesson_and_writes_no_decision(pile, reviewer):
    host = Host.objects.get(name="qa-host")
    before = list(Lesson.objects.order_by("id").values_list("hash", "status", "updated_at"))
    restatement_mark(host=host, pairs=[(pile[0], pile[3])], same=True, actor=reviewer, reason="same")
    assert list(Lesson.objects.order_by("id").values_list("hash", "status", "updated_at")) == before
    assert Decision.objects.count() == 0


def test_a_viewer_may_not_mark_and_nothing_is_written(pile, viewer):
    host = Host.objects.get(name="qa-host")
    with pytest.raises(NotAllowed) as refused:
        restatement_mark(host=host, pairs=[(pile[0], pile[3])], same=True, actor=viewer, reason="same")
    assert str(refused.value) == NOT_ALLOWED_MARK.format(user="vera")
    assert RestatementMark.objects.count() == 0


@pytest.mark.parametrize(
    ("pairs", "reason", "message"),
    [
        ([(0, 0)], "same", MARK_ITSELF),
        ([(0, 3)], "   ", REASON_REQUIRED),
        ([(0, "f" * 64)], "same", MARK_NOT_LIVE.format(short="ffffffff", host="qa-host")),
    ],
)
def test_bad_marks_are_refused_in_one_line_and_nothing_is_written(pile, reviewer, pairs, reason, message):
    host = Host.objects.get(name="qa-host")

    def hash_of(x):
        return pile[x] if isinstance(x, int) else x

    with pytest.raises(DecisionRefused) as refused:
        restatement_mark(
            host=host,
            pairs=[(hash_of(a), hash_of(b)) for a, b in pairs],
            same=True,
            actor=reviewer,
            reason=reason,
        )
    assert str(refused.value) == message
    assert RestatementMark.objects.count() == 0


def test_a_retired_lesson_cannot_be_marked(pile, reviewer):
    from review.services.decisions import lessons_retire

    host = Host.objects.get(name="qa-host")
    lessons_retire(host=host, hashes=[pile[3]], actor=reviewer, reason="gone")
    with pytest.raises(DecisionRefused) as refused:
        restatement_mark(host=host, pairs=[(pile[0], pile[3])], same=True, actor=reviewer, reason="same")
    assert str(refused.value) == MARK_NOT_LIVE.format(short=pile[3][:8], host="qa-host")


def test_a_fact_of_one_cannot_be_split(pile, reviewer):
    host = Host.objects.get(name="qa-host")
    (_claim, alone) = pile_facts_stored(host=host, namespace="qa", subject="orders")
    with pytest.raises(DecisionRefused) as refused:
        fact_split(host=host, fact=alone, member=pile[3], actor=reviewer, reason="alone")
    assert str(refused.value) == SPLIT_ALONE.format(short=pile[3][:8])
