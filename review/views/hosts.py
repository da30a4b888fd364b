"""The hosts: each host's budget, live lessons, entities and piles, counted in SQL.

spec: piles.md rules 2-4.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from review import selectors
from review.roles import PERM_SET_BUDGET


@require_GET
def hosts(request: HttpRequest) -> HttpResponse:
    """``/hosts/``: one row per host; an "Edit budget" link for admins once that page exists."""
    context = {"hosts": selectors.hosts_overview(), "can_set_budget": request.user.has_perm(PERM_SET_BUDGET)}
    return render(request, "review/hosts.html", context)
