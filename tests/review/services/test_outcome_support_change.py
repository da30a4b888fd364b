"""``OUTCOME_SUPPORT_SESSIONS`` (an environment setting) changed between two refreshes: every stored
outcome is judged again by it, as ``manage.py outcomes`` would judge it, not only those the new batch can
have changed (a supported retire judged by the old count kept its kind and sentence). docs/decisions.md,
"Outcomes"."""

from __future__ import annotations

from datetime import timedelta

import pytest

from review.models import DecisionOutcome
from review.services.decisions import lessons_retire
from review.services.outcomes import outcomes_refresh
from tests.builders import exposure
from tests.review.services.test_outcome_charges import (
    HOST,
    T0,
    TEXTS,
    Scenario,
    assert_as_if_read_afresh,
    h,
    iso,
    kept_state,
)

ADVERTISER = h("invoice_capture", TEXTS["invoice_capture"][4])  # no correction is ever on its topic
PO = h("po_matching", TEXTS["po_matching"][0])


def sessions_after(ingest, names: list[str], hours: float) -> None:
    """An exposure in each of ``names``, ``hours`` after T0: sessions with activity after the retire."""
    records = [
        exposure(host=HOST, session=s, shown_at=iso(T0 + timedelta(hours=hours)), lesson=PO) for s in names
    ]
    assert ingest(records).ok


@pytest.mark.parametrize(
    ("then", "now", "kind", "why"),
    [
        (3, 6, "too_early", "5 sessions after the retire (6 needed), corrected on its topic in 0"),
        (3, 2, "supported", "no correction on its topic in at least 2 sessions after the retire"),
    ],
)
def test_a_changed_support_count_judges_the_supported_retires_again(
    ingest, reviewer, settings, then, now, kind, why
):
    settings.OUTCOME_SUPPORT_SESSIONS = then
    scenario = Scenario(0, ingest, reviewer)
    (decision,) = lessons_retire(host=scenario.host, hashes=[ADVERTISER], actor=reviewer, reason="x", now=T0)
    sessions_after(ingest, ["a", "b", "c", "d"], 5)
    row = DecisionOutcome.objects.get(decision=decision)
    assert (row.outcome, row.evidence["why"]) == (
        "supported",
        f"no correction on its topic in at least {then} sessions after the retire",
    )
    settings.OUTCOME_SUPPORT_SESSIONS = now
    sessions_after(ingest, ["e"], 6)  # a batch that changes no retired lesson's corrections
    row = DecisionOutcome.objects.get(decision=decision)
    assert (row.outcome, row.sessions_after, row.evidence["why"]) == (kind, 5, why)
    assert_as_if_read_afresh(scenario.host)
    kept = kept_state(scenario.host)
    assert outcomes_refresh(host=scenario.host, full=True) == 0
    assert kept_state(scenario.host) == kept
