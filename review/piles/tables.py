"""The queue table (django-tables2). The project template ``tables/htmx_table.html`` adds the
htmx attributes to sorting and paging links.

The queue table renders one keyset page of ``lessons.selectors.piles.pile_queue`` rows (dicts), already
ordered by the database (``review.piles.selectors.queue_page``); ``OrderedRows`` keeps that order. Every
column's sort ends in ``host_name, namespace, subject`` (unique per row) so equal counts keep a stable
order (README.md).
"""

from __future__ import annotations

import django_tables2 as tables
from django.utils.html import format_html
from django.utils.safestring import mark_safe
from django_tables2.data import TableListData

from lessons.core.facts import FACTS_PENDING
from review.web.format import age, budget_gauge
from review.web.links import pile_href, target_link
from review.web.tables import LeanTable

QUEUE_PER_PAGE = 25
GROUPING = "grouping\u2026"  # a pile the background worker has not grouped yet
# What a zero count shows: a muted em dash (built once: most of a page's count cells are zero).
ZERO = mark_safe('<span class="zero">\u2014</span>')
_TIE = ("host_name", "namespace", "subject")


class OrderedRows(TableListData):
    """A page of rows in the order the database sorted them: the table shows its sort in the header but
    never re-sorts them (Python's string order is not the database's collation)."""

    def order_by(self, aliases) -> None:
        return None


def _then_tie(*fields: str) -> tuple[str, ...]:
    return (*fields, *(f for f in _TIE if f not in fields))


FACTS_TITLE = "The distinct facts the live lessons state (a lesson covering several is not counted)"
RESTATEMENTS_TITLE = "Lessons that restate another of their fact: what keeping one lesson per fact retires"


class _CountColumn(tables.Column):
    """A small number, zero shown as a muted em dash; ``cell_class`` colours it like its verdict badge.

    django-tables2 does not call ``render`` for its empty values, and 0 is not one of them.
    """

    def __init__(self, *args, cell_class: str = "", title: str = "", **kwargs):
        th = {"class": f"num {cell_class}", **({"title": title} if title else {})}
        kwargs.setdefault("attrs", {"th": th, "td": {"class": f"num {cell_class}"}})
        kwargs.setdefault("initial_sort_descending", True)  # a first click on a count: the most first
        super().__init__(*args, **kwargs)

    def render(self, value):
        return value if value else ZERO


class QueueTable(LeanTable):
    """One over-budget entity per row: host, target, live count against budget, verdict mix, age."""

    host_name = tables.Column(verbose_name="Host", order_by=_then_tie("host_name"))
    target = tables.Column(
        verbose_name="Entity",
        accessor="subject",
        order_by=_then_tie("namespace", "subject"),
        attrs={"td": {"class": "target"}},
    )
    count = tables.Column(
        verbose_name="Live / budget",
        order_by=_then_tie("count"),
        attrs={"td": {"class": "gauge-cell"}},
        initial_sort_descending=True,
    )
    # Issue 22: the facts the live members state (umbrellas not counted) beside the live count, and the
    # restatements (the members of those facts but one each: what "keep one of each fact" retires), so the
    # piles that shrink most by removing restatements can sort first.
    facts = _CountColumn(verbose_name="Facts", order_by=_then_tie("facts"), title=FACTS_TITLE)
    restatements = _CountColumn(
        verbose_name="Restatements", order_by=_then_tie("restatements"), title=RESTATEMENTS_TITLE
    )
    overage = _CountColumn(verbose_name="Over", order_by=_then_tie("overage"), cell_class="over")
    held = _CountColumn(verbose_name="held", order_by=_then_tie("held"), cell_class="mix mix-held")
    regressed = _CountColumn(
        verbose_name="regressed", order_by=_then_tie("regressed"), cell_class="mix mix-regressed"
    )
    drifted = _CountColumn(
        verbose_name="drifted", order_by=_then_tie("drifted"), cell_class="mix mix-drifted"
    )
    other = _CountColumn(verbose_name="other", order_by=_then_tie("other"), cell_class="mix mix-other")
    not_applied = _CountColumn(
        verbose_name="not applied", order_by=_then_tie("not_applied"), cell_class="mix mix-not-applied"
    )
    recurring = _CountColumn(verbose_name="Recurring", order_by=_then_tie("recurring"))
    pending_drafts = _CountColumn(verbose_name="Drafts pending", order_by=_then_tie("pending_drafts"))
    oldest = tables.Column(verbose_name="Oldest member", order_by=_then_tie("oldest"))

    class Meta:
        # data-rows / data-row: the rows j and k move between (static/js/keyboard.js), and the key focus
        # returns to after a sort or filter swaps the table.
        attrs = {"class": "data queue-table", "data-rows": ""}
        row_attrs = {
            "data-row": lambda record: f"{record['host_name']} {record['namespace']}/{record['subject']}"
        }
        orderable = True
        empty_text = ""

    # The page's live claims keyed by (host_id, namespace, subject); the view fills it with one query.
    claims: dict = {}

    def render_target(self, record):
        link = target_link(record["host_name"], record["namespace"], record["subject"])
        claim = self.claims.get((record["host_id"], record["namespace"], record["subject"]))
        if claim is None:
            return link
        return format_html(
            '{} <span class="claim-mark" data-testid="claim-mark">claimed by {}, {} min ago</span>',
            link,
            claim.username,
            claim.minutes_ago,
        )

    def render_count(self, record):
        return budget_gauge(record["count"], record["max_active"])

    def render_facts(self, record, value):
        """The facts the live members state (lessons.core.facts; umbrellas not counted); "grouping…"
        while a bulk ingest's pile waits for the background regroup (nothing stored yet)."""
        if record.get("facts_version") == FACTS_PENDING:
            return GROUPING
        return value

    def render_pending_drafts(self, record, value):
        """A count of pending drafts links to the pile's drafts section; zero stays a muted dash."""
        if not value:
            return self.columns["pending_drafts"].column.render(value)
        href = pile_href(record["host_name"], record["namespace"], record["subject"]) + "#drafts"
        label = f"{value} pending draft{'s' if value != 1 else ''} on {record['subject']}"
        return format_html('<a href="{}" aria-label="{}">{}</a>', href, label, value)

    def render_oldest(self, value):
        return age(value)
