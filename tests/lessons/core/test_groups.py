"""Restatement groups (lessons.core.groups): the pair rule, union-find components, the keep rule, and
what the rule gives on the corpora's two piles."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.core.groups import group_of, restate, restatement_groups
from lessons.core.piles import PileMember


def _m(h: str, at: int, verdict: str | None = None) -> PileMember:
    return PileMember(hash=h, created_at_ms=at, status="live", verdict=verdict)


def test_jaccard_at_exactly_three_fifths_restates_and_below_does_not():
    # {alpha beta gamma delta} vs {alpha beta gamma epsilon}: 3 shared / 5 in the union = 0.6.
    assert restate(a="alpha beta gamma delta", b="alpha beta gamma epsilon") is True
    # 3 shared / 6 in the union = 0.5.
    assert restate(a="alpha beta gamma delta", b="alpha beta gamma epsilon zeta") is False


def test_shared_full_anchor_needs_another_shared_content_token():
    assert restate(a="Never drop `to_utc` in staging", b="Keep `to_utc` for staging models now") is True
    # The anchor alone (no other shared content token) is not a restatement.
    assert restate(a="Never drop `to_utc` here", b="Keep `to_utc` always, says ops") is False
    # An affix anchor is no full anchor.
    assert (
        restate(a="Columns named `_at` hold stamps", b="Prefer `_at` columns over stamps tables wide")
        is False
    )


def test_groups_are_connected_components_named_by_the_oldest_in_rule_5_order():
    texts = {
        "c": "alpha beta gamma delta",  # oldest, restates b
        "b": "alpha beta gamma epsilon",  # restates a too: the chain joins all three
        "a": "beta gamma epsilon zeta",
        "d": "unrelated words entirely here",
    }
    members = [_m("a", 3), _m("d", 4), _m("b", 2), _m("c", 1)]
    groups = restatement_groups(members=members, texts=texts)
    assert [(g.name, g.members, g.keep, g.others) for g in groups] == [
        ("c", ("c", "b", "a"), "a", ("c", "b")),
        ("d", ("d",), "d", ()),
    ]
    assert groups[0].shared == frozenset({"alpha", "beta", "gamma", "epsilon"})
    assert groups[1].shared == frozenset()
    assert group_of(groups) == {"c": "c", "b": "c", "a": "c", "d": "d"}


@pytest.mark.parametrize(
    ("verdicts", "kept"),
    [
        # held beats a newer regressed and a newer unmeasured.
        (("held", "regressed", None), "x1"),
        # any verdict beats not measured (none, or "unmeasured"), whatever their age.
        (("drifted", "unmeasured", None), "x1"),
        # equal tiers: the newest.
        (("held", "held", "regressed"), "x2"),
        ((None, "unmeasured", None), "x3"),
    ],
)
def test_keep_rule_held_then_measured_then_not_measured_then_newest(verdicts, kept):
    texts = dict.fromkeys(("x1", "x2", "x3"), "same words repeated here")
    members = [_m(f"x{i}", i, v) for i, v in enumerate(verdicts, start=1)]
    (group,) = restatement_groups(members=members, texts=texts)
    assert group.keep == kept
    assert group.others == tuple(h for h in ("x1", "x2", "x3") if h != kept)


@pytest.mark.django_db
def test_corpora_piles_give_these_exact_groups(corpora):
    from lessons.selectors.piles import piles_list

    got = {}
    for entity in piles_list():
        texts = {lesson.hash: lesson.text for lesson in entity.lessons}
        groups = restatement_groups(members=entity.pile.members, texts=texts)
        got[entity.pile.subject] = [tuple(h[:8] for h in g.members) for g in groups]
    # adbuy's ten rules state four facts in paraphrase (no 0.6 token overlap, no backticked anchors):
    # the lexical rule finds no restatement there; every member is a group of one.
    assert got == {
        "invoice_capture": [
            ("36727f00",),
            ("cc844636",),
            ("531d6e53",),
            ("ccefde1b",),
            ("e21f022e",),
            ("e0b6ccc3",),
            ("353ed7f4",),
            ("ba3f6459",),
            ("0d3dae1c",),
            ("3d46cb35",),
        ],
        "revenue_models": [
            ("88129015",),
            ("93607270",),
            ("be490fe0", "590b48ce"),
            ("efd23782",),
            ("15329f64",),
            ("793e0c1c",),
            ("c586a834",),
        ],
    }


@pytest.mark.django_db
def test_piles_json_names_each_members_group_in_a_constant_number_of_queries(corpora):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from lessons.selectors.piles import piles_json

    with CaptureQueriesContext(connection) as queries:
        piles = piles_json()["piles"]
    assert len(queries) == 4  # piles_list's four queries: grouping reads nothing more
    revenue = next(p for p in piles if p["subject"] == "revenue_models")
    grouped = {m["hash"][:8]: m["group"][:8] for m in revenue["members"] if m["group"] != m["hash"]}
    assert grouped == {"590b48ce": "be490fe0"}


def test_marked_pieces_mark_whole_runs_case_insensitively_and_join_back():
    from lessons.core.groups import marked_pieces

    text = "Filter `is_internal` filters; Filter!"
    pieces = marked_pieces(text, frozenset({"filter", "is_internal"}))
    assert pieces == (
        ("Filter", True),
        (" `", False),
        ("is_internal", True),
        ("` filters; ", False),
        ("Filter", True),
        ("!", False),
    )
    assert "".join(p for p, _ in pieces) == text


def test_without_shared_words_the_text_is_one_unmarked_piece_and_an_empty_text_none():
    from lessons.core.groups import marked_pieces

    assert marked_pieces("Filter `is_internal`!", frozenset()) == (("Filter `is_internal`!", False),)
    assert marked_pieces("", frozenset()) == ()
    assert marked_pieces("", frozenset({"filter"})) == ()


def test_each_text_is_tokenized_a_bounded_number_of_times_not_once_per_pair(monkeypatch):
    # a pile of 200 took seconds: every pair tokenized both its texts again (n² tokenizations)
    import lessons.core.groups as groups

    calls = []
    real = groups.content_tokens
    monkeypatch.setattr(groups, "content_tokens", lambda text: calls.append(text) or real(text))
    members = [_m(f"x{i:02d}", i, None) for i in range(30)]
    texts = {m.hash: f"rule {i} about field_{i} and its value" for i, m in enumerate(members)}
    groups.restatement_groups(members=members, texts=texts)
    assert len(calls) == 30  # once each: the groups' shared words reuse the tokens the pairs were compared by


@pytest.fixture
def compared(monkeypatch) -> dict[str, list]:
    """What the groups work on: ``profiles`` (how many profiles each ``_restating_pairs`` call got),
    ``pairs`` (the restating pairs it found) and ``additions`` (its bit-plane additions, one per
    member and token)."""
    import lessons.core.groups as groups

    seen: dict[str, list] = {"profiles": [], "pairs": [], "additions": []}
    real_pairs, real_add = groups._restating_pairs, groups._add

    def pairs(profiles):
        seen["profiles"].append(len(profiles))
        for pair in real_pairs(profiles):
            seen["pairs"].append(pair)
            yield pair

    def add(planes, bits):
        seen["additions"].append(bits)
        real_add(planes, bits)

    monkeypatch.setattr(groups, "_restating_pairs", pairs)
    monkeypatch.setattr(groups, "_add", add)
    return seen


def test_words_every_member_has_cost_one_addition_per_member_and_token_not_a_comparison_per_pair(compared):
    # Issue 10: 200 members all saying "check" and "rule" compared all 19,900 pairs (~40 ms of the pile
    # page at 1M), then 7,700 candidate pairs of the bench's pile (~7 ms). The shared counts of all later
    # members are added at once: 4 content tokens x 200 members, whatever the pairs sharing a word.
    members = [_m(f"x{i:03d}", i) for i in range(200)]
    texts = {m.hash: f"check the rule on field_{i} of table_{i // 2}" for i, m in enumerate(members)}
    found = restatement_groups(members=members, texts=texts)
    assert len(compared["additions"]) == 800
    assert compared["pairs"] == [(i, i + 1) for i in range(0, 200, 2)]  # each pair of a table: 3 of 5 words
    assert len(found) == 100


def test_members_with_the_same_tokens_are_one_group_without_comparing_their_pairs(compared):
    # Issue 13's 200k-line run: 1,000 members per entity that differ only in numbers made every pair a
    # candidate (499,500 comparisons per entity, 68 s of entity counts at 100k lines). Same tokens and
    # anchors restate at Jaccard 1, so each such set is joined to its oldest and compared once.
    members = [_m(f"x{i:04d}", i) for i in range(1000)]
    texts = {m.hash: f"Bulk lesson {i}: check field {i} before saving." for i, m in enumerate(members)}
    texts["x0500"] = "Bulk lesson: check the field before saving twice."  # one more token: compared once
    texts["x0700"] = "."  # no content token: restates nothing
    found = restatement_groups(members=members, texts=texts)
    assert (compared["profiles"], compared["pairs"]) == ([2], [(0, 1)])
    assert [(g.name, len(g.members)) for g in found] == [("x0000", 999), ("x0700", 1)]


WORDS = (
    "revenue",
    "refunds",
    "net_revenue",
    "`net_revenue`",
    "report",
    "gross",
    "orders",
    "the",
    "`to_utc`",
    "utc",
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join), min_size=1, max_size=12)
)
def test_the_groups_are_the_components_of_the_pair_rule_over_every_pair(texts_drawn):
    # The pairs are found by counting shared tokens in bit planes, never compared one by one: the
    # components must be those of the rule applied to every pair.
    _assert_components_of_the_rule_over_every_pair(texts_drawn)


# Twelve words (two of them anchors) in texts of up to 14 words: overlaps near 3/5 at every set size, where
# a threshold one token off would miss a pair or add one.
WIDE = (*(f"word{i}" for i in range(10)), "`word1`", "`word2`")


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(WIDE), min_size=0, max_size=14).map(" ".join), min_size=2, max_size=16)
)
def test_the_groups_are_those_of_every_pair_over_sets_of_every_size(texts_drawn):
    _assert_components_of_the_rule_over_every_pair(texts_drawn)


# Forty words (four of them anchors) in texts of up to 40 words, up to 80 members: shared counts past 15
# (a fifth bit plane) and member masks longer than one machine word.
LONG = (*(f"term{i}" for i in range(36)), "`term1`", "`term2`", "`term3`", "`_at`")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(LONG), min_size=0, max_size=40).map(" ".join), min_size=60, max_size=80)
)
def test_the_groups_are_those_of_every_pair_in_long_texts_of_large_piles(texts_drawn):
    _assert_components_of_the_rule_over_every_pair(texts_drawn)


def _assert_components_of_the_rule_over_every_pair(texts_drawn: list[str]) -> None:
    """The groups of members ``h00``, ``h01``, ... with ``texts_drawn`` are the components of ``restate``
    applied to every pair."""
    members = [_m(f"h{i:02d}", i) for i in range(len(texts_drawn))]
    texts = {m.hash: t for m, t in zip(members, texts_drawn, strict=True)}
    parent = {m.hash: m.hash for m in members}

    def root(h):
        while parent[h] != h:
            h = parent[h]
        return h

    for i, a in enumerate(members):
        for b in members[i + 1 :]:
            if restate(a=texts[a.hash], b=texts[b.hash]):
                parent[max(root(a.hash), root(b.hash))] = min(root(a.hash), root(b.hash))
    brute: dict[str, list[str]] = {}
    for m in members:
        brute.setdefault(root(m.hash), []).append(m.hash)
    found = restatement_groups(members=members, texts=texts)
    assert sorted(g.members for g in found) == sorted(tuple(v) for v in brute.values())
