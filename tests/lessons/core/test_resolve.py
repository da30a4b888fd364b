"""Resolving a pile by its facts (lessons.core.resolve): one keeper per fact, the others selected, the
umbrellas left alone."""

from __future__ import annotations

from lessons.core.facts import Fact
from lessons.core.resolve import Resolution, keeper_of, resolve_by_facts


def fact(*members: str, keep: str | None = None, umbrella: bool = False, covers=()) -> Fact:
    return Fact(
        name=members[0],
        label=f"fact {members[0]}",
        members=members,
        keep=keep or members[-1],
        umbrella=umbrella,
        covers=tuple(covers),
        anchors=(),
        words=(),
        similarity=None,
        marked=False,
    )


FACTS = (
    fact("a1", "a2", keep="a1"),
    fact("b1", "b2", "b3"),
    fact("u1", umbrella=True, covers=("a1", "b1")),
    fact("c1"),
)


def test_every_member_but_each_facts_suggested_keeper_is_selected_and_umbrellas_are_left_alone():
    assert resolve_by_facts(FACTS) == Resolution(
        keep=("a1", "b3", "c1"), retire=("a2", "b1", "b2"), umbrellas=("u1",)
    )


def test_a_picked_keeper_wins_over_the_suggested_one_of_its_fact_only():
    assert resolve_by_facts(FACTS, ["b1", "a2"]) == Resolution(
        keep=("a2", "b1", "c1"), retire=("a1", "b2", "b3"), umbrellas=("u1",)
    )


def test_picks_of_an_umbrella_or_of_no_fact_are_ignored_and_the_first_pick_of_a_fact_wins():
    assert keeper_of(FACTS[1], ["zz", "u1", "b2", "b1"]) == "b2"
    assert resolve_by_facts(FACTS, ["u1", "zz"]) == resolve_by_facts(FACTS)


def test_a_pile_of_one_fact_each_selects_nothing():
    assert resolve_by_facts((fact("x"), fact("y"))) == Resolution(keep=("x", "y"), retire=(), umbrellas=())
