"""The host budget page: change ``max_active`` / ``budget_enabled`` with a reason, after a preview.

spec: decisions.md, "Actions" (``set_budget``: admin, 1 <= max_active <= 10000); piles.md, rules 3-4.
Preview shows which piles would appear or disappear; Save records a ``set_budget`` decision in the same
transaction as the change (``host_set_budget``) and returns to the hosts page.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods

from lessons.models import Host
from review.hosts.forms import BudgetForm
from review.roles import PERM_SET_BUDGET
from review.services.decisions import (
    REASON_CODE_UNKNOWN,
    REASON_HAS_NUL,
    REASON_REQUIRED,
    REASON_TOO_LONG,
    DecisionRefused,
    NotAllowed,
    budget_preview,
    host_set_budget,
)

BUDGET_SAVED = "Budget of {host} saved: max_active {max_active}, {state}. Decision #{seq} is in the log."


def _state(enabled: bool) -> str:
    return "enabled" if enabled else "disabled"


def _refused_field(message: str) -> str | None:
    """The form field a refusal is about (shown next to it), or None for the whole form."""
    if message in (REASON_REQUIRED, REASON_HAS_NUL) or message.startswith(REASON_TOO_LONG.split("{")[0]):
        return "reason"
    if message.startswith(REASON_CODE_UNKNOWN.split("{")[0]):
        return "reason_code"
    return None


@require_http_methods(["GET", "POST"])
@permission_required(PERM_SET_BUDGET, raise_exception=True)
def host_budget(request: HttpRequest, name: str) -> HttpResponse:
    """GET: the form with the host's budget. POST ``preview``: the preview (the partial for htmx).
    POST ``save``: the decision, then a redirect to the hosts page with a message."""
    if "\x00" in name:  # PostgreSQL text cannot hold NUL, so no host has one (and the query would fail)
        raise Http404("no such host")
    host = get_object_or_404(Host, name=name)
    context: dict = {"host": host, "preview": None, "host_state": _state(host.budget_enabled)}
    if request.method == "GET":
        context["form"] = BudgetForm(
            initial={"max_active": host.max_active, "budget_enabled": host.budget_enabled}
        )
        return render(request, "review/hosts/budget.html", context)
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
    if "save" not in request.POST:
        template = "review/hosts/budget.html#preview" if request.htmx else "review/hosts/budget.html"
        return render(request, template, context)
    if valid:
        try:
            decision = host_set_budget(
                host=host,
                actor=request.user,
                max_active=form.cleaned_data["max_active"],
                budget_enabled=form.cleaned_data["budget_enabled"],
                reason=form.cleaned_data["reason"],
                reason_code=form.cleaned_data["reason_code"] or None,
            )
        except NotAllowed as exc:
            raise PermissionDenied(str(exc)) from None
        except DecisionRefused as exc:
            form.add_error(_refused_field(str(exc)), str(exc))
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
    return render(request, "review/hosts/budget.html", context, status=400)
