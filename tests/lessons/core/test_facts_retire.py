"""A retire changes no fact but its own (lessons.core.facts, method 17): the facts are grouped over the
entity's lessons whatever their status (``grouped_over``) and only the live ones are shown, so retiring a
member takes it out of its fact (a fact left without a live member goes) and leaves every other fact as
it was; restoring it gives back the facts from before. docs/piles-and-recurrence.md, "Facts", "Retire
and restore"."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.core.facts import Fact, grouped_over, pile_facts
from lessons.core.piles import PileMember

CORPUS = Path(__file__).resolve().parents[2] / "data" / "adbuy-desk.jsonl"


def _invoice_capture() -> dict[str, tuple[int, str]]:
    """The README's pile (ad-buy corpus, desk.adbuy/invoice_capture): ``{hash: (created_at_ms, text)}``."""
    found = {}
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("type") == "lesson" and record["subject"] == "invoice_capture":
            found[record["hash"]] = (record["created_at"], record["text"])
    return found


PILE = _invoice_capture()
TEXTS = {h: text for h, (_at, text) in PILE.items()}


def _by_start(start: str) -> str:
    (digest,) = [h for h, text in TEXTS.items() if text.startswith(start)]
    return digest


def _members(pile: dict[str, tuple[int, str]], retired: set[str] = frozenset()) -> list[PileMember]:
    return [
        PileMember(hash=h, created_at_ms=at, status="retracted" if h in retired else "live", verdict=None)
        for h, (at, _text) in pile.items()
    ]


def _starts(facts: tuple[Fact, ...]) -> list[tuple[tuple[str, ...], bool, tuple[str, ...]]]:
    """Each fact as the first three words of its members' texts, whether an umbrella, and what it covers
    (the covered facts' labels)."""
    labels = {f.name: f.label for f in facts}

    def start(h: str) -> str:
        return " ".join(TEXTS[h].split()[:3])

    return [
        (tuple(start(h) for h in f.members), f.umbrella, tuple(labels[c] for c in f.covers)) for f in facts
    ]


# The README's pile: ten rules, four facts, two umbrellas.
BEFORE = [
    (("Write Gross Amount", 'Strip "$" and'), False, ()),
    (("Fill Advertiser with", "Every invoice needs"), False, ()),
    (("Record Flight From", "Both flight dates"), False, ()),
    (("Copy the Contract", "Record the contract"), False, ()),
    (
        ("From every invoice",),
        True,
        ("Gross Amount", "Advertiser", "Flight From", "Contract Number"),
    ),
    (("Do not skip",), True, ("Advertiser", "Contract Number")),
]


def test_the_readme_pile_before_any_retire():
    assert len(PILE) == 10
    assert _starts(pile_facts(members=_members(PILE), texts=TEXTS)) == BEFORE


def test_retiring_one_restatement_of_gross_amount_keeps_the_other_facts_exactly():
    """The newcomer's report: retiring 'Strip "$"…' turned "10 rules, 4 facts" into "9 rules, 5 facts"
    and split the Advertiser pair (similarity 0.08, held by the Advertiser anchor's weight in the pile).
    Now Gross Amount keeps its other member and nothing else moves, not even a similarity."""
    before = pile_facts(members=_members(PILE), texts=TEXTS)
    strip = _by_start('Strip "$"')
    after = pile_facts(members=_members(PILE, {strip}), texts=TEXTS)
    assert _starts(after) == [(("Write Gross Amount",), False, ())] + BEFORE[1:]
    assert [f for f in after if f.name != before[0].name] == [f for f in before if f.name != before[0].name]
    advertiser = after[1]
    assert (advertiser.label, advertiser.similarity) == ("Advertiser", 0.08)
    assert after[0].members == (_by_start("Write Gross Amount"),) and after[0].similarity is None


