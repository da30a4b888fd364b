"""``manage.py export_decisions [--format jsonl|csv] [--since SEQ] [--host NAME]``.

Streams the decision records in ``seq`` order to stdout (chunks of 2000 rows: memory stays flat).
``--since SEQ`` exports the records after ``SEQ`` (``seq > SEQ``), as a host that has applied up to
``SEQ`` asks for. docs/decisions.md, "Exports"; README.md, "Commands".
"""

from __future__ import annotations

from lessons.management.base import UsageError
from review.log.exports import decisions_csv, decisions_jsonl
from review.management.exports import ExportCommand
from review.models import Decision

SINCE_NEGATIVE = "--since: expected a seq of 0 or more, got {since}"


class Command(ExportCommand):
    help = "Export the decision log as JSON Lines or CSV, in seq order."
    host_help = "only decisions on this host"
    formats = {"jsonl": decisions_jsonl, "csv": decisions_csv}

    def add_filters(self, parser):
        parser.add_argument(
            "--since", type=int, metavar="SEQ", help="only records with a seq greater than SEQ"
        )

    def handle(self, *args, since, **options):
        if since is not None and since < 0:
            raise UsageError(SINCE_NEGATIVE.format(since=since))
        super().handle(*args, since=since, **options)

    def rows(self, *, host, since, **options):
        decisions = Decision.objects.all()
        if since is not None:
            decisions = decisions.filter(seq__gt=since)
        if host is not None:
            decisions = decisions.filter(host=host.name)
        return decisions
