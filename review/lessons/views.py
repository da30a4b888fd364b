"""One lesson version: its text, counters, other versions, verdict history, recurrence, decisions; restore.

spec: interchange.md ("lesson", "latest verdict"), recurrence.md (counts), decisions.md (``restore``).
"""

from __future__ import annotations

import re

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_GET, require_POST

from lessons.selectors.recurrence_lesson import lesson_recurrence
from review.lessons import selectors
from review.lessons.forms import RestoreForm
from review.roles import PERM_DECIDE, PERM_VIEW
from review.services.decisions import DecisionRefused, NotAllowed, StalePile, lesson_restore
from review.web.htmx import render_problem, render_region

LESSON_UNKNOWN = "Host {host!r} has no lesson {hash}."
LESSON_HASH_INVALID = "{hash!r} is not a lesson hash: a lesson is named by its 64 lowercase hex characters."
RESTORED_NOTICE = "Restored lesson {short}…: decision #{seq}."
_HASH = re.compile(r"^[0-9a-f]{64}$")


def _detail_or_problem(request: HttpRequest, host: str, lesson_hash: str):
    if not _HASH.fullmatch(lesson_hash):
        return None, render_problem(
            request, title="Not a lesson", message=LESSON_HASH_INVALID.format(hash=lesson_hash), status=404
        )
    # PostgreSQL text cannot hold NUL, so no host has one (and the query would fail).
    detail = None if "\x00" in host else selectors.lesson_detail(host_name=host, lesson_hash=lesson_hash)
    if detail is None:
        return None, render_problem(
            request,
            title="Unknown lesson",
            message=LESSON_UNKNOWN.format(host=host, hash=lesson_hash),
            status=404,
        )
    return detail, None


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
def lesson(request: HttpRequest, host: str, lesson_hash: str) -> HttpResponse:
    """``/lessons/<host>/<hash>/``: everything known about one lesson version."""
    detail, problem = _detail_or_problem(request, host, lesson_hash)
    if problem:
        return problem
    return render_region(request, "review/lessons/lesson.html", "lesson", _context(request, detail, None))


@require_POST
@permission_required(PERM_DECIDE, raise_exception=True)
def lesson_restore_view(request: HttpRequest, host: str, lesson_hash: str) -> HttpResponse:
    """POST ``/lessons/<host>/<hash>/restore/``: make a lesson retired by a decision live again.

    Success redirects to the lesson with a message; a refusal re-renders the page with it (422, or 409
    when the entity changed since the page was loaded), nothing written.
    """
    detail, problem = _detail_or_problem(request, host, lesson_hash)
    if problem:
        return problem
    form = RestoreForm(request.POST)
    if not form.is_valid():
        return render_region(
            request, "review/lessons/lesson.html", "lesson", _context(request, detail, form), status=422
        )
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
        fresh, _ = _detail_or_problem(request, host, lesson_hash)
        kept = {k: form.cleaned_data[k] or "" for k in ("reason", "reason_code")}
        fresh_form = RestoreForm(initial={**kept, "pile_version": fresh.version})
        status = 409 if isinstance(exc, StalePile) else 422
        context = _context(request, fresh, fresh_form, refusal=str(exc))
        return render_region(request, "review/lessons/lesson.html", "lesson", context, status=status)
    messages.success(request, RESTORED_NOTICE.format(short=lesson_hash[:8], seq=decision.seq))
    return redirect("review:lesson", host=host, lesson_hash=lesson_hash)
