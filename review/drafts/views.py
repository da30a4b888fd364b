"""One consolidation draft: its text beside the lessons it supersedes, what it keeps and drops of each, the
prompt before and after, and the approve / reject / roll back decisions.

Actions post to their own URLs. An htmx post gets the action region back with the header, the body and
the decision list swapped out of band (so a status change shows everywhere at once); a plain post
redirects to the page on success, or renders it with the refusal. Refusals (a gate failed, the actor
drafted or triggered the draft, a member no longer live, a stale pile version, a missing confirmation)
are shown as messages and nothing is written: 422, or 409 with the fresh state when the pile changed.
docs/decisions.md ("The actions", "Stale views are refused"); docs/interchange.md ("draft: a drafted
consolidating lesson").
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_POST

from lessons.core.text import hash8
from lessons.models import Draft
from review.drafts.forms import ApproveForm, RejectForm, RollbackForm
from review.drafts.lookups import get_draft_or_404
from review.drafts.selectors import GATE_NOT_RUN_LABEL, DraftDetail
from review.roles import PERM_DECIDE, PERM_VIEW_DRAFT
from review.services import consolidation
from review.services.common import DecisionRefused, StalePile
from review.services.consolidation import approval_refusal
from review.web.decide import decide, decision_args
from review.web.htmx import render_region, wants_region
from review.web.lookups import shows_not_found

TEMPLATE = "review/drafts/draft.html"
SWAP_TEMPLATE = "review/drafts/_swap.html"

# Texts the page shows; the tests assert them.
BLOCKED_VIEWER = "Deciding on a draft needs the reviewer role; you can read this page."
# What the Decide section says of a rejected draft: a settled outcome, not a refusal.
DECIDED_REJECTED = (
    "This draft was rejected; nothing is left to decide. The decision and its reason are listed below."
)
BLOCKED_ROLLBACK = "The consolidation {short}… is {status}, not live, so there is nothing to roll back."
APPROVED_NOTICE = (
    "Approved draft {draft}: consolidation {short}… is live and supersedes {n} lesson{s}. Decision #{seq}."
)
REJECTED_NOTICE = "Rejected draft {draft}. Decision #{seq}."
ROLLED_BACK_NOTICE = (
    "Rolled back draft {draft}: consolidation {short}… is retracted and its lessons are live again. "
    "Decision #{seq}."
)


def approve_blocked(detail: DraftDetail, user) -> str:
    """Why ``user`` cannot approve this draft now ("" when they can): the role, then the service's own
    answer (``approval_refusal``), which ``draft_approve`` gives again under its locks."""
    if not user.has_perm(PERM_DECIDE):
        return BLOCKED_VIEWER
    return approval_refusal(
        draft=detail.draft, user=user, not_live=detail.not_live, duplicate=detail.duplicate
    )


def rollback_blocked(detail: DraftDetail, user) -> str:
    if not user.has_perm(PERM_DECIDE):
        return BLOCKED_VIEWER
    created = detail.consolidation
    if created is not None and not detail.consolidation_live:
        return BLOCKED_ROLLBACK.format(short=hash8(created.hash), status=created.status)
    return ""


def _context(
    request: HttpRequest,
    detail: DraftDetail,
    *,
    approve: ApproveForm | None = None,
    reject: RejectForm | None = None,
    rollback: RollbackForm | None = None,
    notice: str = "",
    refusal: str = "",
    refused: str = "",
) -> dict:
    """The page's context; ``refused`` names the form (approve, reject, rollback) a refusal is about."""
    return {
        "detail": detail,
        "draft": detail.draft,
        "approve_form": approve or ApproveForm(initial={"pile_version": detail.version}),
        "reject_form": reject or RejectForm(),
        "rollback_form": rollback or RollbackForm(initial={"pile_version": detail.version}),
        "approve_blocked": approve_blocked(detail, request.user),
        "decided_rejected": DECIDED_REJECTED,
        "gate_not_run": GATE_NOT_RUN_LABEL,
        "rollback_blocked": rollback_blocked(detail, request.user),
        "show_rollback": detail.draft.status == Draft.Status.APPROVED and detail.consolidation is not None,
        "can_decide": request.user.has_perm(PERM_DECIDE),
        "notice": notice,
        "refusal": refusal,
        "refused": refused,
    }


