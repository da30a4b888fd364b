"""``manage.py piles [--host NAME] [--format text|json]``. spec: cli.md, piles.md."""

from __future__ import annotations

from lessons.core.piles import verdict_label
from lessons.management.base import Command as BaseCommand
from lessons.models import Host
from lessons.selectors.piles import iter_piles, write_piles_json

TEXT_WIDTH = 70


def cut(text: str, width: int) -> str:
    """``text`` on one line (whitespace runs become one space), cut to ``width`` characters with "…"."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "\u2026"


class Command(BaseCommand):
    help = "List every over-budget entity (pile) with its members' latest verdicts."

    def add_arguments(self, parser):
        parser.add_argument("--host", help="only this host")
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, host, format, **options):
        if host and not Host.objects.filter(name=host).exists():
            self.fail(f"unknown host {host!r}")
        if format == "json":
            # Streamed: one pile's JSON in memory at a time (issue 10, build 3); the same bytes as one dump.
            write_piles_json(lambda text: self.stdout.write(text, ending=""), iter_piles(host=host))
            self.stdout.write("")
            return
        n = 0
        for entity in iter_piles(host=host):
            if n == 0:
                self.stdout.write(f"{'HOST':<20} {'ENTITY':<45} {'LIVE / BUDGET':>13} SEVERITY")
            n += 1
            p = entity.pile
            live = f"{p.count} / {p.max_active}"
            host, target = cut(entity.host.name, 20), cut(p.target, 45)
            self.stdout.write(f"{host:<20} {target:<45} {live:>13} {p.severity}")
            for lesson, member in zip(entity.lessons, p.members, strict=True):
                verdict = verdict_label(member.verdict)
                text = cut(lesson.text, TEXT_WIDTH)
                self.stdout.write(f"    {lesson.hash[:8]}  {cut(verdict, 24):<24} {text}")
        if not n:
            enabled = Host.objects.filter(budget_enabled=True).exists()
            why = "nothing is over budget" if enabled else "no host has a budget enabled"
            self.stdout.write(f"no piles: {why}")
            return
        self.stdout.write(f"{n} pile(s)")
