"""The pile queue (``/``: every over-budget entity across hosts, filtered, sorted and paged in the URL) and
one entity's pile: its live members with verdicts and recurrence, its drafts, and retiring members.

The entity is named by query parameters (``?host=…&namespace=…&subject=…``) because a namespace may be
empty. Retiring posts the pile version the reviewer saw; a changed pile is refused with the fresh one
shown and nothing written. docs/piles-and-recurrence.md ("Piles": which entities are piles);
docs/decisions.md, "The actions" and
"Stale views are refused"; README.md (htmx regions).
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import reswap

from lessons.core.text import hash8
from review.piles import selectors
from review.piles.facts import facts_line, mark_forms
from review.piles.forms import ClaimForm, QueueFilterForm, RestoreManyForm, RetireForm
from review.piles.lookups import get_entity_or_404
from review.piles.rows import age_text, member_rows, selected_hashes
from review.piles.tables import QUEUE_PER_PAGE, OrderedRows, QueueTable
from review.roles import PERM_CLAIM, PERM_DECIDE, PERM_VIEW
from review.services import claims
from review.services.claims import CLAIM_MINUTES
from review.services.common import DecisionRefused, NotAllowed, StalePile, UndoStale
from review.services.decisions import lessons_restore, lessons_retire
from review.web.decide import decide, decision_args, not_allowed
from review.web.format import action_term, relative_age, stale_notice
from review.web.forms import undo_offer
from review.web.fragments import fragment, host_in_query, page_version, version_first
from review.web.htmx import render_region, wants_region
from review.web.links import pile_href
from review.web.lookups import shows_not_found
from review.web.paging import keyset_links, page_number, page_size

QUEUE_TEMPLATE = "review/piles/queue.html"
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
RETIRED_NOTICE = "Retired {n} lesson{s} with one reason: decision{s} {seqs}."
RESTORED_NOTICE = "Restored {n} lesson{s} with one reason: decision{s} {seqs}."
CLAIM_NOTICES = {
    "claim": f"You have claimed this pile for {CLAIM_MINUTES} minutes, or until your next decision on it.",
    "renew": f"Your claim is renewed for {CLAIM_MINUTES} minutes, or until your next decision on it.",
    "release": "You released your claim on this pile.",
}
CLAIM_TEMPLATE = "review/piles/_claim.html"
CLAIM_ACTION_UNKNOWN = "Choose claim, renew or release."
# A stale refusal says what came in between (issue 23, newcomer item 12).
STALE_SINCE = "Since you loaded it: {decisions}."
STALE_DECISION = "#{seq} {action}{short} by {actor}"
STALE_MORE = " and {n} more"
STALE_NO_DECISION = "No reviewer's decision changed it: an ingest, a sync or an import did."
STALE_SELECTION_KEPT = "Your reason and the selected lessons that can still be selected are kept."
# After a decision or a refusal about the pile as a whole, the reviewer is at the form (bottom of the
# page) while the news is in the header: scroll the swapped region's top into view. Field errors stay
# next to their fields, so those responses keep the scroll position.
SHOW_PILE_TOP = "outerHTML show:#pile:top"
PILE_TEMPLATE = "review/piles/pile.html"


@require_GET
@permission_required(PERM_VIEW, raise_exception=True)
def queue(request: HttpRequest) -> HttpResponse:
    """``/``: the queue table (25 a page, read by keyset: "previous" / "next" carry a cursor) with host /
    namespace / text filters; the region ``queue`` is what filter, sort and page links swap.
    """
    version_first(request)  # before the rows its table is kept with (review/web/fragments.py)
    typed = request.GET.get("host", "").strip()
    pile_counts = selectors.host_pile_counts(typed if "\x00" not in typed else "")
    form = QueueFilterForm(request.GET, pile_counts=pile_counts)
    filters = form.filters()
    if typed and not filters["host"]:  # an unknown host unsets the filters: the total of every host
        pile_counts = selectors.host_pile_counts()
    sort, _order = selectors.queue_order(request.GET.get("sort"))
    page = selectors.queue_page(
        **filters,
        sort=sort,
        per_page=page_size(request, QUEUE_PER_PAGE),
        number=page_number(request),
        after=request.GET.get("after"),
        before=request.GET.get("before"),
        pile_counts=pile_counts,
    )
    # The page's claims came with its rows: the marker costs no query.
    claims = selectors.claims_of_rows(list(page.rows))
    table_html = _queue_table_html(request, sort, page.rows, claims)
    empty_reason = None
    if page.total == 0:
        empty_reason = selectors.queue_empty_reason(filtered=any(filters.values()), host=filters["host"])
    context = {
        "form": form,
        "table_html": table_html,
        "page": page,
        "page_links": keyset_links(request, page),
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
    return render_region(request, QUEUE_TEMPLATE, "queue", context)


def _queue_table_html(request: HttpRequest, sort: str, rows, claims: dict) -> SafeString:
    """The queue's table (``QueueTable`` of ``rows`` ordered by ``sort``, ``claims`` its rows' live claims),
    kept by data version (``review.web.fragments``) with what else it shows: the address (filters, sort,
    page), each row's claim as shown ("claimed by rita, 3 min ago") and each row's age as shown. The table
    is made only when the part is built (~3.5 ms of django-tables2's column copies a queue view)."""
    now = timezone.now()
    shown_claims = tuple(sorted((key, c.username, c.minutes_ago) for key, c in claims.items()))
    ages = tuple(relative_age(r["oldest"], now) if r["oldest"] else "" for r in rows)
    key = ("queue_table", request.get_full_path(), shown_claims, ages)

    def build() -> SafeString:
        table = QueueTable(OrderedRows(rows), order_by=sort)
        table.claims = claims
        return SafeString(table.as_html(request))

    return fragment(request, key, build)


def _all_hashes(detail: selectors.PileDetail) -> list[str]:
    return [x.hash for x in (*detail.members, *detail.not_live)]


def _entity_qs(detail: selectors.PileDetail) -> str:
    return urlencode({"host": detail.host.name, "namespace": detail.namespace, "subject": detail.subject})


def _claim_context(request: HttpRequest, detail: selectors.PileDetail, **extra) -> dict:
    """What the claim box shows: the live claim (one query), whether it is the user's, whether they may
    claim at all (viewers see the claim, without buttons)."""
    claim = selectors.claim_shown(host=detail.host, namespace=detail.namespace, subject=detail.subject)
    return {
        "claim": claim,
        "claim_mine": bool(claim) and claim.held_by(request.user),
        "can_claim": request.user.has_perm(PERM_CLAIM),
        "claim_minutes": CLAIM_MINUTES,
        "entity_qs": _entity_qs(detail),
        "claim_notice": "",
        "claim_refusal": "",
        **extra,
    }


def _restore_form(detail: selectors.PileDetail, data=None, initial: dict | None = None) -> RestoreManyForm:
    return RestoreManyForm(
        data,
        hashes=[x.hash for x in detail.restorable],
        initial={**(initial or {}), "pile_version": detail.version, "seen_seq": detail.seen_seq},
    )


def pile_context(
    request: HttpRequest, detail: selectors.PileDetail, form: RetireForm | None, **extra
) -> dict:
    can_decide = request.user.has_perm(PERM_DECIDE)
    restore_form = extra.pop("restore_form", None)
    if restore_form is None and can_decide and detail.restorable:
        restore_form = _restore_form(detail)
    keepers = frozenset(extra.pop("keepers", ()))
    marks = {}
    if can_decide and detail.members:
        marks = {key: extra.pop(key, None) for key in ("merge_form", "split_form")}
        if marks["merge_form"] is None:
            marks = mark_forms(detail)
    return {
        **_claim_context(request, detail),
        "detail": detail,
        "facts_line": facts_line(
            rules=detail.count, facts=detail.fact_count, umbrellas=detail.umbrella_count
        ),
        # "Resolve by facts" is offered only when it would select something (a fact of two rules or more).
        "resolvable": detail.restatement_count > 0,
        "member_rows": _member_rows(request, detail, form, keepers),
        "form": form,
        "restore_form": restore_form if can_decide else None,
        "can_decide": can_decide,
        "notice": "",
        "refusal": "",
        "undo": None,
        "resolve": None,
        **marks,
        **extra,
    }


def _member_rows(
    request: HttpRequest, detail: selectors.PileDetail, form: RetireForm | None, keepers: frozenset[str]
) -> SafeString:
    """The member table's body (``member_rows``), kept by data version (``review.web.fragments``) with what
    else it shows: the role (a form or not), the selection, the picked keepers and each member's age."""
    now = timezone.now()
    selected = selected_hashes(form)
    entity_qs = _entity_qs(detail)

    def build() -> SafeString:
        return member_rows(
            detail, form=form, selected=selected, entity_qs=entity_qs, now=now, keepers=keepers
        )

    ages = tuple(age_text(m.created_at, now) for m in detail.members)
    key = ("pile_rows", detail.host.pk, entity_qs, form is None, sorted(selected), sorted(keepers), ages)
    return fragment(request, key, build)


def retire_form(detail: selectors.PileDetail, initial: dict | None = None) -> RetireForm:
    initial = {**(initial or {}), "pile_version": detail.version, "seen_seq": detail.seen_seq}
    return RetireForm(hashes=_all_hashes(detail), live=detail.member_hashes, initial=initial)


@page_version(host_in_query)  # its host's data only (docs/production.md, "Cache")
@require_GET
@permission_required(PERM_VIEW, raise_exception=True)
@shows_not_found
def pile(request: HttpRequest) -> HttpResponse:
    """``/pile/?host=&namespace=&subject=``: the entity, whether over budget or within it.

    ``&keep={fact}`` (the "keep one of this fact" link without JavaScript) pre-selects every member of
    that fact but its suggested keeper; an unknown fact pre-selects nothing. ``&merge={fact}`` and
    ``&split={member}`` (the "same fact as…" and "take out" links) pre-fill the mark forms.
    """
    version_first(request)  # before the host its kept detail carries (review/web/fragments.py)
    _host, detail = get_entity_or_404(request.GET, request=request)
    form = None
    extra = {}
    if request.user.has_perm(PERM_DECIDE):
        fact = detail.fact_named(request.GET.get("keep", ""))
        form = retire_form(detail, {"members": list(fact.others)} if fact else None)
        if detail.members:
            initial = {
                "merge": {"fact": request.GET.get("merge", "")},
                "split": {"member": request.GET.get("split", "")},
            }
            extra = mark_forms(detail, initial=initial)
    return render_region(request, PILE_TEMPLATE, "pile", pile_context(request, detail, form, **extra))


@require_POST
@permission_required(PERM_DECIDE, raise_exception=True)
@shows_not_found
def pile_retire(request: HttpRequest) -> HttpResponse:
    """POST ``/pile/retire/?host=&namespace=&subject=``: retire the selected members with one reason.

    Success: the fresh pile region (htmx) or a redirect to the pile with a message. Refusals: 422 with the
    form's errors (a selection of every live lesson without "Yes, retire all N" ticked among them), 409
    with the fresh pile when it changed meanwhile (nothing written), 403 when the service says the user
    may not decide. The htmx config in base.html swaps 400/409/422 responses.
    """
    host, detail = get_entity_or_404(request.GET)

    def act(data: dict):
        return lessons_retire(
            host=host,
            namespace=detail.namespace,
            subject=detail.subject,
            hashes=data["members"],
            **decision_args(request, data),
        )

    def invalid(form) -> HttpResponse:
        return render_region(request, PILE_TEMPLATE, "pile", pile_context(request, detail, form), status=422)

    def refused(exc: DecisionRefused) -> HttpResponse:
        if isinstance(exc, StalePile):
            return _refused_fresh(request, form.cleaned_data, exc, restoring=False)
        context = pile_context(request, detail, form, refusal=str(exc))
        return reswap(render_region(request, PILE_TEMPLATE, "pile", context, status=422), SHOW_PILE_TOP)

    def done(decisions) -> HttpResponse:
        data = form.cleaned_data
        notice = _seqs_notice(RETIRED_NOTICE, decisions) + stale_notice(detail.made_stale(data["members"]))
        if not wants_region(request):
            messages.success(request, notice)
            return redirect(pile_href(host.name, detail.namespace, detail.subject))
        _host, fresh = get_entity_or_404(request.GET)
        undo = undo_offer(
            action=reverse("review:pile_restore") + "?" + _entity_qs(fresh),
            hashes=[d.lesson_hash for d in decisions],
            reason=data["reason"],
            version=fresh.version,
            undoes=[d.seq for d in decisions],
            htmx_target="#pile",
        )
        context = pile_context(request, fresh, retire_form(fresh), notice=notice, undo=undo)
        return reswap(render_region(request, PILE_TEMPLATE, "pile", context), SHOW_PILE_TOP)

    form = RetireForm(request.POST, hashes=_all_hashes(detail), live=detail.member_hashes)
    return decide(request, form, act=act, invalid=invalid, refused=refused, done=done)


def _refused_fresh(
    request: HttpRequest, data: dict, exc: DecisionRefused, *, restoring: bool
) -> HttpResponse:
    """A retire (``restoring`` False) or restore the service refused: the fresh pile, which may have
    changed, with the refusal on top and the reason kept in the form that was sent; 409 when the pile
    changed (``StalePile``), else 422. Nothing was written. A stale refusal names the decisions on the
    entity since the page was built (or says no decision changed it), and the selection keeps the
    lessons that can still be selected (issue 23, newcomer item 12). An Undo refused (``UndoStale``) names
    the decisions since the retire it reverses and keeps neither its selection nor its "undo:" reason: they
    name a retire already undone."""
    host, fresh = get_entity_or_404(request.GET)
    undone = isinstance(exc, UndoStale)
    kept = {"reason": "" if undone else data["reason"], "reason_code": data["reason_code"] or ""}
    refusal = str(exc)
    if isinstance(exc, StalePile):
        seen = max(data["undoes"]) if undone else data.get("seen_seq")
        refusal += " " + _what_changed(host, fresh, seen)
    if restoring:
        still = {x.hash for x in fresh.restorable}
        kept["lessons"] = [] if undone else [h for h in data["lessons"] if h in still]
        context = pile_context(
            request,
            fresh,
            retire_form(fresh),
            refusal=refusal,
            restore_form=_restore_form(fresh, None, kept),
        )
    else:
        still = {x.hash for x in fresh.members}
        kept["members"] = [h for h in data["members"] if h in still]
        context = pile_context(request, fresh, retire_form(fresh, kept), refusal=refusal)
    status = 409 if isinstance(exc, StalePile) else 422
    return reswap(render_region(request, PILE_TEMPLATE, "pile", context, status=status), SHOW_PILE_TOP)


def _what_changed(host, fresh: selectors.PileDetail, seen_seq: int | None) -> str:
    """What a stale refusal adds: the decisions since ``seen_seq`` ("Since you loaded it: #12 retire a
    lesson (retire) 3d46cb35… by rob, …"; ``action_term``), or that no decision changed the pile (an
    ingest, a sync or an import did); the form of a page older than ``seen_seq`` only says the selection
    was kept."""
    kept = STALE_SELECTION_KEPT
    if seen_seq is None:
        return kept
    between, total = selectors.decisions_since(
        host=host, namespace=fresh.namespace, subject=fresh.subject, seq=seen_seq
    )
    if not between:
        return STALE_NO_DECISION + " " + kept
    named = ", ".join(
        STALE_DECISION.format(
            seq=d.seq,
            action=action_term(d.action),
            actor=d.actor,
            short=f" {hash8(d.lesson_hash)}…" if d.lesson_hash else "",
        )
        for d in between
    )
    more = STALE_MORE.format(n=total - len(between)) if total > len(between) else ""
    return STALE_SINCE.format(decisions=named + more) + " " + kept


def _seqs_notice(template: str, decisions) -> str:
    n = len(decisions)
    return template.format(n=n, s="" if n == 1 else "s", seqs=", ".join(f"#{d.seq}" for d in decisions))


@require_POST
@permission_required(PERM_DECIDE, raise_exception=True)
@shows_not_found
def pile_restore(request: HttpRequest) -> HttpResponse:
    """POST ``/pile/restore/?host=&namespace=&subject=``: restore the selected retired lessons of the pile
    with one reason, in one transaction (the retire notice's Undo posts here too). Issue 12, finding 7.

    Success: the fresh pile region (htmx) or a redirect with a message; 422 with the form's errors or the
    service's refusal, 409 with the fresh pile when it changed (nothing written), 403 not allowed.
    """
    host, detail = get_entity_or_404(request.GET)

    def act(data: dict):
        return lessons_restore(
            host=host,
            namespace=detail.namespace,
            subject=detail.subject,
            hashes=data["lessons"],
            undoes=data["undoes"],
            **decision_args(request, data),
        )

    def invalid(form) -> HttpResponse:
        context = pile_context(request, detail, retire_form(detail), restore_form=form)
        return render_region(request, PILE_TEMPLATE, "pile", context, status=422)

    form = _restore_form(detail, request.POST)
    return decide(
        request,
        form,
        act=act,
        invalid=invalid,
        refused=lambda exc: _refused_fresh(request, form.cleaned_data, exc, restoring=True),
        done=lambda decisions: pile_done(request, detail, _seqs_notice(RESTORED_NOTICE, decisions)),
    )


def pile_done(request: HttpRequest, detail: selectors.PileDetail, notice: str) -> HttpResponse:
    """After a change to the pile (a restore, a mark): the fresh pile region with ``notice`` on top
    (htmx), or a redirect to the pile with it as a message."""
    if not wants_region(request):
        messages.success(request, notice)
        return redirect(pile_href(detail.host.name, detail.namespace, detail.subject))
    _host, fresh = get_entity_or_404(request.GET)
    context = pile_context(request, fresh, retire_form(fresh), notice=notice)
    return reswap(render_region(request, PILE_TEMPLATE, "pile", context), SHOW_PILE_TOP)


@require_POST
@permission_required(PERM_CLAIM, raise_exception=True)
@shows_not_found
def pile_claim(request: HttpRequest) -> HttpResponse:
    """POST ``/pile/claim/?host=&namespace=&subject=`` with ``do`` = ``claim``, ``renew`` or ``release``:
    the user's claim on the pile (15 minutes; no reason: a claim is not a decision). Issue 12, Build 3.

    htmx: the claim box alone (``#claim``), 422 with the refusal in it; otherwise a redirect to the pile
    with a message. Viewers get 403 (``review.claim_pile``).
    """
    host, detail = get_entity_or_404(request.GET)
    form = ClaimForm(request.POST)
    action = form.cleaned_data["do"] if form.is_valid() else ""
    services = {
        "claim": claims.pile_claim,
        "renew": claims.pile_claim_renew,
        "release": claims.pile_claim_release,
    }
    status, notice, refusal = 200, "", ""
    if action not in services:
        status, refusal = 422, CLAIM_ACTION_UNKNOWN
    else:
        try:
            services[action](host=host, namespace=detail.namespace, subject=detail.subject, user=request.user)
            notice = CLAIM_NOTICES[action]
        except NotAllowed as exc:
            return not_allowed(request, exc)
        except DecisionRefused as exc:
            status, refusal = 422, str(exc)
    if not wants_region(request):
        (messages.success if notice else messages.error)(request, notice or refusal)
        return redirect(pile_href(host.name, detail.namespace, detail.subject))
    context = _claim_context(request, detail, claim_notice=notice, claim_refusal=refusal)
    return render_region(request, CLAIM_TEMPLATE, "claim", context, status=status)
