"""``manage.py apply_decisions --areev MEMORY_PATH --host NAME [--dry-run]``: run by a host operator.

Applies the host's unacknowledged decisions to its engine, in ``seq`` order, and acknowledges each
(applied, or failed with the engine's message); prints what was applied, refused and skipped. Never
runs on its own. spec: decisions.md, "Hosts apply decisions"; cli.md (exit codes). The areev side is
``review.services.areev_apply``.
"""

from __future__ import annotations

from pathlib import Path

from lessons.importers.areev_engine import EngineError, EngineMissing
from lessons.management.base import Command as BaseCommand
from lessons.management.base import UsageError
from lessons.management.commands.import_altimate import check_host
from review.services.areev_apply import APPLIED, REFUSED, SKIPPED, decisions_apply_areev

SUMMARY = "{applied} applied, {refused} refused, {skipped} skipped{dry}"


class Command(BaseCommand):
    help = "Apply the host's reviewer decisions to its engine and acknowledge each (host operators only)."

    def add_arguments(self, parser):
        engine = parser.add_mutually_exclusive_group(required=True)
        engine.add_argument("--areev", metavar="MEMORY_PATH", help="the host's areev memory file (X.db)")
        parser.add_argument("--host", required=True, help="the host whose decisions are applied")
        parser.add_argument(
            "--dry-run", action="store_true", help="check each decision against the engine; change nothing"
        )

    def handle(self, *args, areev, host, dry_run, **options):
        check_host(host)
        try:
            outcomes = decisions_apply_areev(path=Path(areev), host=host, dry_run=dry_run)
        except EngineMissing as exc:
            raise UsageError(str(exc)) from None
        except EngineError as exc:
            self.fail(str(exc))
        for outcome in outcomes:
            self.stdout.write(outcome.line())
        counts = {s: sum(1 for o in outcomes if o.status == s) for s in (APPLIED, REFUSED, SKIPPED)}
        self.stdout.write(SUMMARY.format(**counts, dry=" (dry run: nothing changed)" if dry_run else ""))
