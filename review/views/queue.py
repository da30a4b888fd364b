"""The pile queue: every over-budget entity across hosts, filtered, sorted and paged in the URL.

spec: piles.md, "Rules" (which entities are piles); style.md, "Views and templates" (htmx regions).
"""

from __future__ import annotations

from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_GET

from review import selectors
from review.forms import QueueFilterForm
from review.paging import PageSizeConfig
from review.roles import PERM_VIEW
from review.tables import QUEUE_PER_PAGE, QueueTable
from review.views.htmx import render_region

# Why the queue is empty; the page tests assert these texts.
EMPTY_NO_BUDGET = "No host has a budget enabled, so nothing can be over budget."
EMPTY_NO_BUDGET_HINT = "An admin enables a host's budget (max_active) on the Hosts page."
EMPTY_NOTHING_OVER = (
    "Nothing is over budget: every entity carries at most its host's max_active live lessons."
)
EMPTY_NO_MATCH = "No pile matches these filters."
EMPTY_HOST_NO_BUDGET = "Host {host} has no budget enabled, so it has no piles."
EMPTY_HOST_NO_BUDGET_HINT = "Its entities and their live counts are on its host page."
EMPTY_TEXTS = {
    selectors.QUEUE_NO_BUDGET: EMPTY_NO_BUDGET,
    selectors.QUEUE_NOTHING_OVER: EMPTY_NOTHING_OVER,
    selectors.QUEUE_NO_MATCH: EMPTY_NO_MATCH,
}


@require_GET
@permission_required(PERM_VIEW, raise_exception=True)
def queue(request: HttpRequest) -> HttpResponse:
    """``/``: the queue table (25 a page) with host / namespace / text filters; the region ``queue``
    is what filter, sort and page links swap.
    """
    form = QueueFilterForm(request.GET, host_names=selectors.host_names())
    filters = form.filters()
    table = QueueTable(selectors.queue_rows(**filters))
    PageSizeConfig(request, paginate={"per_page": QUEUE_PER_PAGE}).configure(table)
    empty_reason = None
    if table.paginator.count == 0:
        empty_reason = selectors.queue_empty_reason(filtered=any(filters.values()), host=filters["host"])
    context = {
        "form": form,
        "table": table,
        "filtered": any(filters.values()),
        "empty_reason": empty_reason,
        "empty_text": EMPTY_TEXTS.get(empty_reason, ""),
        "empty_hint": EMPTY_NO_BUDGET_HINT if empty_reason == selectors.QUEUE_NO_BUDGET else "",
        "empty_link": (reverse("review:hosts"), "Go to Hosts"),
    }
    if empty_reason == selectors.QUEUE_HOST_NO_BUDGET:
        context["empty_text"] = EMPTY_HOST_NO_BUDGET.format(host=filters["host"])
        context["empty_hint"] = EMPTY_HOST_NO_BUDGET_HINT
        context["empty_link"] = (reverse("review:host", args=[filters["host"]]), f"Host {filters['host']}")
    return render_region(request, "review/queue.html", "queue", context)
