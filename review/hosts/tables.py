"""The table of one host's entities (django-tables2); the project template ``tables/htmx_table.html``
adds the htmx attributes to sorting and paging links. docs/piles-and-recurrence.md, "Piles" rules 3-4.
"""

from __future__ import annotations

from urllib.parse import quote

import django_tables2 as tables
from django.utils.html import format_html
from django.utils.safestring import SafeString, mark_safe

from lessons.core.piles import pile_target
from review.web.format import budget_gauge, esc
from review.web.links import route_builder, route_path, target_link
from review.web.tables import LeanTable

HOST_ENTITIES_PER_PAGE = 50
ENTITY_OVER = "over budget by {n}"
ENTITY_WITHIN = "within budget"
ENTITY_BUDGET_OFF = "budget off"


class HostEntityTable(LeanTable):
    """The entities of one host (rows of ``review.hosts.selectors.host_entities``): target, live count against
    the budget, whether it is a pile, lessons of any status. Most live lessons first.
    docs/piles-and-recurrence.md, "Piles" rules 3-4 (a host without an enabled budget has no piles)."""

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


_NO_DESCRIPTION = "\u2014"
_PILES_OFF = '<span class="muted" title="budget off: no piles">\u2014</span>'
_STATE_ON = '<span class="state state-within">enabled</span>'
_STATE_OFF = '<span class="state state-off">disabled</span>'


def _piles_cell(host, queue: str) -> str:
    if not host.budget_enabled:
        return _PILES_OFF
    if host.pile_count:
        href = esc(f"{queue}?host={quote(host.name, safe='/')}")  # the template's |urlencode
        return f'<a href="{href}" title="this host\'s piles in the queue">{esc(host.pile_count)}</a>'
    return str(host.pile_count)


def hosts_rows(hosts, *, can_set_budget: bool) -> SafeString:
    """The ``<tr>`` rows of the hosts page (``review.hosts.selectors.hosts_overview``: a host with
    ``live_lessons``, ``entity_count``, ``pile_count``), built in Python as f-strings of escaped values
    (``esc``): 200 rows through the template engine, then through ``format_html``, were most of that page's
    time (issue 10). ``can_set_budget`` adds the "Edit budget" cell (admins)."""
    host_href = route_builder("review:host", "name")
    budget_href = route_builder("review:host_budget", "name")
    queue = route_path("review:queue")
    rows = []
    for host in hosts:
        name = esc(host.name)
        edit = ""
        if can_set_budget:
            edit = f'<td class="nowrap"><a href="{esc(budget_href(host.name))}">Edit budget</a></td>'
        rows.append(
            f'<tr data-host="{name}"><td class="mono"><a href="{esc(host_href(host.name))}">{name}</a></td>'
            f'<td class="text">{esc(host.description or _NO_DESCRIPTION)}</td>'
            f'<td class="nowrap">max_active <b>{esc(host.max_active)}</b> · '
            f"{_STATE_ON if host.budget_enabled else _STATE_OFF}</td>"
            f'<td class="num">{esc(host.live_lessons)}</td><td class="num">{esc(host.entity_count)}</td>'
            f'<td class="num">{_piles_cell(host, queue)}</td>{edit}</tr>'
        )
    return mark_safe("\n".join(rows))  # noqa: S308 - every value went through esc


def unmatched_topics_links(hosts) -> SafeString:
    """The hosts page's line of links to each host's unmatched topics, `` · `` between them."""
    topics_href = route_builder("review:unmatched_topics", "host")
    links = (f'<a href="{esc(topics_href(host.name))}">{esc(host.name)}</a>' for host in hosts)
    return mark_safe(" · ".join(links))  # noqa: S308 - every value went through esc
