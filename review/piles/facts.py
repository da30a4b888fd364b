"""The pile page's facts (issue 22): the facts line, the mark forms' choices, and what resolve by facts
shows. No query: everything is read from the ``PileDetail`` the page already has. docs/reviewing.md
("Facts").
"""

from __future__ import annotations

from lessons.core.text import hash8
from review.piles.forms import MergeForm, SplitForm
from review.piles.rows import fact_size
from review.piles.selectors import PileDetail
from review.web.format import retire_preview

# The pile page's first line about its facts (issue 22, Build 3): "10 rules, 4 facts, 2 rules cover several".
FACTS_LINE = "{rules} rule{rs}, {facts} fact{fs}, {umbrellas} rule{us} cover{uv} several"
# Resolve by facts selects; the reviewer still writes the reason and confirms.
RESOLVE_READY = (
    "Resolve by facts: {n} rule{s} selected to retire, one kept of each fact; umbrellas left alone."
    " Write the reason and press Retire to confirm."
)
RESOLVE_NOTHING = "Nothing to resolve: every fact of this pile already has one rule."


def facts_line(*, rules: int, facts: int, umbrellas: int) -> str:
    """``FACTS_LINE`` with singular forms: "10 rules, 4 facts, 2 rules cover several", "1 rule, 1 fact,
    0 rules cover several"."""

    def s(n: int) -> str:
        return "" if n == 1 else "s"

    return FACTS_LINE.format(
        rules=rules,
        rs=s(rules),
        facts=facts,
        fs=s(facts),
        umbrellas=umbrellas,
        us=s(umbrellas),
        uv="s" if umbrellas == 1 else "",
    )


def fact_choices(detail: PileDetail) -> list[tuple[str, str]]:
    return [(f.name, f"{f.label} ({hash8(f.name)}, {fact_size(f.fact)})") for f in detail.facts]


def member_choices(detail: PileDetail) -> list[tuple[str, str]]:
    return [
        (x.hash, f"{hash8(x.hash)}, of {f.label}")
        for f in detail.facts
        if len(f.lessons) > 1
        for x in f.lessons
    ]


def mark_forms(detail: PileDetail, data=None, initial: dict | None = None) -> dict:
    """The merge and split forms (``data`` binds the one ``initial`` does not name; ``initial``:
    ``{"merge": {...}}`` or ``{"split": {...}}``)."""
    initial = initial or {}
    return {
        "merge_form": MergeForm(data, facts=fact_choices(detail), initial=initial.get("merge")),
        "split_form": SplitForm(data, members=member_choices(detail), initial=initial.get("split")),
    }


def resolve_context(detail: PileDetail, picked: list[str]) -> dict:
    """What the resolve-by-facts panel shows: the selection (``lessons.core.resolve``), the facts kept
    (label, keeper), the umbrellas left alone (hash, the labels of what each covers) and the live count
    after against the budget."""
    resolution = detail.resolution(picked)
    n = len(resolution.retire)
    return {
        "resolution": resolution,
        "kept": [(detail.label_of(detail.fact_of(h).name), h) for h in resolution.keep],
        "umbrellas": [
            (h, [detail.label_of(c) for c in detail.fact_of(h).covers]) for h in resolution.umbrellas
        ],
        "preview": retire_preview(detail.count, detail.max_active, detail.budget_enabled, n),
        "ready": RESOLVE_READY.format(n=n, s="" if n == 1 else "s") if n else RESOLVE_NOTHING,
    }
