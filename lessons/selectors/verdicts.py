"""Reading verdicts: the order of a lesson's verdicts, latest first. docs/interchange.md, "verdict: an outcome
of the Verify gate".

The latest verdict is the one with the greatest ``measured_at``; on a tie the greater
``horizon_ms`` (a missing horizon ranks lowest); then the one ingested later.
"""

from __future__ import annotations

from django.db.models import F


def latest_verdict_order() -> list:
    """The ORDER BY that puts a lesson's latest verdict first."""
    return [F("measured_at").desc(), F("horizon_ms").desc(nulls_last=True), F("id").desc()]
