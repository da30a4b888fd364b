"""``manage.py import_areev FILE... --host NAME [--dry-run] [--map FILE]``. docs/importers.md, README.md,
"Commands".

Accepts lesson grains, ``loop.lesson_pile/1`` findings, outcome rows (with ``--map``) and
consolidation drafts, detected per object; prints the import report and the importer's counts.
"""

from __future__ import annotations

from pathlib import Path

from lessons.importers.areev import load_map
from lessons.importers.common import SourceError
from lessons.importers.run import areev_prepare
from lessons.management.base import Command as BaseCommand
from lessons.management.base import check_host
from lessons.management.importers import add_import_arguments, import_prepared


class Command(BaseCommand):
    help = (
        "Import areev JSON output: lesson grains, lesson_pile findings, outcome rows, consolidation drafts."
    )
    path_options = ("files", "map_file")  # files: any bytes the file system takes

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", metavar="FILE")
        add_import_arguments(parser, host_help="the host the records belong to")
        parser.add_argument(
            "--map",
            dest="map_file",
            metavar="FILE",
            help='JSON object {"<rec_hash>": ["<lesson hash>", ...]}: the lessons each outcome row measured',
        )

    def handle(self, *args, files, host, dry_run, map_file, **options):
        check_host(host)
        try:
            mapping = load_map(Path(map_file)) if map_file else None
            prepared = areev_prepare(paths=[Path(f) for f in files], host=host, mapping=mapping)
        except SourceError as exc:
            self.fail(str(exc))
        import_prepared(self, prepared, dry_run=dry_run)
