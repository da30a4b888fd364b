"""The hosts pages: every host with its budget, live lessons, entities and piles (counted in SQL); one
host's entities; a host's budget page; a host's unmatched topics.

docs/piles-and-recurrence.md, "Piles" rules 2-4; docs/decisions.md, "The actions" (``set_budget``: admin, 1 <=
max_active <= 10000);
docs/piles-and-recurrence.md, "Unmatched topics". The budget page previews which piles would appear or
disappear; Save
records a ``set_budget`` decision in the same transaction as the change (``host_set_budget``) and returns
to the hosts page.
"""

from __future__ import annotations

from types import SimpleNamespace

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.html import format_html_join
from django.views.decorators.http import require_GET, require_http_methods

from lessons.models import Host
from lessons.recurrence.counts import host_unmatched_topics, recurrence_coverage
from review.hosts import selectors
from review.hosts.forms import BudgetForm
from review.hosts.marks import host_marks_shown
from review.hosts.tables import (
    HOST_ENTITIES_PER_PAGE,
    HostEntityTable,
    hosts_rows,
    unmatched_topics_links,
)
from review.outcomes.host_weeks import host_weeks, tallest, weeks_svg
from review.roles import PERM_SET_BUDGET, PERM_VIEW
from review.services.budget import budget_preview, host_set_budget
from review.services.common import (
    DecisionRefused,
    NotAllowed,
)
from review.web.fragments import host_in_path, page_version
from review.web.htmx import render_region, wants_region
from review.web.links import target_link
from review.web.lookups import HOST_UNKNOWN, NotFound, get_host_or_404, has_nul, shows_not_found
from review.web.paging import PageSizeConfig, keyset_links, keyset_page, page_number, page_size

BUDGET_TEMPLATE = "review/hosts/budget.html"
TOPIC_EXAMPLES = 3
# The unmatched-topics page has always worded an unknown host this way (the other pages add "named").
TOPICS_HOST_UNKNOWN = "There is no host {host!r}."
HOSTS_PER_PAGE = 100
HOST_COLUMNS = (
    "name",
    "description",
    "max_active",
    "budget_enabled",
    "live_lessons",
    "entity_count",
    "pile_count",
)
BUDGET_SAVED = "Budget of {host} saved: max_active {max_active}, {state}. Decision #{seq} is in the log."


@require_GET
@permission_required(PERM_VIEW, raise_exception=True)
def hosts(request: HttpRequest) -> HttpResponse:
    """``/hosts/``: one row per host, by name, ``HOSTS_PER_PAGE`` a page (keyset links, as the queue's);
    an "Edit budget" link for admins. Two queries, whatever the number of hosts."""
    rows = selectors.hosts_overview().values(*HOST_COLUMNS)
    page = keyset_page(
        rows,
        order=["name"],
        per_page=page_size(request, HOSTS_PER_PAGE),
        number=page_number(request),
        after=request.GET.get("after"),
        before=request.GET.get("before"),
    )
    found = [SimpleNamespace(**row) for row in page.rows]
    can_set_budget = request.user.has_perm(PERM_SET_BUDGET)
    context = {
        "hosts": found,
        "host_rows": hosts_rows(found, can_set_budget=can_set_budget),
        "topics_links": unmatched_topics_links(found),
        "can_set_budget": can_set_budget,
        "page": page,
        "page_links": keyset_links(request, page),
    }
    return render(request, "review/hosts/hosts.html", context)


@require_GET
@permission_required(PERM_VIEW, raise_exception=True)
def host_names(request: HttpRequest) -> HttpResponse:
    """``/host-names/?host=TYPED``: the ``<option>``s of a host search box's ``<datalist>`` (at most
    ``selectors.HOST_NAMES_LIMIT`` names, prefix matches first; ``review.web.widgets.HostSearch``)."""
    typed = request.GET.get("host", "").strip().replace("\x00", "")[:64]
    names = selectors.host_names_matching(typed)
    return HttpResponse(format_html_join("", '<option value="{}"></option>', ((n,) for n in names)))


