"""``manage.py sync_areev MEMORY_PATH --host NAME [--dry-run] [--triggered-by PRINCIPAL]``.

Reads an areev memory file through the ``areev`` package (the optional ``areev`` extra): lessons,
``loop.lesson_pile/1`` findings, outcome rows, consolidation recommendations as drafts. Incremental:
a second sync reads only what the engine's change feed lists after the stored cursor, while the file
still has the op the cursor was read up to (else it is another memory, read in full, and a line says
so). Prints the import report and ``changes since op N: M``. docs/importers.md, "areev: import_areev";
README.md, "Commands" (exit codes).
"""

from __future__ import annotations

from pathlib import Path

from lessons.importers.areev_engine import EngineError, EngineMissing
from lessons.importers.areev_sync import sync_memory
from lessons.management.base import Command as BaseCommand
from lessons.management.base import UsageError, check_host, write_result
from lessons.management.importers import add_import_arguments


class Command(BaseCommand):
    help = "Sync an areev memory file (lessons, pile findings, outcomes, consolidation drafts) incrementally."
    path_options = ("memory_path",)  # files: any bytes the file system takes

    def add_arguments(self, parser):
        parser.add_argument("memory_path", metavar="MEMORY_PATH", help="the areev memory file (X.db)")
        add_import_arguments(
            parser,
            host_help="the host the memory's lessons belong to",
            dry_run_help="read, translate and report; write nothing",
        )
        parser.add_argument(
            "--triggered-by",
            metavar="PRINCIPAL",
            help="the actor the host runs the loop as (user:NAME), recorded as triggered_by of new drafts",
        )

    def handle(self, *args, memory_path, host, dry_run, triggered_by, **options):
        check_host(host)
        try:
            synced = sync_memory(
                path=Path(memory_path), host=host, dry_run=dry_run, triggered_by=triggered_by
            )
        except EngineMissing as exc:
            raise UsageError(str(exc)) from None
        except EngineError as exc:
            self.fail(str(exc))
        write_result(self, synced.result)
        for line in synced.feed_lines():
            self.stdout.write(line)