def test_retiring_both_members_of_a_fact_removes_it_and_its_umbrellas_cover_the_rest():
    """A fact whose members are all retired disappears; an umbrella that covered it still covers the
    others it states, and its label names those (its anchors are the ones it shares with them)."""
    before = pile_facts(members=_members(PILE), texts=TEXTS)
    gone = {_by_start("Write Gross Amount"), _by_start('Strip "$"')}
    after = pile_facts(members=_members(PILE, gone), texts=TEXTS)
    assert _starts(after) == [
        BEFORE[1],
        BEFORE[2],
        BEFORE[3],
        (("From every invoice",), True, ("Advertiser", "Flight From", "Contract Number")),
        BEFORE[5],
    ]
    assert before[4].label == "Gross Amount, Advertiser, Flight From, Contract Number"
    assert after[3].label == "Advertiser, Flight From, Contract Number"
    assert after[3].anchors == before[4].anchors == ("Advertiser", "Contract Number", "Flight From")


def test_retiring_the_oldest_member_names_the_fact_after_the_oldest_live_one():
    oldest = _by_start("Fill Advertiser")
    after = pile_facts(members=_members(PILE, {oldest}), texts=TEXTS)
    advertiser = next(f for f in after if f.label == "Advertiser" and not f.umbrella)
    every = _by_start("Every invoice needs")
    assert (advertiser.name, advertiser.members, advertiser.keep) == (every, (every,), every)
    # The umbrellas cover it under its new name.
    assert [f.covers.count(every) for f in after if f.umbrella] == [1, 1]


def test_a_retired_umbrella_is_not_shown_and_changes_no_fact():
    before = pile_facts(members=_members(PILE), texts=TEXTS)
    umbrella = _by_start("Do not skip")
    after = pile_facts(members=_members(PILE, {umbrella}), texts=TEXTS)
    assert after == tuple(f for f in before if f.name != umbrella)


def test_no_live_member_no_facts():
    assert pile_facts(members=_members(PILE, set(PILE)), texts=TEXTS) == ()


def test_grouped_over_every_lesson_but_a_rolled_back_consolidation():
    rows = [
        ("a", "live", "lesson", []),
        ("b", "retracted", "lesson", []),  # retired by a reviewer or its host
        ("c", "superseded", "lesson", []),  # an older version, or a consolidation's member
        ("d", "retracted", "consolidation", ["e", "f"]),  # rolled back: e is live again
        ("e", "live", "lesson", []),
        ("f", "superseded", "lesson", []),
        ("g", "retracted", "consolidation", ["c"]),  # retired, its member still superseded
        ("h", "live", "consolidation", ["f"]),
    ]
    assert grouped_over(rows) == {"a", "b", "c", "e", "f", "g", "h"}
    assert grouped_over([]) == set()


def _development_piles() -> list[dict[str, tuple[int, str]]]:
    from bench.restatements_score import load_set

    return [PILE] + [
        {lesson.hash: (lesson.created_at_ms, lesson.text) for lesson in lessons}
        for lessons in load_set().values()
    ]


PILES = _development_piles()


def _shape(fact: Fact, members_of: dict[str, frozenset[str]]) -> tuple:
    """A fact with what it covers named by the covered facts' members (a covered fact's name is its
    oldest live member, which a retire inside it may change)."""
    return (
        fact.members,
        fact.label,
        fact.keep,
        fact.anchors,
        fact.words,
        fact.similarity,
        fact.marked,
        fact.umbrella,
        frozenset(members_of[c] for c in fact.covers),
    )


