"""``manage.py piles [--host NAME] [--format text|json]``. spec: cli.md, piles.md."""

from __future__ import annotations

import json

from lessons.management.base import Command as BaseCommand
from lessons.models import Host
from lessons.selectors.piles import piles_json, piles_list


class Command(BaseCommand):
    help = "List every over-budget entity (pile) with its members' latest verdicts."

    def add_arguments(self, parser):
        parser.add_argument("--host", help="only this host")
        parser.add_argument("--format", choices=["text", "json"], default="text")

    def handle(self, *args, host, format, **options):
        if host and not Host.objects.filter(name=host).exists():
            self.fail(f"unknown host {host!r}")
        if format == "json":
            self.stdout.write(json.dumps(piles_json(host=host), indent=2, ensure_ascii=False))
            return
        piles = piles_list(host=host)
        if not piles:
            enabled = Host.objects.filter(budget_enabled=True).exists()
            self.stdout.write("no piles: " + ("nothing is over budget" if enabled else "no host has a budget enabled"))
            return
        for entity in piles:
            p = entity.pile
            self.stdout.write(f"{entity.host.name:<20} {p.target:<45} {p.count:>5} / {p.max_active:<5} {p.severity}")
            for lesson, member in zip(entity.lessons, p.members, strict=True):
                verdict = member.verdict or "not applied by the loop"
                self.stdout.write(f"    {lesson.hash[:8]}  {verdict:<24} {lesson.text[:70]}")
        self.stdout.write(f"{len(piles)} pile(s)")
