"""Middleware of the review site: what every answer to a signed-in user carries.

spec: issue 13 ("Deployment"): ``Cache-Control: no-store`` on signed-in pages, so that neither a shared
cache nor the browser's back button shows a reviewer's pages (or exports) to the next person at the desk.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.utils.cache import patch_cache_control


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
