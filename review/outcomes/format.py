"""How an outcome is shown: a badge in the log's first cell and on the pages of review/outcomes/.
docs/decisions.md, "Outcomes"."""

from __future__ import annotations

from django.utils.safestring import SafeString

from review.models import Decision, DecisionOutcome
from review.web.format import html_format
from review.web.links import route_path

BADGE = '<span class="badge outcome outcome-{kind}">{label}</span>'
CELL = '<a href="{href}">{seq}</a>{badge}'
LABELS = dict(DecisionOutcome.Kind.choices)


def outcome_of(decision: Decision) -> DecisionOutcome | None:
    """The decision's stored outcome, or None (not judged: a budget change or a rejected draft, or not
    computed yet). Reads the joined row (``select_related("outcome")``): no query."""
    try:
        return decision.outcome
    except DecisionOutcome.DoesNotExist:
        return None


def outcome_badge(outcome: DecisionOutcome | None) -> SafeString:
    """The outcome's badge (empty for None)."""
    if outcome is None:
        return SafeString("")
    return html_format(BADGE, kind=outcome.outcome, label=LABELS.get(outcome.outcome, outcome.outcome))


def decision_cell(decision: Decision) -> SafeString:
    """The log's first cell: the seq linked to the decision's page, then its outcome's badge."""
    href = route_path("review:decision", seq=str(decision.seq))
    return html_format(CELL, href=href, seq=decision.seq, badge=outcome_badge(outcome_of(decision)))
