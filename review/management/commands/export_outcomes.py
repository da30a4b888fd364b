"""``manage.py export_outcomes [--format jsonl|csv] [--host NAME]``.

Streams the decisions' outcomes (derived, outside the hash chain) to stdout in seq order.
docs/decisions.md, "Outcomes"; README.md, "Commands".
"""

from __future__ import annotations

from lessons.management.base import Command as BaseCommand
from lessons.management.base import write_stream
from review.management.lookups import LookupRefused, host_by_name
from review.models import DecisionOutcome
from review.outcomes.exports import outcomes_csv, outcomes_jsonl


class Command(BaseCommand):
    help = "Export the decisions' outcomes as JSON Lines or CSV, in seq order."

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
        parser.add_argument("--host", help="only the outcomes of decisions on this host")

    def handle(self, *args, format, host, **options):
        try:
            host_obj = host_by_name(host)
        except LookupRefused as exc:
            self.fail(str(exc))
        rows = DecisionOutcome.objects.all()
        if host_obj is not None:
            rows = rows.filter(host=host_obj.name)
        write_stream(self, outcomes_csv(rows) if format == "csv" else outcomes_jsonl(rows))
