"""What the importer commands share (``import_areev``, ``import_altimate``, ``sync_areev``): their
``--host NAME`` and ``--dry-run``, and running a prepared import with its progress bar and report.
docs/importers.md; README.md, "Commands".
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandParser

from lessons.importers.run import Prepared, execute
from lessons.management.base import write_result
from lessons.management.progress import progress_bar

DRY_RUN_HELP = "translate, validate and report; write nothing"


def add_import_arguments(parser: CommandParser, *, host_help: str, dry_run_help: str = DRY_RUN_HELP) -> None:
    """Add ``--host NAME`` (required; the command checks it with ``check_host``) and ``--dry-run`` (a flag),
    with the command's own help texts. docs/importers.md (each importer's section); README.md, "Commands".
    """
    parser.add_argument("--host", required=True, help=host_help)
    parser.add_argument("--dry-run", action="store_true", help=dry_run_help)


def import_prepared(command: BaseCommand, prepared: Prepared, *, dry_run: bool) -> None:
    """Ingest ``prepared`` (``execute``: nothing is written when ``dry_run``) with a progress bar on the
    command's stderr for a large input, then write its report and counts (``write_result``). Raises what
    ``execute`` raises. docs/importers.md; docs/interchange.md, "Errors and the import report"."""
    with progress_bar([prepared.source], stream=command.stderr._out) as progress:
        result = execute(prepared, dry_run=dry_run, progress=progress)
    write_result(command, result)
