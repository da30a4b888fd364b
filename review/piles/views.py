"""One entity's pile: its live members with verdicts and recurrence, its drafts, and retiring members.

The entity is named by query parameters (``?host=…&namespace=…&subject=…``) because a namespace may be
empty. Retiring posts the pile version the reviewer saw; a changed pile is refused with the fresh one
shown and nothing written. spec: piles.md; decisions.md, "Actions" and "Stale views are refused".
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import reswap

from review.piles import selectors
from review.piles.forms import RetireForm
from review.roles import PERM_DECIDE, PERM_VIEW
from review.services.decisions import DecisionRefused, NotAllowed, StalePile, lesson_retire
from review.web.htmx import render_problem, render_region, wants_region
from review.web.links import pile_href

PILE_PARAMS_MISSING = (
    "A pile is named by its entity: add host and subject (and namespace, when it has one) to the address, "
    "e.g. /pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture."
)
PILE_PARAMS_NUL = "The pile address contains a NUL character; no host, namespace or subject has one."
HOST_UNKNOWN = "There is no host named {host!r}."
ENTITY_EMPTY = "Host {host} has no lesson on {target}."
RETIRED_NOTICE = "Retired {n} lesson{s} with one reason: decision{s} {seqs}."
# After a decision or a refusal about the pile as a whole, the reviewer is at the form (bottom of the
# page) while the news is in the header: scroll the swapped region's top into view. Field errors stay
# next to their fields, so those responses keep the scroll position.
SHOW_PILE_TOP = "outerHTML show:#pile:top"
TEMPLATE = "review/piles/pile.html"


class _NotFound(Exception):
    def __init__(self, title: str, message: str, status: int = 404):
        super().__init__(message)
        self.title, self.message, self.status = title, message, status


def _entity(params: QueryDict):
    """``(host, detail)`` for the entity in ``params``; raises ``_NotFound`` with the reason."""
    host_name = params.get("host", "").strip()
    subject = params.get("subject", "").strip()
    namespace = params.get("namespace", "").strip()
    if not host_name or not subject:
        raise _NotFound("Which pile?", PILE_PARAMS_MISSING, status=400)
    if "\x00" in host_name + namespace + subject:  # PostgreSQL text cannot hold NUL: no entity has it
        raise _NotFound("Which pile?", PILE_PARAMS_NUL, status=400)
    host = selectors.host_get(name=host_name)
    if host is None:
        raise _NotFound("Unknown host", HOST_UNKNOWN.format(host=host_name))
    detail = selectors.pile_detail(host=host, namespace=namespace, subject=subject)
    if detail is None:
        target = f"entity:{namespace}/{subject}" if namespace else f"entity:{subject}"
        raise _NotFound("No such entity", ENTITY_EMPTY.format(host=host.name, target=target))
    return host, detail


def _all_hashes(detail: selectors.PileDetail) -> list[str]:
    return [x.hash for x in (*detail.members, *detail.not_live)]


def _context(request: HttpRequest, detail: selectors.PileDetail, form: RetireForm | None, **extra) -> dict:
    entity_qs = urlencode(
        {"host": detail.host.name, "namespace": detail.namespace, "subject": detail.subject}
    )
    return {
        "detail": detail,
        "form": form,
        "entity_qs": entity_qs,
        "can_decide": request.user.has_perm(PERM_DECIDE),
        "notice": "",
        "refusal": "",
        **extra,
    }


def _fresh_form(detail: selectors.PileDetail, initial: dict | None = None) -> RetireForm:
    return RetireForm(hashes=_all_hashes(detail), initial={**(initial or {}), "pile_version": detail.version})


@require_GET
@permission_required(PERM_VIEW, raise_exception=True)
def pile(request: HttpRequest) -> HttpResponse:
    """``/pile/?host=&namespace=&subject=``: the entity, whether over budget or within it."""
    try:
        _host, detail = _entity(request.GET)
    except _NotFound as exc:
        return render_problem(request, title=exc.title, message=exc.message, status=exc.status)
    form = _fresh_form(detail) if request.user.has_perm(PERM_DECIDE) else None
    return render_region(request, TEMPLATE, "pile", _context(request, detail, form))


@require_POST
@permission_required(PERM_DECIDE, raise_exception=True)
def pile_retire(request: HttpRequest) -> HttpResponse:
    """POST ``/pile/retire/?host=&namespace=&subject=``: retire the selected members with one reason.

    Success: the fresh pile region (htmx) or a redirect to the pile with a message. Refusals: 422 with the
    form's errors, 409 with the fresh pile when it changed meanwhile (nothing written), 403 when the
    service says the user may not decide. The htmx config in base.html swaps 400/409/422 responses.
    """
    try:
        host, detail = _entity(request.GET)
    except _NotFound as exc:
        return render_problem(request, title=exc.title, message=exc.message, status=exc.status)
    form = RetireForm(request.POST, hashes=_all_hashes(detail))
    if not form.is_valid():
        return render_region(request, TEMPLATE, "pile", _context(request, detail, form), status=422)
    data = form.cleaned_data
    try:
        decisions = lesson_retire(
            host=host,
            hashes=data["members"],
            actor=request.user,
            reason=data["reason"],
            reason_code=data["reason_code"],
            pile_version=data["pile_version"],
        )
    except StalePile as exc:
        _host, fresh = _entity(request.GET)
        kept = {"reason": data["reason"], "reason_code": data["reason_code"] or ""}
        context = _context(request, fresh, _fresh_form(fresh, kept), refusal=str(exc))
        return reswap(render_region(request, TEMPLATE, "pile", context, status=409), SHOW_PILE_TOP)
    except NotAllowed as exc:
        return render_problem(request, title="Not allowed", message=str(exc), status=403)
    except DecisionRefused as exc:
        context = _context(request, detail, form, refusal=str(exc))
        return reswap(render_region(request, TEMPLATE, "pile", context, status=422), SHOW_PILE_TOP)
    n = len(decisions)
    notice = RETIRED_NOTICE.format(
        n=n, s="" if n == 1 else "s", seqs=", ".join(f"#{d.seq}" for d in decisions)
    )
    if not wants_region(request):
        messages.success(request, notice)
        return redirect(pile_href(host.name, detail.namespace, detail.subject))
    _host, fresh = _entity(request.GET)
    context = _context(request, fresh, _fresh_form(fresh), notice=notice)
    return reswap(render_region(request, TEMPLATE, "pile", context), SHOW_PILE_TOP)
