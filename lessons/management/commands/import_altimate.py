"""``manage.py import_altimate PATH --host NAME [--dry-run]``. docs/importers.md, README.md, "Commands".

Translates an altimate-code learn store into interchange records and ingests them through the
same code as ``manage.py ingest``; prints the import report and the importer's own counts.
"""

from __future__ import annotations

from pathlib import Path

from lessons.importers.common import SourceError
from lessons.importers.run import altimate_prepare
from lessons.management.base import Command as BaseCommand
from lessons.management.base import check_host
from lessons.management.importers import add_import_arguments, import_prepared


class Command(BaseCommand):
    help = "Import an altimate-code learn store (a project root or its .altimate-code/learn/ folder)."
    path_options = ("path",)  # files: any bytes the file system takes

    def add_arguments(self, parser):
        parser.add_argument("path", metavar="PATH", help="a project root or its .altimate-code/learn/ folder")
        add_import_arguments(parser, host_help="the host the store's lessons belong to")

    def handle(self, *args, path, host, dry_run, **options):
        check_host(host)
        try:
            prepared = altimate_prepare(path=Path(path), host=host)
        except SourceError as exc:
            self.fail(str(exc))
        import_prepared(self, prepared, dry_run=dry_run)
