"""``manage.py export_outcomes [--format jsonl|csv] [--host NAME]``.

Streams the decisions' outcomes (derived, outside the hash chain) to stdout in seq order.
docs/decisions.md, "Outcomes"; README.md, "Commands".
"""

from __future__ import annotations

from review.management.exports import ExportCommand
from review.models import DecisionOutcome
from review.outcomes.exports import outcomes_csv, outcomes_jsonl


class Command(ExportCommand):
    help = "Export the decisions' outcomes as JSON Lines or CSV, in seq order."
    host_help = "only the outcomes of decisions on this host"
    formats = {"jsonl": outcomes_jsonl, "csv": outcomes_csv}

    def rows(self, *, host, **options):
        rows = DecisionOutcome.objects.all()
        if host is not None:
            rows = rows.filter(host=host.name)
        return rows
