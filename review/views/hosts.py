"""The hosts: each host's budget, live lessons, entities and piles, counted in SQL; one host's entities.

spec: piles.md rules 2-4.
"""

from __future__ import annotations

from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from review import selectors
from review.paging import PageSizeConfig
from review.roles import PERM_SET_BUDGET, PERM_VIEW
from review.tables import HOST_ENTITIES_PER_PAGE, HostEntityTable
from review.views.htmx import render_problem, render_region

HOST_UNKNOWN = "There is no host named {host!r}."


@require_GET
@permission_required(PERM_VIEW, raise_exception=True)
def hosts(request: HttpRequest) -> HttpResponse:
    """``/hosts/``: one row per host; an "Edit budget" link for admins once that page exists."""
    context = {"hosts": selectors.hosts_overview(), "can_set_budget": request.user.has_perm(PERM_SET_BUDGET)}
    return render(request, "review/hosts.html", context)


@require_GET
@permission_required(PERM_VIEW, raise_exception=True)
def host(request: HttpRequest, name: str) -> HttpResponse:
    """``/hosts/<name>/``: the host's budget and counts, and every entity with a lesson, most live first,
    each against the budget (over, within, or budget off) and linked to its pile page. The region
    ``entities`` is what sort and page links swap."""
    found = selectors.host_overview(name=name)
    if found is None:
        message = HOST_UNKNOWN.format(host=name)
        return render_problem(request, title="Unknown host", message=message, status=404)
    table = HostEntityTable(selectors.host_entities(host=found), host=found)
    PageSizeConfig(request, paginate={"per_page": HOST_ENTITIES_PER_PAGE}).configure(table)
    context = {"host": found, "table": table, "can_set_budget": request.user.has_perm(PERM_SET_BUDGET)}
    return render_region(request, "review/host.html", "entities", context)
