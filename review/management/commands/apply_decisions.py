"""``manage.py apply_decisions (--areev MEMORY_PATH | --altimate PROJECT_DIR) --host NAME [--dry-run]
[--wait SECONDS]``.

Run by a host operator, never on its own: applies the host's decisions not yet acknowledged to its engine,
in ``seq`` order, and acknowledges each (applied, or failed with the engine's message); prints what was
applied, refused and skipped. One run per host at a time: a second one says so in one line on stderr and
waits up to ``--wait`` seconds (default ``WAIT_SECONDS``) for the first (and for altimate's learn lock),
then is refused. Exit 0, 1 when a decision was refused (altimate) or the engine or another run refuses
the run, 2 on wrong usage or a missing engine package. docs/decisions.md, "Hosts apply decisions";
README.md, "Commands". The engine sides are ``review.apply.areev`` and ``review.apply.altimate``.
"""

from __future__ import annotations

from pathlib import Path

from lessons.importers.areev_engine import EngineError, EngineMissing
from lessons.importers.common import SourceError
from lessons.management.base import Command as BaseCommand
from lessons.management.base import UsageError, check_host
from review.apply.altimate import apply_altimate
from review.apply.altimate_store import StoreRefused
from review.apply.areev import APPLIED, REFUSED, SKIPPED, decisions_apply_areev
from review.apply.host_lock import ApplyBusy

SUMMARY = "{applied} applied, {refused} refused, {skipped} skipped{dry}"
WAIT_SECONDS = 60


class Command(BaseCommand):
    help = "Apply the host's reviewer decisions to its engine and acknowledge each (host operators only)."
    path_options = ("areev", "altimate")  # files: any bytes the file system takes

    def add_arguments(self, parser):
        engine = parser.add_mutually_exclusive_group(required=True)
        engine.add_argument("--areev", metavar="MEMORY_PATH", help="the host's areev memory file (X.db)")
        engine.add_argument("--altimate", metavar="PROJECT_DIR", help="the host's altimate project root")
        parser.add_argument(
            "--host", required=True, metavar="NAME", help="the host whose decisions are applied"
        )
        parser.add_argument(
            "--dry-run", action="store_true", help="check each decision against the engine; change nothing"
        )
        parser.add_argument(
            "--wait",
            type=float,
            default=WAIT_SECONDS,
            metavar="SECONDS",
            help=f"how long to wait for another run of the host or altimate's lock (default {WAIT_SECONDS})",
        )

    def handle(self, *args, areev, altimate, host, dry_run, wait, **options):
        if wait < 0:
            raise UsageError(f"--wait: expected seconds, 0 or more, got {wait:g}")
        if altimate is not None:
            self._altimate(Path(altimate), host, dry_run, wait)
        else:
            self._areev(Path(areev), host, dry_run, wait)

    def _waiting(self, message: str) -> None:
        self.stderr.write(message)
        self.stderr.flush()

    def _areev(self, path: Path, host: str, dry_run: bool, wait: float) -> None:
        check_host(host)
        try:
            outcomes = decisions_apply_areev(
                path=path, host=host, dry_run=dry_run, wait_s=wait, on_wait=self._waiting
            )
        except EngineMissing as exc:
            raise UsageError(str(exc)) from None
        except (EngineError, ApplyBusy) as exc:
            self.fail(str(exc))
        for outcome in outcomes:
            self.stdout.write(outcome.line())
        counts = {s: sum(1 for o in outcomes if o.status == s) for s in (APPLIED, REFUSED, SKIPPED)}
        self.stdout.write(SUMMARY.format(**counts, dry=" (dry run: nothing changed)" if dry_run else ""))

    def _altimate(self, project_dir: Path, host: str, dry_run: bool, wait: float) -> None:
        try:
            report = apply_altimate(
                project_dir=project_dir, host=host, dry_run=dry_run, wait_s=wait, on_wait=self._waiting
            )
        except (SourceError, StoreRefused, ApplyBusy) as exc:
            self.fail(str(exc))
        self.stdout.write("\n".join(report.lines()))
        if report.refused:
            self.fail(f"{len(report.refused)} decision(s) refused; see above")
