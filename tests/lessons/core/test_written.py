"""The pure rules of a reviewer-written consolidation: the prefill, the text limits, the waivers, the id."""

from __future__ import annotations

from lessons.core.written import (
    TEXT_EMPTY,
    TEXT_HAS_NUL,
    TEXT_TOO_LONG,
    WAIVER_MISSING,
    WAIVER_TOO_LONG,
    Anchor,
    FactLine,
    check_text,
    check_waivers,
    dropped_anchors,
    prefill,
    written_draft_id,
)


def test_the_prefill_is_one_line_per_fact_leaving_out_umbrellas():
    facts = [
        FactLine("a" * 64, "Gross first."),
        FactLine("b" * 64, "All five.", umbrella=True),
        FactLine("c" * 64, "Dates."),
    ]
    assert prefill(facts) == "Gross first.\nDates."
    assert prefill([]) == ""


def test_the_lines_are_joined_as_one_normalized_lesson():
    assert check_text("  One line.\n\nTwo\tlines. ", engine="interchange") == ("One line. Two lines.", [])


def test_the_limit_is_the_engines():
    assert check_text("x" * 1000, engine="interchange") == ("x" * 1000, [])
    assert check_text("x" * 1001, engine="interchange")[1] == [
        TEXT_TOO_LONG.format(n=1001, engine="interchange", max=1000)
    ]
    assert check_text("x" * 140, engine="altimate")[1] == []
    assert check_text("x" * 141, engine="altimate")[1] == [
        TEXT_TOO_LONG.format(n=141, engine="altimate", max=140)
    ]


def test_an_empty_text_or_a_nul_is_refused():
    assert check_text(" \u3000\n", engine="interchange") == ("", [TEXT_EMPTY])
    assert check_text("a\x00b", engine="interchange") == ("", [TEXT_HAS_NUL])


def test_each_dropped_anchor_needs_a_reason_and_other_waivers_are_dropped():
    dropped = [
        Anchor("at", True),
        Anchor("cents", True),
        Anchor("to_utc", True),
        Anchor("Gross Amount", False),
    ]
    waivers = {"at": " style guide ", "cents": "x" * 501, "zz": "?", "gross-amount": "Said by the keeper."}
    kept, errors = check_waivers(dropped, waivers)
    assert kept == {"`at`": "style guide", '"Gross Amount"': "Said by the keeper."}
    assert errors == [
        WAIVER_TOO_LONG.format(anchor="`cents`", n=501, max=500),
        WAIVER_MISSING.format(anchor="`to_utc`"),
    ]


ADVERTISER = 'Every invoice needs an Advertiser value; take it from the "Advertiser" or "Client" line.'
GROSS = "Write Gross Amount as a bare number with two decimals, no currency symbol."


def test_backticked_and_named_anchors_the_text_drops_are_listed_with_their_members():
    members = [("a" * 64, ADVERTISER), ("b" * 64, GROSS), ("c" * 64, "Wrap columns in `to_utc` and `at`.")]
    dropped = dropped_anchors(
        "Fill Advertiser from the order; write the gross amount bare; use `at`.", members
    )
    assert [(a.label, a.backticked, a.key, holders) for a, holders in dropped] == [
        ("to_utc", True, "to_utc", ("c" * 64,)),
        ("Client", False, "client", ("a" * 64,)),
    ]  # "Gross Amount" stands in the text (any case); "Write Gross Amount" is named by "Gross Amount"


def test_a_named_anchor_is_dropped_when_its_words_are_not_together():
    dropped = dropped_anchors("Write the amount, gross, bare.", [("b" * 64, GROSS)])
    assert [(a.label, a.key) for a, _ in dropped] == [("Gross Amount", "gross-amount")]


def test_the_draft_id_names_its_text_members_author_and_time():
    args = {
        "namespace": "dbt",
        "subject": "staging",
        "text": "A  b",
        "author": "user:rita",
        "created_at_ms": 1,
    }
    one = written_draft_id(supersedes=["b" * 64, "a" * 64], **args)
    assert one == written_draft_id(supersedes=["a" * 64, "b" * 64], **{**args, "text": "A b"})
    assert one.startswith("written-") and len(one) == 24
    assert one != written_draft_id(supersedes=["a" * 64, "b" * 64], **{**args, "created_at_ms": 2})
