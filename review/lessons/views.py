"""One lesson version: its text, counters, other versions, verdict history, recurrence, decisions; retire
(a live lesson, with an Undo after it) and restore.

docs/interchange.md ("lesson", "latest verdict"), docs/piles-and-recurrence.md, "Recurrence" (counts),
docs/decisions.md (``restore``).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET, require_POST

from lessons.core.text import hash8
from lessons.recurrence.lesson import lesson_recurrence
from review.lessons import selectors
from review.lessons.forms import RestoreForm, RetireLessonForm
from review.lessons.lookups import get_lesson_or_404
from review.models import Action
from review.roles import PERM_DECIDE, PERM_VIEW
from review.services import decisions
from review.services.common import DecisionRefused, StalePile, UndoStale
from review.web.decide import decide, decision_args
from review.web.format import stale_notice
from review.web.forms import undo_offer
from review.web.fragments import fragment, lesson_in_path, page_version
from review.web.htmx import render_region
from review.web.lookups import shows_not_found

TEMPLATE = "review/lessons/lesson.html"
RECURRENCE_TEMPLATE = "review/lessons/_recurrence_detail.html"
RESTORED_NOTICE = "Restored lesson {short}…: decision #{seq}."
RETIRED_NOTICE = "Retired lesson {short}…: decision #{seq}."


def _context(
    request: HttpRequest,
    detail: selectors.LessonDetail,
    form: RestoreForm | None,
    refusal: str = "",
    retire_form: RetireLessonForm | None = None,
):
    can_decide = request.user.has_perm(PERM_DECIDE)
    can_restore = detail.retracted_by_retire and can_decide
    if can_restore and form is None:
        form = RestoreForm(initial={"pile_version": detail.version})
    can_retire = detail.lesson.status == detail.lesson.Status.LIVE and can_decide
    if can_retire and retire_form is None:
        retire_form = RetireLessonForm(initial={"pile_version": detail.version}, last_live=detail.last_live)
    return {
        "detail": detail,
        "lesson": detail.lesson,
        "form": form if can_restore else None,
        "retire_form": retire_form if can_retire else None,
        "refusal": refusal,
        "recurrence_html": fragment(
            request,
            ("lesson_recurrence_html", detail.lesson.host_id, detail.lesson.hash),
            lambda: _recurrence_html(detail),
        ),
        **_retired_notice(request, detail, can_restore),
    }


def _recurrence_html(detail: selectors.LessonDetail) -> SafeString:
    """The page's recurrence section (``RECURRENCE_TEMPLATE``: timeline, charged corrections, the ones on
    its topic, the same text on other hosts), rendered: it shows nothing but the lesson's data, so the page
    keeps it whole by version (the drawing and the tables cost about a third of a kept page's time)."""
    lesson = detail.lesson
    rec = lesson_recurrence(lesson=lesson, verdicts=lesson.history, versions=list(detail.versions))
    return mark_safe(render_to_string(RECURRENCE_TEMPLATE, {"rec": rec}))  # noqa: S308 - a rendered template


def _retired_notice(request: HttpRequest, detail: selectors.LessonDetail, can_restore: bool) -> dict:
    """After a retire from this page (``?retired=<seq>``): its notice, naming the pending drafts the
    retire made stale (one query, only then), and an Undo while that retire is still the latest decision
    on the lesson."""
    seq = request.GET.get("retired", "")
    latest = detail.decisions[-1] if detail.decisions else None
    if not (can_restore and latest and latest.action == Action.RETIRE and str(latest.seq) == seq):
        return {"notice": "", "undo": None}
    lesson = detail.lesson
    undo = undo_offer(
        action=reverse("review:lesson_restore", args=[lesson.host.name, lesson.hash]),
        hashes=[lesson.hash],
        reason=latest.reason,
        version=detail.version,
        undoes=[latest.seq],
    )
    notice = RETIRED_NOTICE.format(short=hash8(lesson.hash), seq=latest.seq)
    return {"notice": notice + stale_notice(selectors.drafts_made_stale(lesson)), "undo": undo}


@page_version(lesson_in_path)  # its host's, and the hosts holding its text (docs/production.md, "Cache")
@require_GET
@permission_required(PERM_VIEW, raise_exception=True)
@shows_not_found
def lesson(request: HttpRequest, host: str, lesson_hash: str) -> HttpResponse:
    """``/lessons/<host>/<hash>/``: everything known about one lesson version."""
    detail = get_lesson_or_404(host, lesson_hash, request=request)
    return render_region(request, TEMPLATE, "lesson", _context(request, detail, None))


@require_POST
@permission_required(PERM_DECIDE, raise_exception=True)
@shows_not_found
def lesson_restore(request: HttpRequest, host: str, lesson_hash: str) -> HttpResponse:
    """POST ``/lessons/<host>/<hash>/restore/``: make a lesson retired by a decision live again.

    Success redirects to the lesson with a message; a refusal re-renders the page with it (422, or 409
    when the entity changed since the page was loaded), nothing written.
    """
    detail = get_lesson_or_404(host, lesson_hash)

    def act(data: dict):
        return decisions.lesson_restore(
            lesson=detail.lesson,
            undoes=data["undoes"],
            **decision_args(request, data),
        )

    def done(decision) -> HttpResponse:
        messages.success(request, RESTORED_NOTICE.format(short=hash8(lesson_hash), seq=decision.seq))
        return redirect("review:lesson", host=host, lesson_hash=lesson_hash)

    form = RestoreForm(request.POST)
    return decide(
        request,
        form,
        act=act,
        invalid=lambda form: render_region(
            request, TEMPLATE, "lesson", _context(request, detail, form), status=422
        ),
        refused=lambda exc: _refused(request, host, lesson_hash, exc, form, retire=False),
        done=done,
    )


@require_POST
@permission_required(PERM_DECIDE, raise_exception=True)
@shows_not_found
def lesson_retire(request: HttpRequest, host: str, lesson_hash: str) -> HttpResponse:
    """POST ``/lessons/<host>/<hash>/retire/``: retire this live lesson with a reason (the pile's service).

    Success redirects to the lesson with ``?retired=<seq>``: the page then shows the notice and an Undo.
    A refusal re-renders the page with it (422, or 409 when the entity changed), nothing written.
    Issue 12, finding 7; docs/decisions.md, "The actions" (``retire``).
    """
    detail = get_lesson_or_404(host, lesson_hash)
    lesson = detail.lesson

    def act(data: dict):
        (decision,) = decisions.lessons_retire(
            host=lesson.host,
            namespace=lesson.namespace,
            subject=lesson.subject,
            hashes=[lesson.hash],
            **decision_args(request, data),
        )
        return decision

    def invalid(form) -> HttpResponse:
        context = _context(request, detail, None, retire_form=form)
        return render_region(request, TEMPLATE, "lesson", context, status=422)

    def done(decision) -> HttpResponse:
        url = reverse("review:lesson", args=[host, lesson_hash])
        return redirect(f"{url}?retired={decision.seq}")

    form = RetireLessonForm(request.POST, last_live=detail.last_live)
    return decide(
        request,
        form,
        act=act,
        invalid=invalid,
        refused=lambda exc: _refused(request, host, lesson_hash, exc, form, retire=True),
        done=done,
    )


def _refused(request: HttpRequest, host: str, lesson_hash: str, exc: DecisionRefused, form, *, retire: bool):
    """A refused restore or retire: the fresh page with the refusal and a fresh form of the same kind that
    keeps the reason written (409 when the entity changed since the page was loaded, else 422); not the
    "undo:" reason of an Undo refused (``UndoStale``): it names a retire already undone."""
    fresh = get_lesson_or_404(host, lesson_hash)
    kept = {k: form.cleaned_data[k] or "" for k in ("reason", "reason_code")}
    if isinstance(exc, UndoStale):
        kept["reason"] = ""
    extra = {"last_live": fresh.last_live} if retire else {}
    fresh_form = type(form)(initial={**kept, "pile_version": fresh.version}, **extra)
    status = 409 if isinstance(exc, StalePile) else 422
    if retire:
        context = _context(request, fresh, None, refusal=str(exc), retire_form=fresh_form)
    else:
        context = _context(request, fresh, fresh_form, refusal=str(exc))
    return render_region(request, TEMPLATE, "lesson", context, status=status)
