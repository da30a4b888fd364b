"""``manage.py outcomes [--host NAME]``: recompute the outcomes of the decisions (all hosts, or one) from the
hosts' whole history, the kept counted corrections built afresh, store those that changed, then print how
many there are, how many changed, and how many per outcome.
docs/decisions.md, "Outcomes"; README.md, "Commands".
"""

from __future__ import annotations

from django.db import connection
from django.db.models import Count

from lessons.management.base import Command as BaseCommand
from lessons.models import Host
from review.management.lookups import LookupRefused, host_by_name
from review.models import DecisionOutcome
from review.services.outcomes import outcomes_refresh

DONE = "{n} outcomes computed, {changed} changed: {counts}"


class Command(BaseCommand):
    help = "Recompute the outcomes of the decisions (did the cut help?) and print them by outcome."

    def add_arguments(self, parser):
        parser.add_argument("--host", help="only the decisions on this host")

    def handle(self, *args, host, **options):
        try:
            host_obj = host_by_name(host)
        except LookupRefused as exc:
            self.fail(str(exc))
        hosts = [host_obj] if host_obj is not None else list(Host.objects.order_by("name"))
        changed = sum(outcomes_refresh(host=h, full=True) for h in hosts)
        if changed:
            analyze_outcomes()
        rows = DecisionOutcome.objects.all()
        if host_obj is not None:
            rows = rows.filter(host=host_obj.name)
        by = dict(rows.values_list("outcome").annotate(n=Count("pk")).order_by("outcome"))
        counts = ", ".join(f"{k} {v}" for k, v in sorted(by.items())) or "none"
        self.stdout.write(DONE.format(n=sum(by.values()), changed=changed, counts=counts))


def analyze_outcomes() -> None:
    """On PostgreSQL, the stored outcomes' statistics brought up to date (``ANALYZE``): a whole recompute may
    rewrite every row, and until autovacuum gets to them the planner reads the log's outcome filter by
    the old counts (1M outcomes just turned "too early": 945 ms a page instead of 13,
    docs/benchmarks.md). SQLite keeps no statistics unless asked, and its plans do not use them here."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(f"ANALYZE {connection.ops.quote_name(DecisionOutcome._meta.db_table)}")
