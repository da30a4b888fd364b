"""The pile page's fact actions (issue 22): resolve by facts, a preview that writes nothing, and the
restatement marks "mark two facts as one" and "take a rule out" (``review.services.restatements``).
Both answer with the pile region (``review.piles.views``). docs/reviewing.md ("Facts").
"""

from __future__ import annotations

from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_POST
from django_htmx.http import reswap

from lessons.core.text import hash8
from review.models import ReasonCode
from review.piles.facts import mark_forms, resolve_context
from review.piles.lookups import get_entity_or_404
from review.piles.views import PILE_TEMPLATE, SHOW_PILE_TOP, pile_context, pile_done, retire_form
from review.roles import PERM_DECIDE
from review.services.common import DecisionRefused
from review.services.restatements import fact_split, facts_merge
from review.web.decide import decide
from review.web.htmx import render_region
from review.web.lookups import shows_not_found

# Restatement marks (issue 22, Build 2): not decisions, so the notices say nothing was decided.
MERGED_NOTICE = (
    "Marked {a} and {b} as one fact. The facts are regrouped; no lesson changed and nothing was decided."
)
SPLIT_NOTICE = (
    "Took {member} out of {label} as a fact of its own. The facts are regrouped; no lesson changed and"
    " nothing was decided."
)
MARK_ACTION_UNKNOWN = "Choose whether to mark two facts as one or to take a rule out."


@require_POST
@permission_required(PERM_DECIDE, raise_exception=True)
@shows_not_found
def pile_resolve(request: HttpRequest) -> HttpResponse:
    """POST ``/pile/resolve/?host=&namespace=&subject=``: resolve by facts, a preview that writes nothing.

    Selects every member but each fact's keeper (``keepers``: the keepers the reviewer picked, one per
    fact; the suggested one otherwise; umbrellas left alone and listed), presets the reason code
    ``restates_another`` and keeps the reason typed so far; the reviewer still writes the reason and
    presses Retire (the existing retire, with its stale-pile check). The pile region (htmx) or the page.
    Issue 22, Build 3; docs/reviewing.md ("Resolve by facts").
    """
    _host, detail = get_entity_or_404(request.GET)
    picked = [h for h in request.POST.getlist("keepers") if h in set(detail.member_hashes)]
    resolve = resolve_context(detail, picked)
    initial = {
        "members": list(resolve["resolution"].retire),
        "reason": request.POST.get("reason", "").strip()[:500],
        "reason_code": ReasonCode.RESTATES_ANOTHER,
    }
    context = pile_context(request, detail, retire_form(detail, initial), keepers=picked, resolve=resolve)
    return render_region(request, PILE_TEMPLATE, "pile", context)


@require_POST
@permission_required(PERM_DECIDE, raise_exception=True)
@shows_not_found
def pile_mark(request: HttpRequest) -> HttpResponse:
    """POST ``/pile/mark/?host=&namespace=&subject=`` with ``do`` = ``merge`` (two facts are one:
    ``merge-fact``, ``merge-other``, ``merge-reason``) or ``split`` (a rule out as a fact of its own:
    ``split-member``, ``split-reason``). A restatement mark, not a decision (issue 22, Build 2;
    ``review.services.restatements``).

    Success: the fresh pile region with a notice (htmx) or a redirect with a message; 422 with the form's
    errors or the service's refusal; 403 for a viewer (``review.decide``).
    """
    host, detail = get_entity_or_404(request.GET)
    action = request.POST.get("do", "")
    forms = mark_forms(detail, request.POST)
    form = forms.get(f"{action}_form")
    if form is None:
        context = pile_context(request, detail, retire_form(detail), refusal=MARK_ACTION_UNKNOWN)
        return reswap(render_region(request, PILE_TEMPLATE, "pile", context, status=422), SHOW_PILE_TOP)
    # Only the submitted form shows its errors; the other starts fresh.
    other = "split" if action == "merge" else "merge"
    forms[f"{other}_form"] = mark_forms(detail)[f"{other}_form"]

    def act(data: dict) -> str:
        if action == "merge":
            fact, with_fact = detail.fact_named(data["fact"]), detail.fact_named(data["other"])
            facts_merge(host=host, fact=fact, other=with_fact, actor=request.user, reason=data["reason"])
            return MERGED_NOTICE.format(a=detail.label_of(fact.name), b=detail.label_of(with_fact.name))
        fact = detail.fact_of(data["member"])
        fact_split(host=host, fact=fact, member=data["member"], actor=request.user, reason=data["reason"])
        return SPLIT_NOTICE.format(member=hash8(data["member"]), label=detail.label_of(fact.name))

    def invalid(_form) -> HttpResponse:
        context = pile_context(request, detail, retire_form(detail), **forms)
        return render_region(request, PILE_TEMPLATE, "pile", context, status=422)

    def refused(exc: DecisionRefused) -> HttpResponse:
        context = pile_context(request, detail, retire_form(detail), refusal=str(exc), **forms)
        return reswap(render_region(request, PILE_TEMPLATE, "pile", context, status=422), SHOW_PILE_TOP)

    return decide(
        request,
        form,
        act=act,
        invalid=invalid,
        refused=refused,
        done=lambda notice: pile_done(request, detail, notice),
    )
