"""The table of one host's entities (django-tables2); the project template ``tables/htmx_table.html``
adds the htmx attributes to sorting and paging links. spec: piles.md rules 3-4.
"""

from __future__ import annotations

import django_tables2 as tables
from django.utils.html import format_html

from lessons.core.piles import pile_target
from review.web.format import budget_gauge
from review.web.links import target_link
from review.web.tables import LeanTable

HOST_ENTITIES_PER_PAGE = 50
ENTITY_OVER = "over budget by {n}"
ENTITY_WITHIN = "within budget"
ENTITY_BUDGET_OFF = "budget off"


class HostEntityTable(LeanTable):
    """The entities of one host (rows of ``review.hosts.selectors.host_entities``): target, live count against
    the budget, whether it is a pile, lessons of any status. Most live lessons first.
    spec: piles.md rules 3-4 (a host without an enabled budget has no piles)."""

    target = tables.Column(
        verbose_name="Entity",
        accessor="subject",
        order_by=("namespace", "subject"),
        attrs={"td": {"class": "target"}},
    )
    live = tables.Column(
        verbose_name="Live / budget",
        order_by=("live", "namespace", "subject"),
        attrs={"td": {"class": "gauge-cell"}},
        initial_sort_descending=True,
    )
    state = tables.Column(verbose_name="Budget", accessor="overage", empty_values=(), orderable=False)
    total = tables.Column(
        verbose_name="All lessons",
        order_by=("total", "namespace", "subject"),
        attrs={"th": {"class": "num"}, "td": {"class": "num"}},
        initial_sort_descending=True,
    )

    class Meta:
        attrs = {"class": "data host-entities"}
        row_attrs = {"data-target": lambda record: pile_target(record["namespace"], record["subject"])}
        empty_text = "This host has no lesson yet."

    def __init__(self, *args, host, **kwargs):
        super().__init__(*args, **kwargs)
        self.host = host

    def render_target(self, record):
        return target_link(self.host.name, record["namespace"], record["subject"])

    def render_live(self, record):
        return budget_gauge(record["live"], self.host.max_active, self.host.budget_enabled)

    def render_state(self, record):
        if not self.host.budget_enabled:
            return format_html('<span class="state state-off">{}</span>', ENTITY_BUDGET_OFF)
        if record["overage"] > 0:
            return format_html(
                '<span class="state state-over">{}</span>', ENTITY_OVER.format(n=record["overage"])
            )
        return format_html('<span class="state state-within">{}</span>', ENTITY_WITHIN)
