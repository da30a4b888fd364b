"""The JSON API at ``/api/v1/`` (``config/urls.py``): ``endpoints`` (the five endpoints on one NinjaAPI),
``auth`` (bearer tokens, scopes), ``conditional`` (ETag and 304 on reads), ``errors`` (error bodies and
handlers), ``schemas``, ``selectors``.
"""

from __future__ import annotations

import functools

from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpRequest, HttpResponseNotAllowed, JsonResponse
from django.urls import URLPattern, URLResolver, path

from review.api.conditional import conditional
from review.api.endpoints import api
from review.api.errors import E_METHOD, E_NO_ENDPOINT, E_NOT_FOUND, plain_error


def _api_view(view, *, conditional_reads: bool = False):
    """Exempt from the login redirect (the API authenticates by token, not session), answer reads
    conditionally (``review.api.conditional``: ETag, 304) and answer a 404 or a 405 that ninja leaves to
    Django with the API's error body."""

    @functools.wraps(view)  # keeps csrf_exempt: bearer calls carry no CSRF token
    def wrapper(request: HttpRequest, *args, **kwargs):
        try:
            if conditional_reads:
                response = conditional(view, request, *args, **kwargs)
            else:
                response = view(request, *args, **kwargs)
        except Http404:
            return plain_error(404, E_NOT_FOUND, [f"{E_NO_ENDPOINT}: {request.path}"])
        if isinstance(response, HttpResponseNotAllowed):
            allowed = plain_error(405, E_METHOD, [f"allowed: {response.get('Allow', '')}"])
            allowed["Allow"] = response.get("Allow", "")  # RFC 9110: a 405 names what is allowed
            return allowed
        return response

    return login_not_required(wrapper)


@login_not_required
def _unknown_endpoint(request: HttpRequest, rest: str = "") -> JsonResponse:
    return plain_error(404, E_NOT_FOUND, [f"{E_NO_ENDPOINT}: {request.path}"])


# The endpoints whose reads answer conditionally: those that read the data (not the schema's pages).
CONDITIONAL = frozenset({"piles", "lesson", "decisions", "job"})


def _wrap(patterns: list) -> None:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            _wrap(pattern.url_patterns)
        elif isinstance(pattern, URLPattern):
            pattern.callback = _api_view(pattern.callback, conditional_reads=pattern.name in CONDITIONAL)


def api_urls():
    """``api.urls`` with every view wrapped by ``_api_view``, then a JSON 404 for any other path under
    the mount point: for ``path("api/v1/", api_urls())``."""
    patterns, app_name, namespace = api.urls
    _wrap(patterns)
    patterns.append(path("<path:rest>", _unknown_endpoint, name="unknown-endpoint"))
    return patterns, app_name, namespace
