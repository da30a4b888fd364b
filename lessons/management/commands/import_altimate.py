"""``manage.py import_altimate PATH --host NAME [--dry-run]``. docs/importers.md, README.md, "Commands".

Translates an altimate-code learn store into interchange records and ingests them through the
same code as ``manage.py ingest``; prints the import report and the importer's own counts.
"""

from __future__ import annotations

from pathlib import Path

from lessons.importers.common import SourceError
from lessons.importers.run import altimate_prepare, execute
from lessons.management.base import Command as BaseCommand
from lessons.management.base import check_host, write_result
from lessons.management.progress import progress_bar


class Command(BaseCommand):
    help = "Import an altimate-code learn store (a project root or its .altimate-code/learn/ folder)."

    def add_arguments(self, parser):
        parser.add_argument("path", metavar="PATH", help="a project root or its .altimate-code/learn/ folder")
        parser.add_argument("--host", required=True, help="the host the store's lessons belong to")
        parser.add_argument(
            "--dry-run", action="store_true", help="translate, validate and report; write nothing"
        )

    def handle(self, *args, path, host, dry_run, **options):
        check_host(host)
        try:
            prepared = altimate_prepare(path=Path(path), host=host)
        except SourceError as exc:
            self.fail(str(exc))
        with progress_bar([prepared.source], stream=self.stderr._out) as progress:
            result = execute(prepared, dry_run=dry_run, progress=progress)
        write_result(self, result)
