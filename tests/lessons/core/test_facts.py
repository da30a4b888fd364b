"""The facts of a pile (lessons.core.facts): one Fact per group, every member in exactly one, marks win,
the stored form round-trips, and the queue's counts."""

from lessons.core.facts import Fact, Mark, fact_counts, pile_facts
from lessons.core.piles import PileMember


def _m(h: str, at: int, verdict: str | None = None) -> PileMember:
    return PileMember(hash=h, created_at_ms=at, status="live", verdict=verdict)


TEXTS = {
    "a": "Write `gross_amount` as a bare number with two decimals",
    "b": "Write `gross_amount` as a bare number, two decimals, no symbol",
    "c": "Copy the advertiser name exactly as printed on the contract",
}
MEMBERS = [_m("b", 2, "held"), _m("c", 3), _m("a", 1)]


def test_every_member_is_in_exactly_one_fact_ordered_by_the_oldest():
    facts = pile_facts(members=MEMBERS, texts=TEXTS)
    assert [(f.name, f.members, f.keep, f.others, f.umbrella, f.covers) for f in facts] == [
        ("a", ("a", "b"), "b", ("a",), False, ()),
        ("c", ("c",), "c", (), False, ()),
    ]
    assert facts[0].anchors == ("gross_amount",)
    assert facts[0].label == "gross_amount"
    assert facts[1].similarity is None and facts[1].marked is False
    assert fact_counts(facts) == (2, 1)


def test_a_different_mark_splits_and_a_same_mark_joins():
    split = pile_facts(members=MEMBERS, texts=TEXTS, marks=[Mark(a="a", b="b", same=False)])
    assert [(f.members, f.marked) for f in split] == [(("a",), True), (("b",), True), (("c",), False)]
    joined = pile_facts(members=MEMBERS, texts=TEXTS, marks=[Mark(a="c", b="a", same=True)])
    assert [(f.members, f.marked) for f in joined] == [(("a", "b", "c"), True)]
    # A mark naming a lesson outside the pile changes nothing.
    assert pile_facts(members=MEMBERS, texts=TEXTS, marks=[Mark(a="a", b="zz", same=False)]) == pile_facts(
        members=MEMBERS, texts=TEXTS
    )


def test_the_stored_form_round_trips():
    for fact in pile_facts(members=MEMBERS, texts=TEXTS):
        assert Fact.from_dict(fact.as_dict()) == fact
