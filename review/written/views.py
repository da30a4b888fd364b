"""The consolidation editor: ``/pile/write/?host=&namespace=&subject=``.

GET opens it prefilled with one line per fact (each fact's keeper). As the reviewer types, htmx posts
the form to ``/pile/write/matrix/`` (debounced) for the coverage matrix of the text against the chosen
members and the waivers still missing; without JavaScript the "Update the matrix" button posts the form
back for the same. POST submits: the service makes a pending draft written by the reviewer and the
browser goes to its page; a refusal (a limit, a missing waiver, a changed pile) re-renders the editor
with the text kept and nothing written (422, or 409 with the fresh pile).
spec: docs/reviewing.md, "Writing a consolidation".
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_http_methods, require_POST

from lessons.core.written import prefill
from review.roles import PERM_DECIDE
from review.services.common import DecisionRefused, NotAllowed, StalePile
from review.services.written import WrittenRefused, consolidation_write
from review.web.decide import not_allowed
from review.web.htmx import render_region
from review.web.links import pile_href
from review.web.lookups import shows_not_found
from review.written.forms import WAIVE_PREFIX, WriteForm
from review.written.lookups import get_write_or_404
from review.written.selectors import WriteDetail, write_matrix

TEMPLATE = "review/written/write.html"
WRITTEN_NOTICE = (
    "Draft {draft} is written and pending: another reviewer must approve it. No model gate runs on a "
    "consolidation written by a reviewer."
)
STALE_KEPT = " Your text is kept; check the members and submit again."


def _context(detail: WriteDetail, form: WriteForm, *, refusal: str = "", errors: tuple = ()) -> dict:
    if form.is_bound:
        text, chosen = form.data.get("text", ""), form.data.getlist("members")
    else:
        text, chosen = form.initial["text"], form.initial["members"]
    return {
        "detail": detail,
        "form": form,
        "text": text,
        "chosen": set(chosen),
        "matrix": write_matrix(detail, text=text, chosen=chosen, waivers=form.waivers()),
        "waive_prefix": WAIVE_PREFIX,
        "refusal": refusal,
        "errors": errors,
        "pile_url": pile_href(detail.host.name, detail.namespace, detail.subject),
        "entity_qs": urlencode(
            {"host": detail.host.name, "namespace": detail.namespace, "subject": detail.subject}
        ),
    }


def _fresh_form(detail: WriteDetail) -> WriteForm:
    initial = {"text": prefill(detail.facts), "members": detail.live_hashes, "pile_version": detail.version}
    return WriteForm(hashes=detail.live_hashes, initial=initial)


@require_http_methods(["GET", "HEAD", "POST"])
@permission_required(PERM_DECIDE, raise_exception=True)
@shows_not_found
def pile_write(request: HttpRequest) -> HttpResponse:
    """GET: the editor, prefilled. POST: submit (or, with ``preview``, just show the matrix again)."""
    detail = get_write_or_404(request.GET)
    if request.method != "POST":
        return render_region(request, TEMPLATE, "write", _context(detail, _fresh_form(detail)))
    form = WriteForm(request.POST, hashes=detail.live_hashes)
    if "preview" in request.POST:
        form.is_valid()
        return render_region(request, TEMPLATE, "write", _context(detail, form))
    if not form.is_valid():
        return render_region(request, TEMPLATE, "write", _context(detail, form), status=422)
    data = form.cleaned_data
    try:
        draft = consolidation_write(
            host=detail.host,
            namespace=detail.namespace,
            subject=detail.subject,
            text=data["text"],
            supersedes=data["members"],
            waivers=form.waivers(),
            actor=request.user,
            pile_version=data["pile_version"],
        )
    except NotAllowed as exc:
        return not_allowed(request, exc)
    except WrittenRefused as exc:
        context = _context(detail, form, errors=tuple(exc.errors))
        return render_region(request, TEMPLATE, "write", context, status=422)
    except StalePile as exc:
        fresh = get_write_or_404(request.GET)
        kept = request.POST.copy()
        kept["pile_version"] = fresh.version
        context = _context(fresh, WriteForm(kept, hashes=fresh.live_hashes), refusal=str(exc) + STALE_KEPT)
        return render_region(request, TEMPLATE, "write", context, status=409)
    except DecisionRefused as exc:
        return render_region(request, TEMPLATE, "write", _context(detail, form, refusal=str(exc)), status=422)
    messages.success(request, WRITTEN_NOTICE.format(draft=draft.ext_id))
    return redirect("review:draft", host=detail.host.name, draft_id=draft.ext_id)


@require_POST
@permission_required(PERM_DECIDE, raise_exception=True)
@shows_not_found
def pile_write_matrix(request: HttpRequest) -> HttpResponse:
    """POST ``/pile/write/matrix/?host=&namespace=&subject=`` with the editor's fields (``text``,
    ``members``, ``waive-<anchor>``): the coverage matrix region of that text (htmx, as the reviewer
    types); the whole editor with those values without htmx. Nothing is written. A POST, not a GET: the
    text and a big pile's member hashes would pass the length a proxy or gunicorn allows a request line
    (4094 bytes by default)."""
    detail = get_write_or_404(request.GET)
    form = WriteForm(request.POST, hashes=detail.live_hashes)
    return render_region(request, TEMPLATE, "matrix", _context(detail, form))
