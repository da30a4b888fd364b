"""``manage.py apply_decisions --altimate PROJECT_DIR --host NAME [--dry-run]``.

Applies the host's decisions not yet acknowledged to its altimate-code learn store and acknowledges each
(applied, or failed with the reason); prints what it applied, skipped and refused. Exit 0, or 1 when a
decision was refused or the store cannot be written. spec: decisions.md, "Hosts apply decisions".
"""

from __future__ import annotations

from pathlib import Path

from lessons.importers.common import SourceError
from lessons.management.base import Command as BaseCommand
from review.apply.altimate import apply_altimate
from review.apply.altimate_store import StoreRefused


class Command(BaseCommand):
    help = "Apply reviewers' decisions back to an engine's store, and acknowledge each one."

    def add_arguments(self, parser):
        parser.add_argument("--altimate", required=True, metavar="PROJECT_DIR", help="altimate project root")
        parser.add_argument("--host", required=True, metavar="NAME", help="the host the store belongs to")
        parser.add_argument("--dry-run", action="store_true", help="say what would change; write nothing")

    def handle(self, *args, altimate, host, dry_run, **options):
        try:
            report = apply_altimate(project_dir=Path(altimate), host=host, dry_run=dry_run)
        except (SourceError, StoreRefused) as exc:
            self.fail(str(exc))
        self.stdout.write("\n".join(report.lines()))
        if report.refused:
            self.fail(f"{len(report.refused)} decision(s) refused; see above")
