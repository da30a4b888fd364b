"""``manage.py export_restatements [--format jsonl|csv] [--host NAME]``.

Streams the reviewers' restatement marks (issue 22, Build 2) to stdout, by host, oldest first (chunks of
2000 rows: memory stays flat). A mark is not a decision: it is in no hash chain and has no seq. Fields:
``review.hosts.marks.MARK_FIELDS``. docs/reviewing.md ("Correcting the facts").
"""

from __future__ import annotations

from review.hosts.marks import marks_rows, restatements_csv, restatements_jsonl
from review.management.exports import ExportCommand


class Command(ExportCommand):
    help = "Export the reviewers' restatement marks as JSON Lines or CSV, by host, oldest first."
    host_help = "only the marks of this host"
    formats = {"jsonl": restatements_jsonl, "csv": restatements_csv}

    def rows(self, *, host, **options):
        return marks_rows(host=host)
