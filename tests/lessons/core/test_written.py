"""The pure rules of a reviewer-written consolidation: the prefill, the text limits, the waivers, the id."""

from __future__ import annotations

from lessons.core.written import (
    TEXT_EMPTY,
    TEXT_HAS_NUL,
    TEXT_TOO_LONG,
    WAIVER_MISSING,
    WAIVER_TOO_LONG,
    FactLine,
    check_text,
    check_waivers,
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
    kept, errors = check_waivers(
        ["to_utc", "at", "cents"], {"at": " style guide ", "cents": "x" * 501, "zz": "?"}
    )
    assert kept == {"at": "style guide"}
    assert errors == [
        WAIVER_TOO_LONG.format(anchor="cents", n=501, max=500),
        WAIVER_MISSING.format(anchor="to_utc"),
    ]


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
