"""The pure parts of the draft page: per-member coverage summaries and chips, and the prompt preview.

No database. spec: docs/piles-and-recurrence.md ("Tokens"), docs/piles-and-recurrence.md (rules 3-5).
"""

from __future__ import annotations

from dataclasses import dataclass

from lessons.core.coverage import draft_coverage
from review.drafts.selectors import (
    Chip,
    PromptBlock,
    PromptLine,
    coverage_chips,
    coverage_summary,
    prompt_after_approval,
)

L1 = "Convert `*_at` timestamp columns with `to_utc` in staging models."


def _one(member_text: str, draft_text: str, verdict: str | None = "held"):
    return draft_coverage(draft_text=draft_text, members=[("h1", member_text, verdict)])[0]


def test_summary_names_the_dropped_anchor_of_the_spec_example():
    cov = _one(L1, "Convert timestamp columns in staging models to UTC.")
    assert coverage_summary(cov) == "keeps 5 of 6 tokens; drops anchor `to_utc`"


def test_summary_names_kept_anchors_when_none_is_dropped():
    cov = _one(L1, "Convert timestamp columns with `to_utc` in staging models.")
    assert coverage_summary(cov) == "keeps 6 of 6 tokens; keeps anchor `to_utc`"


def test_summary_without_anchors_counts_tokens_only():
    cov = _one("Copy the Contract Number character for character.", "Contract Number verbatim.")
    assert coverage_summary(cov) == "keeps 2 of 4 tokens"


def test_summary_counts_an_anchor_that_is_no_content_token():
    # `id` is too short to be a content token but is a full anchor: it counts once, as a word.
    cov = _one("Keep the `id` column of invoices.", "Keep invoices.")
    assert coverage_summary(cov) == "keeps 2 of 4 tokens; drops anchor `id`"


def test_chips_show_an_anchor_once_and_anchors_first():
    kept, dropped = coverage_chips(_one(L1, "Convert timestamp columns in staging models to UTC."))
    assert kept == (
        Chip("columns", False, True),
        Chip("convert", False, True),
        Chip("models", False, True),
        Chip("staging", False, True),
        Chip("timestamp", False, True),
    )
    assert dropped == (Chip("to_utc", True, False),)


@dataclass
class _Row:
    hash: str
    text: str


def test_prompt_after_approval_keeps_unsuperseded_lessons_and_adds_the_consolidation_last():
    live = [_Row("a" * 64, "first"), _Row("b" * 64, "second"), _Row("c" * 64, "third")]
    lines = prompt_after_approval(live, supersedes=["a" * 64, "c" * 64], text="merged")
    assert lines == (PromptLine("b" * 64, "second"), PromptLine(None, "merged", new=True))


def test_budget_label_over_then_within():
    over = PromptBlock(tuple(PromptLine(str(i), "x") for i in range(10)), max_active=8, budget_enabled=True)
    within = PromptBlock((PromptLine(None, "x", new=True),), max_active=8, budget_enabled=True)
    assert (over.budget_label, within.budget_label) == ("10 / 8 over budget", "1 / 8 within budget")


def test_exactly_max_active_is_within_budget():
    block = PromptBlock(tuple(PromptLine(str(i), "x") for i in range(8)), max_active=8, budget_enabled=True)
    assert block.budget_label == "8 / 8 within budget"


def test_budget_label_when_the_budget_is_off():
    block = PromptBlock(tuple(PromptLine(str(i), "x") for i in range(10)), max_active=8, budget_enabled=False)
    assert block.budget_label == "10 / 8, budget not enabled"


def test_token_estimate_is_characters_over_four_rounded_up():
    # "- abcd\n- efg" is 12 characters: 3 tokens; one more character makes 4.
    block = PromptBlock((PromptLine("1", "abcd"), PromptLine("2", "efg")), max_active=8, budget_enabled=True)
    longer = PromptBlock(
        (PromptLine("1", "abcde"), PromptLine("2", "efg")), max_active=8, budget_enabled=True
    )
    assert (block.chars, block.tokens_estimate) == (12, 3)
    assert (longer.chars, longer.tokens_estimate) == (13, 4)
