"""One lesson version: its text, counters, other versions, verdict history, recurrence, decisions; restore.

spec: interchange.md ("lesson", "latest verdict"), recurrence.md (counts), decisions.md (``restore``).
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from lessons.recurrence.lesson import lesson_recurrence
from review.lessons import selectors
from review.lessons.forms import RestoreForm
from review.roles import PERM_DECIDE, PERM_VIEW
from review.services.common import DecisionRefused, NotAllowed, StalePile
from review.services.decisions import lesson_restore
from review.web.htmx import render_problem, render_region
from review.web.lookups import get_lesson_or_404, shows_not_found

TEMPLATE = "review/lessons/lesson.html"
RESTORED_NOTICE = "Restored lesson {short}…: decision #{seq}."


def _context(
    request: HttpRequest, detail: selectors.LessonDetail, form: RestoreForm | None, refusal: str = ""
):
    can_restore = detail.retracted_by_retire and request.user.has_perm(PERM_DECIDE)
    if can_restore and form is None:
        form = RestoreForm(initial={"pile_version": detail.version})
    return {
        "detail": detail,
        "lesson": detail.lesson,
        "form": form if can_restore else None,
        "refusal": refusal,
        "rec": lesson_recurrence(lesson=detail.lesson, verdicts=detail.lesson.history),
    }


@require_GET
@permission_required(PERM_VIEW, raise_exception=True)
@shows_not_found
def lesson(request: HttpRequest, host: str, lesson_hash: str) -> HttpResponse:
    """``/lessons/<host>/<hash>/``: everything known about one lesson version."""
    detail = get_lesson_or_404(host, lesson_hash)
    return render_region(request, TEMPLATE, "lesson", _context(request, detail, None))


@require_POST
@permission_required(PERM_DECIDE, raise_exception=True)
@shows_not_found
def lesson_restore_view(request: HttpRequest, host: str, lesson_hash: str) -> HttpResponse:
    """POST ``/lessons/<host>/<hash>/restore/``: make a lesson retired by a decision live again.

    Success redirects to the lesson with a message; a refusal re-renders the page with it (422, or 409
    when the entity changed since the page was loaded), nothing written.
    """
    detail = get_lesson_or_404(host, lesson_hash)
    form = RestoreForm(request.POST)
    if not form.is_valid():
        return render_region(request, TEMPLATE, "lesson", _context(request, detail, form), status=422)
    try:
        decision = lesson_restore(
            lesson=detail.lesson,
            actor=request.user,
            reason=form.cleaned_data["reason"],
            reason_code=form.cleaned_data["reason_code"],
            pile_version=form.cleaned_data["pile_version"],
        )
    except NotAllowed as exc:
        return render_problem(request, title="Not allowed", message=str(exc), status=403)
    except DecisionRefused as exc:
        fresh = get_lesson_or_404(host, lesson_hash)
        kept = {k: form.cleaned_data[k] or "" for k in ("reason", "reason_code")}
        fresh_form = RestoreForm(initial={**kept, "pile_version": fresh.version})
        status = 409 if isinstance(exc, StalePile) else 422
        context = _context(request, fresh, fresh_form, refusal=str(exc))
        return render_region(request, TEMPLATE, "lesson", context, status=status)
    messages.success(request, RESTORED_NOTICE.format(short=lesson_hash[:8], seq=decision.seq))
    return redirect("review:lesson", host=host, lesson_hash=lesson_hash)
