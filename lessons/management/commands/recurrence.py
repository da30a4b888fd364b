"""``manage.py recurrence [--host NAME] [--format text|json] [--recompute]``. README.md, "Commands",
docs/piles-and-recurrence.md, "Recurrence".

Prints the stored per-lesson counts, the unmatched topics per host and the coverage report.
``--recompute`` first rebuilds every attribution and count from the stored history (the counts are
otherwise kept current by ingest and by status changes).
"""

from __future__ import annotations

import json

from lessons.core.recurrence import has_evidence, is_recurring
from lessons.core.text import hash8
from lessons.management.base import Command as BaseCommand
from lessons.models import Host
from lessons.recurrence.counts import (
    NO_OBSERVED_CORRECTION,
    format_counts,
    recurrence_report,
)
from lessons.recurrence.refresh import recurrence_recompute

UNKNOWN_HOST = "unknown host {name!r}"
TEXT_WIDTH = 80


class Command(BaseCommand):
    help = "Per-lesson recurrence counts, unmatched topics per host, and the coverage report."

    def add_arguments(self, parser):
        parser.add_argument("--host", help="only this host")
        parser.add_argument("--format", choices=["text", "json"], default="text")
        parser.add_argument(
            "--recompute", action="store_true", help="rebuild all attributions and counts before reporting"
        )

    def handle(self, *args, host, format, recompute, **options):
        host_obj = None
        if host:
            host_obj = Host.objects.filter(name=host).first()
            if host_obj is None:
                self.fail(UNKNOWN_HOST.format(name=host))
        if recompute:
            stats = recurrence_recompute(host=host_obj)
            self.stderr.write(
                f"recomputed {stats.hosts} host(s): {stats.sessions} session(s) with user corrections, "
                f"{stats.attributions} attribution row(s), {stats.lessons} lesson count row(s)"
            )
        report = recurrence_report(host=host_obj)
        if format == "json":
            self.stdout.write(json.dumps(report, indent=2, ensure_ascii=False))
            return
        self._write_text(report)

    def _write_text(self, report: dict) -> None:
        lessons_by_host: dict[str, list[dict]] = {}
        for lesson in report["lessons"]:
            lessons_by_host.setdefault(lesson["host"], []).append(lesson)
        for entry in report["hosts"]:
            name = entry["host"]
            lessons = lessons_by_host.get(name, [])
            self.stdout.write(name)
            with_evidence = [lesson for lesson in lessons if has_evidence(lesson["recurrence"])]
            for lesson in with_evidence:
                counts = lesson["recurrence"]
                badge = "recurring" if is_recurring(counts) else "         "
                ident = lesson["lesson_id"] and f"{lesson['store'] or '-'}/{lesson['lesson_id']}" or "-"
                text = " ".join(lesson["text"].split())
                if len(text) > TEXT_WIDTH:
                    text = text[: TEXT_WIDTH - 1] + "\u2026"
                self.stdout.write(f"  {badge} {hash8(lesson['hash'])}  {ident}  {text}")
                self.stdout.write(
                    f"              shown in {counts['sessions_shown']} session(s); {format_counts(counts)}"
                )
            rest = len(lessons) - len(with_evidence)
            never = sum(
                1
                for lesson in lessons
                if not has_evidence(lesson["recurrence"]) and not lesson["recurrence"]["sessions_shown"]
            )
            if rest:
                self.stdout.write(
                    f"  {rest} other lesson(s): {NO_OBSERVED_CORRECTION}"
                    + (f" ({never} never shown)" if never else "")
                )
            topics = entry["unmatched_topics"]
            if topics:
                listed = ", ".join(f"{t['topic']} ({t['sessions']} sessions)" for t in topics)
                self.stdout.write(f"  unmatched topics: {listed}")
            else:
                self.stdout.write("  unmatched topics: none")
            self.stdout.write(f"  coverage: {_coverage_line(entry['coverage'])}")
        self.stdout.write(f"all hosts: {_coverage_line(report['coverage'])}")


def _coverage_line(coverage: dict) -> str:
    kinds = ", ".join(f"{kind} {n}" for kind, n in coverage["corrections_by_kind"].items()) or "none"
    return (
        f"{coverage['sessions']} session(s), {coverage['exposures']} exposure(s), corrections: {kinds}; "
        f"user corrections attributed {coverage['attributed']}, ambiguous {coverage['ambiguous']}, "
        f"unmatched {coverage['unmatched']}"
    )
