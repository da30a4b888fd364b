"""The one skeleton of a page's write: the posted form, the service, then the answer. docs/reviewing.md.

Every action of the pile, lesson, draft and consolidation pages runs the same steps: a form that is not
valid is shown again (422); the service is called with its cleaned data; the service's ``NotAllowed``
answers 403 with the plain "Not allowed" page; any other ``DecisionRefused`` (a precondition, a stale
view) is shown on the page by the view's own ``refused``; success goes to the view's ``done``. The views
keep only what differs: the service call, how the page is shown again, and the success notice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse

from review.services.common import DecisionRefused, NotAllowed
from review.web.htmx import render_problem

NOT_ALLOWED_TITLE = "Not allowed"


def not_allowed(request: HttpRequest, exc: NotAllowed) -> HttpResponse:
    """403: the page that says what the user may not do (the service's message)."""
    return render_problem(request, title=NOT_ALLOWED_TITLE, message=str(exc), status=403)


def decision_args(request: HttpRequest, data: dict) -> dict:
    """What every decision service takes from a posted decision form's cleaned ``data``, as keyword
    arguments: ``actor`` (the signed-in user), ``reason``, ``reason_code`` (``None`` for none) and
    ``pile_version`` when the form has that field (every decision form but a draft's rejection). A view's
    ``act`` adds only what names the lessons or the draft. docs/decisions.md, "The actions"."""
    args = {"actor": request.user, "reason": data["reason"], "reason_code": data["reason_code"]}
    if "pile_version" in data:
        args["pile_version"] = data["pile_version"]
    return args


def decide(
    request: HttpRequest,
    form: forms.Form,
    *,
    act: Callable[[dict], Any],
    invalid: Callable[[forms.Form], HttpResponse],
    refused: Callable[[DecisionRefused], HttpResponse],
    done: Callable[[Any], HttpResponse],
) -> HttpResponse:
    """Validate ``form``; ``invalid(form)`` when it is not valid (the view answers 422). Else
    ``act(cleaned_data)`` calls the service: ``NotAllowed`` -> 403 (``not_allowed``), any other
    ``DecisionRefused`` -> ``refused(exc)`` (nothing was written), else ``done(result)`` with what the
    service returned."""
    if not form.is_valid():
        return invalid(form)
    try:
        result = act(form.cleaned_data)
    except NotAllowed as exc:
        return not_allowed(request, exc)
    except DecisionRefused as exc:
        return refused(exc)
    return done(result)
