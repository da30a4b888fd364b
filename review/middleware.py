"""Middleware of the review site: what every answer to a signed-in user carries, the body limits, and how
every page shows characters a person cannot see.

spec: issue 13 ("Deployment"): ``Cache-Control: no-store`` on signed-in pages, so that neither a shared
cache nor the browser's back button shows a reviewer's pages (or exports) to the next person at the desk.
Issue 21 (fault 7): a body over its route's limit is refused before anything reads it
(review/request_body.py); (fault 6) a sign-in from an address with too many failures is refused before
any password is hashed (review/signin.py); ("also seen") control and bidi formatting characters in shown
text are made visible.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.conf import settings
from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, HttpResponseNotModified, JsonResponse
from django.template import loader
from django.urls import Resolver404, resolve, reverse
from django.utils.cache import patch_cache_control

from lessons.core.text import has_invisible_utf8, visible_controls
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
from review.signin import address_failures, client_address
from review.web.conditional import etag, matches
from review.web.fragments import view_version
from review.web.paths import ADMIN_PREFIX

TITLE_TOO_LARGE = "Request too large"
TITLE_LENGTH_REQUIRED = "Length required"
TITLE_BAD_LENGTH = "Bad request"
TITLE_SIGNIN_PAUSED = "Sign-in paused"
SIGNIN_PAUSED_ADDRESS = (
    "Too many failed sign-ins from your address ({address}): signing in from here is paused for every "
    "username, for up to {minutes} minutes after the last failure. Try again later, or ask an admin to "
    "lift the pause."
)


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


class ConditionalPagesMiddleware:
    """Conditional requests of the signed-in pages (issue 25): a GET or HEAD of a page (not the API, which
    answers its own, nor the admin) carries an ``ETag`` of the page's data version, read (the URL resolved
    for it) before the view reads anything (``review.web.fragments.view_version``: the global
    version, or for a page of one host (the pile, lesson and host pages) that host's, which a write on
    another host leaves as it is; the page's kept parts use the same), and of what else the page depends
    on: the full path, the user and session, the htmx headers (a region is another answer than its page)
    and the minute (ages and claims are shown in minutes). ``If-None-Match`` holding it is answered
    ``304`` without running the view, unless messages wait to be shown. The pages stay ``no-store``: a
    browser does not keep them, so it is the htmx polls that send the tag they were given
    (static/js/app.js). Needs the session, authentication and messages middleware before it.
    docs/production.md, "Cache"."""

    HTMX_HEADERS = ("HX-Request", "HX-Target", "HX-Trigger", "HX-Trigger-Name", "HX-History-Restore-Request")

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def _tag(self, request: HttpRequest) -> str | None:
        user = getattr(request, "user", None)
        path = request.path_info
        if request.method not in ("GET", "HEAD") or user is None or not user.is_authenticated:
            return None
        if path.startswith(API_PREFIX) or path.startswith(ADMIN_PREFIX):
            return None
        try:
            # the view says which version its page reads; resolved here (Django resolves again for a
            # view that runs), so that a 304 is answered before the view middleware and the rest
            match = resolve(path, getattr(request, "urlconf", None))
            view, kwargs = match.func, match.kwargs
        except Resolver404:  # the 404 page: the global version
            view, kwargs = None, {}
        try:
            version = view_version(request, view, kwargs)
        except DatabaseError:  # the view meets it again and answers it, as without this
            return None
        session = getattr(request, "session", None)
        minute = str(int(time.time() // 60))
        hx = tuple(request.headers.get(name, "") for name in self.HTMX_HEADERS)
        key = session.session_key if session is not None else ""
        return etag(version, (request.get_full_path(), str(user.pk), key or "", minute, *hx))

    def __call__(self, request: HttpRequest) -> HttpResponse:
        tag = self._tag(request)
        if tag is not None and matches(request, tag) and not _messages_waiting(request):
            response: HttpResponse = HttpResponseNotModified()
            response["ETag"] = tag
            return response
        response = self.get_response(request)
        html = response.get("Content-Type", "").startswith("text/html")
        if tag is not None and response.status_code == 200 and html and not response.streaming:
            response["ETag"] = tag
        return response


def _messages_waiting(request: HttpRequest) -> bool:
    storage = getattr(request, "_messages", None)
    return storage is not None and len(storage) > 0


class BodyLimitMiddleware:
    """Refuses, before anything reads it, a request body over its route's limit (``route_body_limit``):
    413 for a declared ``Content-Length`` over it, 400 for one that is not a number, and 411 for a chunked
    body outside the API (Django would take it as empty; the API reads and counts its own,
    ``request_body_read``). Anonymous or signed in alike: it stands before the session, CSRF and the
    sign-in. The answer is the API's JSON error under ``/api/``, a one-line alert to an htmx request, else
    a page (templates/refused.html)."""

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
        response = _page(title, sentence)
    response.status_code = refused.status
    return response


class SignInLimitMiddleware:
    """Refuses a sign-in (a POST to the sign-in page) from a client address with
    ``SIGNIN_FAILURES_PER_ADDRESS`` failures or more (``review.signin.address_failures``): 429 with
    ``Retry-After`` and a page saying so, before the form is read or any password hashed (one query).
    docs/production.md, "Limits"."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        # the only sign-in form: the admin's signs no one in (review/admin_site.py)
        if request.method == "POST" and request.path_info == reverse("login"):
            address = client_address(request)
            if address_failures(address) >= settings.SIGNIN_FAILURES_PER_ADDRESS:
                return _signin_paused(address)
            response = self.get_response(request)
            if response.status_code == 429 and not response.has_header("Retry-After"):
                # django-axes' lockout of one username from one address: its page says how long, so
                # does the header (the attacker's finding 14)
                response["Retry-After"] = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
            return response
        return self.get_response(request)


def _signin_paused(address: str) -> HttpResponse:
    seconds = int(settings.AXES_COOLOFF_TIME.total_seconds())
    sentence = SIGNIN_PAUSED_ADDRESS.format(address=address, minutes=seconds // 60)
    response = _page(TITLE_SIGNIN_PAUSED, sentence)
    response.status_code = 429
    response["Retry-After"] = str(seconds)
    return response


def _page(title: str, sentence: str) -> HttpResponse:
    """templates/refused.html: a page that stands alone (no session, no user yet) with one sentence."""
    return HttpResponse(loader.get_template("refused.html").render({"title": title, "sentence": sentence}))


class VisibleControlsMiddleware:
    """Every HTML answer (pages, htmx regions, error pages, the admin) shows each control and bidi
    formatting character as its code point, ``⟨U+202E⟩`` (``lessons.core.text.visible_controls``).

    One place instead of a filter in every template: lesson text, entity names, reasons and every other
    host-supplied field reach pages through many templates and table cells, and the project's own markup
    holds none of these characters, so the whole page can be rewritten. Autoescaping has already run, so
    a mark (plain text, no markup) is safe in text and in attribute values alike. The database keeps the
    text as it came (it is evidence). docs/interchange.md, "Control characters in shown text".
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.streaming or not response.get("Content-Type", "").startswith("text/html"):
            return response
        if response.charset.lower().replace("_", "-") in ("utf-8", "utf8") and not has_invisible_utf8(
            response.content
        ):
            return response  # nothing to mark: the page is not decoded (~7 ms of a 600 KB pile page)
        text = response.content.decode(response.charset, errors="surrogateescape")
        shown = visible_controls(text)
        if shown is not text:
            response.content = shown.encode(response.charset, errors="surrogateescape")
            if response.has_header("Content-Length"):
                response["Content-Length"] = str(len(response.content))
        return response
