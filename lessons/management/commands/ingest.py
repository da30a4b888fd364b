"""``manage.py ingest FILE... [--host NAME] [--skip-invalid] [--dry-run]``. README.md, "Commands",
docs/interchange.md."""

from __future__ import annotations

import json
import os
import sys

from lessons.core.interchange import HOST_NAME
from lessons.ingest.passes import IngestBusy, ingest_sources
from lessons.ingest.reading import file_source, spooled_source
from lessons.management.base import Command as BaseCommand
from lessons.management.base import UsageError
from lessons.management.progress import progress_bar

# A large file is validated in two processes where there are two cores (passes.py, "Validation").
VALIDATE_WORKERS = min(2, os.cpu_count() or 1)


class Command(BaseCommand):
    help = "Ingest interchange JSON Lines files (- reads standard input) and print the import report."
    # Django's system checks (about 0.3 s of every run) are for the server's configuration; hosts run
    # ingest often, in scripts. ``manage.py check`` runs them.
    requires_system_checks: list[str] = []
    path_options = ("files",)  # files: any bytes the file system takes

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", metavar="FILE")
        parser.add_argument("--host", help="default host for records without one")
        parser.add_argument(
            "--skip-invalid", action="store_true", help="write the valid lines, report the rest"
        )
        parser.add_argument("--dry-run", action="store_true", help="validate and report; write nothing")
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, files, host, skip_invalid, dry_run, format, **options):
        if host is not None and not HOST_NAME.fullmatch(host):
            raise UsageError(f"--host: expected a host name matching {HOST_NAME.pattern}, got {host!r}")
        sources = []
        for path in files:
            if path == "-":
                sources.append(spooled_source(sys.stdin.buffer))
                continue
            try:
                sources.append(file_source(path))
            except OSError as exc:
                self.fail(f"{path}: cannot read: {exc.strerror or exc}")
        try:
            with progress_bar(sources, stream=self.stderr._out) as progress:
                report = ingest_sources(
                    sources=sources,
                    default_host=host,
                    skip_invalid=skip_invalid,
                    dry_run=dry_run,
                    progress=progress,
                    workers=VALIDATE_WORKERS,
                )
        except IngestBusy as exc:  # a deadlock or a locked database that outlasted the retries
            self.fail(str(exc))
        for line in report.error_lines():
            self.stderr.write(line)
        for note in report.notes + report.held:
            self.stderr.write(f"note: {note}")
        if format == "json":
            self.stdout.write(json.dumps(report.as_dict(), indent=2, ensure_ascii=False))
        else:
            self.stdout.write(report.table())
            self.stdout.write(report.summary_line())
        if report.error_count and not skip_invalid:
            self.fail(f"{report.error_count} invalid line(s): nothing was written")
