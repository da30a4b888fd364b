"""Middleware of the review site: what every answer to a signed-in user carries, and how every page
shows characters a person cannot see.

spec: issue 13 ("Deployment"): ``Cache-Control: no-store`` on signed-in pages, so that neither a shared
cache nor the browser's back button shows a reviewer's pages (or exports) to the next person at the desk.
issue 21 ("also seen"): control and bidi formatting characters in shown text are made visible.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control

from lessons.core.text import visible_controls


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


class VisibleControlsMiddleware:
    """Every HTML answer (pages, htmx regions, error pages, the admin) shows each control and bidi
    formatting character as its code point, ``⟨U+202E⟩`` (``lessons.core.text.visible_controls``).

    One place instead of a filter in every template: lesson text, entity names, reasons and every other
    host-supplied field reach pages through many templates and table cells, and the project's own markup
    holds none of these characters, so the whole page can be rewritten. Autoescaping has already run, so
    a mark (plain text, no markup) is safe in text and in attribute values alike. The database keeps the
    text as it came (it is evidence). spec: interchange.md, "Control characters in shown text".
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.streaming or not response.get("Content-Type", "").startswith("text/html"):
            return response
        text = response.content.decode(response.charset, errors="surrogateescape")
        shown = visible_controls(text)
        if shown is not text:
            response.content = shown.encode(response.charset, errors="surrogateescape")
            if response.has_header("Content-Length"):
                response["Content-Length"] = str(len(response.content))
        return response