def _respond(request: HttpRequest, context: dict, *, status: int = 200) -> HttpResponse:
    """After a post: the action region with the head, body and decisions out of band (htmx), or the page."""
    name = SWAP_TEMPLATE if wants_region(request) else TEMPLATE
    response = render(request, name, context, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response


@require_GET
@permission_required(PERM_VIEW_DRAFT, raise_exception=True)
@shows_not_found
def draft(request: HttpRequest, host: str, draft_id: str) -> HttpResponse:
    """``/drafts/<host>/<draft id>/``: the draft, its coverage of each member, the prompt preview, actions."""
    detail = get_draft_or_404(host, draft_id)
    return render_region(request, TEMPLATE, "draft", _context(request, detail))


def _refused(request, host, draft_id, exc: DecisionRefused, *, which: str, form, fresh_form_class):
    """Re-render after a refusal: the fresh state (nothing was written), the typed reason kept."""
    fresh = get_draft_or_404(host, draft_id)
    kept = {k: form.cleaned_data.get(k) or "" for k in ("reason", "reason_code")}
    initial = {**kept, "pile_version": fresh.version} if fresh_form_class is not RejectForm else kept
    forms = {which: fresh_form_class(initial=initial)}
    status = 409 if isinstance(exc, StalePile) else 422
    return _respond(
        request, _context(request, fresh, **forms, refusal=str(exc), refused=which), status=status
    )


def _invalid(request, detail, *, which: str, form) -> HttpResponse:
    return _respond(request, _context(request, detail, **{which: form}, refused=which), status=422)


def _done(request: HttpRequest, host: str, draft_id: str, notice: str) -> HttpResponse:
    if not wants_region(request):
        messages.success(request, notice)
        return redirect("review:draft", host=host, draft_id=draft_id)
    fresh = get_draft_or_404(host, draft_id)
    return _respond(request, _context(request, fresh, notice=notice))


def _decide(
    request: HttpRequest, host: str, draft_id: str, *, which: str, form_class, act, notice
) -> HttpResponse:
    """The flow the three actions share: the draft, the posted form, the service, then the page.

    ``act(detail, data)`` calls the service with the form's cleaned data and returns its ``Decision``;
    ``notice(detail, decision)`` is the success text. Refusals re-render with the typed reason kept.
    """
    detail = get_draft_or_404(host, draft_id)
    form = form_class(request.POST)
    return decide(
        request,
        form,
        act=lambda data: act(detail, data),
        invalid=lambda form: _invalid(request, detail, which=which, form=form),
        refused=lambda exc: _refused(
            request, host, draft_id, exc, which=which, form=form, fresh_form_class=form_class
        ),
        done=lambda decision: _done(request, host, draft_id, notice(detail, decision)),
    )


@require_POST
@permission_required(PERM_DECIDE, raise_exception=True)
@shows_not_found
def _approve(request: HttpRequest, host: str, draft_id: str) -> HttpResponse:
    """POST ``/drafts/<host>/<draft id>/approve/``: approve with a reason, the pile version seen and, when
    the draft drops a full anchor of a held member, the confirmation."""

    def act(detail, data):
        return consolidation.draft_approve(
            draft=detail.draft,
            **decision_args(request, data),
            confirm_dropped_anchors=data["confirm_dropped_anchors"],
        )

    def notice(detail, decision):
        n = len(detail.draft.supersedes)
        return APPROVED_NOTICE.format(
            draft=draft_id, short=hash8(decision.created_hash), n=n, s="" if n == 1 else "s", seq=decision.seq
        )

    return _decide(request, host, draft_id, which="approve", form_class=ApproveForm, act=act, notice=notice)


@require_POST
@permission_required(PERM_DECIDE, raise_exception=True)
@shows_not_found
def _reject(request: HttpRequest, host: str, draft_id: str) -> HttpResponse:
    """POST ``/drafts/<host>/<draft id>/reject/``: reject a pending or stale draft with a reason."""

    def act(detail, data):
        return consolidation.draft_reject(draft=detail.draft, **decision_args(request, data))

    def notice(detail, decision):
        return REJECTED_NOTICE.format(draft=draft_id, seq=decision.seq)

    return _decide(request, host, draft_id, which="reject", form_class=RejectForm, act=act, notice=notice)


@require_POST
@permission_required(PERM_DECIDE, raise_exception=True)
@shows_not_found
def _rollback(request: HttpRequest, host: str, draft_id: str) -> HttpResponse:
    """POST ``/drafts/<host>/<draft id>/rollback/``: retract an approved, still-live consolidation; its
    lessons are live again."""

    def act(detail, data):
        return consolidation.consolidation_rollback(
            draft=detail.draft,
            **decision_args(request, data),
        )

    def notice(detail, decision):
        return ROLLED_BACK_NOTICE.format(draft=draft_id, short=hash8(decision.lesson_hash), seq=decision.seq)

    return _decide(request, host, draft_id, which="rollback", form_class=RollbackForm, act=act, notice=notice)


def _page_or_action(action: str, decide):
    """The view of ``/drafts/<host>/<id>/<action>/``. A draft id may hold "/" and end in an action's
    name (``"x/approve"``): a GET or HEAD of the address is the page of that draft, since a decision is
    only ever a POST; a POST is ``decide`` on draft ``<id>``. So both drafts ``x`` and ``x/approve`` can be
    opened and decided. docs/interchange.md, "draft: a drafted consolidating lesson" (``id``: any string).
    """

    def view(request: HttpRequest, host: str, draft_id: str) -> HttpResponse:
        if request.method in ("GET", "HEAD"):
            return draft(request, host, f"{draft_id}/{action}")
        return decide(request, host, draft_id)

    view.__doc__ = f"GET: the page of a draft whose id ends in /{action}; POST: {decide.__doc__}"
    view.__name__ = f"draft_{action}"
    return view


draft_approve = _page_or_action("approve", _approve)
draft_reject = _page_or_action("reject", _reject)
draft_rollback = _page_or_action("rollback", _rollback)
