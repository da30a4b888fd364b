"""``manage.py piles [--host NAME] [--format text|json] [--recount | --check | --regroup]``. README.md,
"Commands",
docs/piles-and-recurrence.md, "Piles".

``--recount`` rebuilds the stored per-entity counts (``EntityCount``, ``HostCount``) from the lessons;
``--check`` recounts in memory and prints every difference, one a line, exiting 1 when there is any;
``--regroup`` recomputes and stores the facts of every pile (``lessons.services.facts``), one transaction
per host: after the facts method changed (``FACTS_VERSION``). docs: docs/piles-and-recurrence.md ("Facts:
which members state the same fact").
"""

from __future__ import annotations

from django.db import transaction

from lessons.core.facts import FACTS_VERSION
from lessons.core.piles import verdict_label
from lessons.core.text import hash8, visible_controls
from lessons.management.base import Command as BaseCommand
from lessons.models import Host
from lessons.selectors.piles import iter_piles, write_piles_json
from lessons.services.entity_counts import entity_counts_check, entity_counts_recount
from lessons.services.facts import facts_refresh

CHECK_CLEAN = "counts agree with the lessons"
CHECK_FAILED = "{n} difference(s): run manage.py piles --recount"
RECOUNTED = "recounted {entities} entities ({piles} over budget) on {hosts} host(s)"
REGROUPED = "regrouped {piles} pile(s) on {hosts} host(s) (facts method {version})"

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
        derived = parser.add_mutually_exclusive_group()
        derived.add_argument(
            "--recount", action="store_true", help="rebuild the stored per-entity counts from the lessons"
        )
        derived.add_argument(
            "--check",
            action="store_true",
            help="recount in memory and print every difference from the stored counts (exit 1 if any)",
        )
        derived.add_argument(
            "--regroup", action="store_true", help="recompute and store the facts of every pile"
        )

    def handle(self, *args, host, format, recount=False, check=False, regroup=False, **options):
        if host and not Host.objects.filter(name=host).exists():
            self.fail(f"unknown host {host!r}")
        host_obj = Host.objects.get(name=host) if host else None
        if recount:
            stats = entity_counts_recount(host=host_obj)
            self.stdout.write(RECOUNTED.format(entities=stats.entities, piles=stats.piles, hosts=stats.hosts))
            return
        if regroup:
            hosts = [host_obj] if host_obj else list(Host.objects.order_by("id"))
            piles = 0
            for one in hosts:
                with transaction.atomic():
                    piles += facts_refresh(host_id=one.id)
            self.stdout.write(REGROUPED.format(piles=piles, hosts=len(hosts), version=FACTS_VERSION))
            return
        if check:
            differences = entity_counts_check(host=host_obj)
            for line in differences:
                self.stdout.write(line)
            if differences:
                self.fail(CHECK_FAILED.format(n=len(differences)))
            self.stdout.write(CHECK_CLEAN)
            return
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
            # host-supplied text to a terminal: an ESC would run as an escape sequence (docs/interchange.md,
            # "Control characters in shown text"); the JSON format stays exact
            self.stdout.write(visible_controls(f"{host:<20} {target:<45} {live:>13} {p.severity}"))
            for lesson, member in zip(entity.lessons, p.members, strict=True):
                verdict = verdict_label(member.verdict)
                text = cut(lesson.text, TEXT_WIDTH)
                self.stdout.write(
                    visible_controls(f"    {hash8(lesson.hash)}  {cut(verdict, 24):<24} {text}")
                )
        if not n:
            enabled = Host.objects.filter(budget_enabled=True).exists()
            why = "nothing is over budget" if enabled else "no host has a budget enabled"
            self.stdout.write(f"no piles: {why}")
            return
        self.stdout.write(f"{n} pile(s)")
