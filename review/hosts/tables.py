"""The table of one host's entities (django-tables2); the project template ``tables/htmx_table.html``
adds the htmx attributes to sorting and paging links. spec: piles.md rules 3-4.
"""

from __future__ import annotations

from urllib.parse import quote

import django_tables2 as tables
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from lessons.core.piles import pile_target
from review.web.format import budget_gauge
from review.web.links import route_path, target_link
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


def _piles_cell(host) -> str:
    if not host.budget_enabled:
        return format_html('<span class="muted" title="budget off: no piles">{}</span>', "\u2014")
    if host.pile_count:
        return format_html(
            '<a href="{}?host={}" title="this host\'s piles in the queue">{}</a>',
            route_path("review:queue"),
            quote(host.name, safe="/"),  # the template's |urlencode
            host.pile_count,
        )
    return str(host.pile_count)


def hosts_rows(hosts, *, can_set_budget: bool) -> SafeString:
    """The ``<tr>`` rows of the hosts page (``review.hosts.selectors.hosts_overview``: a host with
    ``live_lessons``, ``entity_count``, ``pile_count``), built in Python: 200 rows through the template
    engine, with four ``{% url %}`` each, were most of that page's time (issue 10). ``can_set_budget`` adds
    the "Edit budget" cell (admins)."""
    rows = []
    for host in hosts:
        state = (
            '<span class="state state-within">enabled</span>'
            if host.budget_enabled
            else '<span class="state state-off">disabled</span>'
        )
        edit = (
            format_html(
                '<td class="nowrap"><a href="{}">Edit budget</a></td>',
                route_path("review:host_budget", name=host.name),
            )
            if can_set_budget
            else ""
        )
        rows.append(
            format_html(
                '<tr data-host="{name}"><td class="mono"><a href="{href}">{name}</a></td>'
                '<td class="text">{description}</td>'
                '<td class="nowrap">max_active <b>{max_active}</b> · {state}</td>'
                '<td class="num">{live}</td><td class="num">{entities}</td><td class="num">{piles}</td>'
                "{edit}</tr>",
                name=host.name,
                href=route_path("review:host", name=host.name),
                description=host.description or "\u2014",
                max_active=host.max_active,
                state=mark_safe(state),  # noqa: S308 - constant markup
                live=host.live_lessons,
                entities=host.entity_count,
                piles=_piles_cell(host),
                edit=edit,
            )
        )
    return mark_safe("\n".join(rows))  # noqa: S308 - every row is format_html


def unmatched_topics_links(hosts) -> SafeString:
    """The hosts page's line of links to each host's unmatched topics, `` · `` between them."""
    return format_html_join(
        " · ",
        '<a href="{}">{}</a>',
        ((route_path("review:unmatched_topics", host=host.name), host.name) for host in hosts),
    )
