"""``manage.py export_decisions [--format jsonl|csv] [--since SEQ] [--host NAME]``.

Streams the decision records in ``seq`` order to stdout (chunks of 2000 rows: memory stays flat).
``--since SEQ`` exports the records after ``SEQ`` (``seq > SEQ``), as a host that has applied up to
``SEQ`` asks for. docs/decisions.md, "Exports"; README.md, "Commands".
"""

from __future__ import annotations

from lessons.management.base import Command as BaseCommand
from lessons.management.base import UsageError, write_stream
from review.log.exports import decisions_csv, decisions_jsonl
from review.management.lookups import LookupRefused, host_by_name
from review.models import Decision

SINCE_NEGATIVE = "--since: expected a seq of 0 or more, got {since}"


class Command(BaseCommand):
    help = "Export the decision log as JSON Lines or CSV, in seq order."

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
        parser.add_argument(
            "--since", type=int, metavar="SEQ", help="only records with a seq greater than SEQ"
        )
        parser.add_argument("--host", help="only decisions on this host")

    def handle(self, *args, format, since, host, **options):
        if since is not None and since < 0:
            raise UsageError(SINCE_NEGATIVE.format(since=since))
        try:
            host_obj = host_by_name(host)
        except LookupRefused as exc:
            self.fail(str(exc))
        decisions = Decision.objects.all()
        if since is not None:
            decisions = decisions.filter(seq__gt=since)
        if host_obj is not None:
            decisions = decisions.filter(host=host_obj.name)
        lines = decisions_csv(decisions) if format == "csv" else decisions_jsonl(decisions)
        write_stream(self, lines)
