"""Middleware of the review site: what every answer to a signed-in user carries, and the body limits.

spec: issue 13 ("Deployment"): ``Cache-Control: no-store`` on signed-in pages, so that neither a shared
cache nor the browser's back button shows a reviewer's pages (or exports) to the next person at the desk.
Issue 21 (fault 7): a body over its route's limit is refused before anything reads it
(review/request_body.py).
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from django.utils.cache import patch_cache_control

from review.request_body import (
    API_PREFIX,
    E_LENGTH_REQUIRED,
    E_LENGTH_REQUIRED_DETAIL,
    PAGE_LENGTH_REQUIRED,
    PAGE_TOO_LARGE,
    BodyRefused,
    body_too_large,
    chunked,
    declared_length,
    route_body_limit,
)

TITLE_TOO_LARGE = "Request too large"
TITLE_LENGTH_REQUIRED = "Length required"
TITLE_BAD_LENGTH = "Bad request"


class NoStoreWhenSignedInMiddleware:
    """Adds ``no-store`` to ``Cache-Control`` of every answer to a signed-in user (pages, htmx regions,
    exports, the admin). Needs ``AuthenticationMiddleware`` before it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        user = getattr(request, "user", None)
        if user is not None and user.is_authenticated:
            patch_cache_control(response, no_store=True, private=True)
        return response


class BodyLimitMiddleware:
    """Refuses, before anything reads it, a request body over its route's limit (``route_body_limit``):
    413 for a declared ``Content-Length`` over it, 400 for one that is not a number, and 411 for a chunked
    body outside the API (Django would take it as empty; the API reads and counts its own,
    ``request_body_read``). Anonymous or signed in alike: it stands before the session, CSRF and the
    sign-in. The answer is the API's JSON error under ``/api/``, a one-line alert to an htmx request, else
    a page (templates/body_refused.html)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            length = declared_length(request)
        except BodyRefused as refused:
            return _refusal(request, refused, TITLE_BAD_LENGTH, refused.message)
        limit, what = route_body_limit(request.path_info)
        if length is not None and length > limit:
            sentence = PAGE_TOO_LARGE.format(size=length, limit=limit, what=what)
            return _refusal(request, body_too_large(limit), TITLE_TOO_LARGE, sentence)
        if length is None and chunked(request) and not request.path_info.startswith(API_PREFIX):
            refused = BodyRefused(411, E_LENGTH_REQUIRED, [E_LENGTH_REQUIRED_DETAIL])
            return _refusal(request, refused, TITLE_LENGTH_REQUIRED, PAGE_LENGTH_REQUIRED)
        return self.get_response(request)


def _refusal(request: HttpRequest, refused: BodyRefused, title: str, sentence: str) -> HttpResponse:
    if request.path_info.startswith(API_PREFIX):
        response: HttpResponse = JsonResponse(
            {"error": refused.message, "details": refused.details}, status=refused.status
        )
    elif request.headers.get("HX-Request"):
        response = HttpResponse(f'<div class="notice notice-error" role="alert">{sentence}</div>')
    else:
        page = loader.get_template("body_refused.html").render({"title": title, "sentence": sentence})
        response = HttpResponse(page)
    response.status_code = refused.status
    return response