@page_version(host_in_path("name"))  # its host's data only (docs/production.md, "Cache")
@require_GET
@permission_required(PERM_VIEW, raise_exception=True)
@shows_not_found
def host(request: HttpRequest, name: str) -> HttpResponse:
    """``/hosts/<name>/``: the host's budget and counts, and every entity with a lesson, most live first,
    each against the budget (over, within, or budget off) and linked to its pile page. The region
    ``entities`` is what sort and page links swap. Below it, the reviewers' newest restatement marks
    (issue 22, Build 2), each linked to its pile; then the host over time: user corrections per 100
    sessions by week, with the weeks that had decisions marked, as a chart and a table (issue 24); when no
    week of it had a session, the caption names the week of the host's newest session."""
    found = selectors.host_overview(name=name) if not has_nul(name) else None
    if found is None:
        raise NotFound("Unknown host", HOST_UNKNOWN.format(host=name))
    table = HostEntityTable(selectors.host_entities(host=found), host=found)
    PageSizeConfig(request, paginate={"per_page": HOST_ENTITIES_PER_PAGE}).configure(table)
    context = {"host": found, "table": table, "can_set_budget": request.user.has_perm(PERM_SET_BUDGET)}
    if not wants_region(request):
        context["marks"], context["more_marks"] = host_marks_shown(host=found)
        timeline = host_weeks(found)
        context["weeks"], context["weeks_later"] = timeline.weeks, timeline.later
        context["weeks_svg"], context["weeks_top"] = weeks_svg(timeline), tallest(timeline.weeks)
    return render_region(request, "review/hosts/host.html", "entities", context)


def _state(enabled: bool) -> str:
    return "enabled" if enabled else "disabled"


def _preview_links(host: Host, preview: dict) -> dict[str, list[str]]:
    """``{"appear": [link], "disappear": [...]}``: the preview's piles as links to their pages, each
    breakable at its ":" and "/" (``target_link``) so a long one fits a 390 px column."""
    entities = selectors.entity_targets(host=host, targets=[*preview["appear"], *preview["disappear"]])
    return {
        key: [target_link(host.name, *entities[t]) for t in preview[key]] for key in ("appear", "disappear")
    }


@require_http_methods(["GET", "POST"])
@permission_required(PERM_SET_BUDGET, raise_exception=True)
def host_budget(request: HttpRequest, name: str) -> HttpResponse:
    """GET: the form with the host's budget. POST ``preview``: the preview (the partial for htmx).
    POST ``save``: the decision, then a redirect to the hosts page with a message."""
    # Not @shows_not_found: an unknown host is Django's own 404 page here.
    host = get_host_or_404(name)
    context: dict = {"host": host, "preview": None, "host_state": _state(host.budget_enabled)}
    if request.method == "GET":
        context["form"] = BudgetForm(
            initial={"max_active": host.max_active, "budget_enabled": host.budget_enabled}
        )
        return render(request, BUDGET_TEMPLATE, context)
    form = BudgetForm(request.POST)
    context["form"] = form
    valid = form.is_valid()
    if valid:
        context["preview"] = budget_preview(
            host=host,
            max_active=form.cleaned_data["max_active"],
            budget_enabled=form.cleaned_data["budget_enabled"],
        )
        context["preview_state"] = _state(form.cleaned_data["budget_enabled"])
        context["preview_links"] = _preview_links(host, context["preview"])
        context["reason_written"] = bool(form.cleaned_data["reason"].strip())
    if "save" not in request.POST:
        return render_region(request, BUDGET_TEMPLATE, "preview", context)
    if valid:
        try:
            decision = host_set_budget(
                host=host,
                actor=request.user,
                max_active=form.cleaned_data["max_active"],
                budget_enabled=form.cleaned_data["budget_enabled"],
                reason=form.cleaned_data["reason"],
                reason_code=None,  # finding 12: the retire codes do not fit a budget; the form offers none
            )
        except NotAllowed as exc:
            raise PermissionDenied(str(exc)) from None
        except DecisionRefused as exc:
            form.add_error(exc.field if exc.field in form.fields else None, str(exc))
        else:
            messages.success(
                request,
                BUDGET_SAVED.format(
                    host=host.name,
                    max_active=form.cleaned_data["max_active"],
                    state=_state(form.cleaned_data["budget_enabled"]),
                    seq=decision.seq,
                ),
            )
            return redirect("review:hosts")
    return render(request, BUDGET_TEMPLATE, context, status=400)


@require_GET
@permission_required(PERM_VIEW, raise_exception=True)
@shows_not_found
def unmatched_topics(request: HttpRequest, host: str) -> HttpResponse:
    """``/hosts/<host>/unmatched-topics/``: at most five topics, each with its newest corrections."""
    host_obj = get_host_or_404(host, message=TOPICS_HOST_UNKNOWN)
    context = {
        "host": host_obj,
        "topics": host_unmatched_topics(host=host_obj, examples=TOPIC_EXAMPLES),
        "coverage": recurrence_coverage(host=host_obj),
    }
    return render(request, "review/hosts/unmatched_topics.html", context)
