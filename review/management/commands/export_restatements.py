"""``manage.py export_restatements [--format jsonl|csv] [--host NAME]``.

Streams the reviewers' restatement marks (issue 22, Build 2) to stdout, by host, oldest first (chunks of
2000 rows: memory stays flat). A mark is not a decision: it is in no hash chain and has no seq. Fields:
``review.hosts.marks.MARK_FIELDS``. docs/reviewing.md ("Correcting the facts").
"""

from __future__ import annotations

from lessons.management.base import Command as BaseCommand
from lessons.management.base import write_stream
from review.hosts.marks import marks_rows, restatements_csv, restatements_jsonl
from review.management.lookups import LookupRefused, host_by_name


class Command(BaseCommand):
    help = "Export the reviewers' restatement marks as JSON Lines or CSV, by host, oldest first."

    def add_arguments(self, parser):
        parser.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
        parser.add_argument("--host", help="only the marks of this host")

    def handle(self, *args, format, host, **options):
        try:
            host_obj = host_by_name(host)
        except LookupRefused as exc:
            self.fail(str(exc))
        marks = marks_rows(host=host_obj)
        lines = restatements_csv(marks) if format == "csv" else restatements_jsonl(marks)
        write_stream(self, lines)