@settings(max_examples=120, deadline=None)
@given(st.data())
def test_retiring_any_one_member_never_changes_the_grouping_of_the_others(data):
    """Property, over the README's pile and the 12 piles of the development set, with some members
    already retired: retiring one more live member ``x`` takes it out of its fact (the fact goes when it
    was its last live member) and every other fact is exactly as it was; the umbrellas cover the same
    facts (less one left without a live member), with the same label and anchors unless that happened."""
    pile = data.draw(st.sampled_from(PILES), label="pile")
    hashes = sorted(pile)
    retired = set(data.draw(st.lists(st.sampled_from(hashes), max_size=3, unique=True), label="retired"))
    live = [h for h in hashes if h not in retired]
    x = data.draw(st.sampled_from(live), label="x")
    texts = {h: text for h, (_at, text) in pile.items()}
    before = pile_facts(members=_members(pile, retired), texts=texts)
    after = pile_facts(members=_members(pile, retired | {x}), texts=texts)

    (own,) = [f for f in before if x in f.members]
    left = tuple(h for h in own.members if h != x)
    members_before = {f.name: frozenset(f.members) - {x} for f in before}
    members_after = {f.name: frozenset(f.members) for f in after}
    shapes = {f.members: _shape(f, members_after) for f in after}
    assert sorted(h for f in after for h in f.members) == sorted(h for h in live if h != x)
    assert len(after) == len(before) - (not left)
    if left:
        assert left in shapes and not shapes[left][7]
    for fact in before:
        if fact is own:
            continue
        if not fact.umbrella:
            assert fact in after  # exactly, every field
            continue
        was, got = _shape(fact, members_before), shapes[fact.members]
        if frozenset() in was[8]:  # it covered x's fact, gone with x: it covers the others
            assert got[8] == was[8] - {frozenset()} and got[7]
        else:
            assert got == was


def _consolidated(live: bool = True) -> tuple[list[PileMember], dict[str, str], str]:
    """The README's pile after rec-adbuy-consolidate-1 is approved: its ten rules superseded, the
    consolidation live (or retired: ``live`` false). Returns the members, the texts and its hash."""
    (draft,) = [
        json.loads(line)
        for line in CORPUS.read_text(encoding="utf-8").splitlines()
        if '"rec-adbuy-consolidate-1"' in line and json.loads(line).get("type") == "draft"
    ]
    digest = "c" * 64
    members = [
        PileMember(hash=h, created_at_ms=at, status="superseded", verdict=None)
        for h, (at, _t) in PILE.items()
    ]
    at = max(at for at, _t in PILE.values()) + 1
    members.append(
        PileMember(hash=digest, created_at_ms=at, status="live" if live else "retracted", verdict=None)
    )
    return members, {**TEXTS, digest: draft["text"]}, digest


def test_an_approved_consolidation_of_every_member_of_its_facts_is_their_fact_not_an_umbrella():
    """Method 18: without the members it consolidates it was an umbrella covering no fact shown ("1 rule,
    0 facts, 1 rule covers several"); with them it is the one rule of the facts it states."""
    members, texts, digest = _consolidated()
    consolidated = {digest: frozenset(PILE)}
    (fact,) = pile_facts(members=members, texts=texts, consolidated=consolidated)
    assert (fact.name, fact.members, fact.keep, fact.umbrella, fact.covers) == (
        digest,
        (digest,),
        digest,
        False,
        (),
    )
    assert fact.label == "Gross Amount, Advertiser, Contract Number, Client, ISO"
    (umbrella,) = pile_facts(members=members, texts=texts)  # as method 17 showed it
    assert (umbrella.members, umbrella.umbrella, umbrella.covers) == ((digest,), True, ())
    # Retired, it leaves no fact; restored, the same fact again.
    retired, texts, _ = _consolidated(live=False)
    assert pile_facts(members=retired, texts=texts, consolidated=consolidated) == ()
    assert pile_facts(members=members, texts=texts, consolidated=consolidated) == (fact,)


def test_a_consolidation_of_part_of_a_fact_stays_an_umbrella_over_the_facts_shown():
    """A consolidation that states a fact with a member it did not consolidate is an umbrella, as
    before, whatever the status of that member: only its own retire or restore changes it."""
    members, texts, digest = _consolidated()
    gross = _by_start("Write Gross Amount")
    consolidated = {digest: frozenset(PILE) - {gross}}
    for status in ("superseded", "live", "retracted"):
        changed = [replace(m, status=status) if m.hash == gross else m for m in members]
        shown = pile_facts(members=changed, texts=texts, consolidated=consolidated)
        assert shown == pile_facts(members=changed, texts=texts)
        assert [f.umbrella for f in shown if f.name == digest] == [True]
