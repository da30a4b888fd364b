"""Rendering a page or just its htmx region. README.md.

A page marks the region htmx swaps as ``{% partialdef <name> inline %}``; for an htmx request the view
renders ``template#<name>`` only. A history-restore request (the browser's back button after the cache
lost the page) wants the whole page, so it gets it. ``Vary: HX-Request`` keeps caches from serving one
for the other.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers


def wants_region(request: HttpRequest) -> bool:
    """True for an htmx request that swaps a region (not a history restore)."""
    htmx = getattr(request, "htmx", None)
    return bool(htmx) and not htmx.history_restore_request


def render_region(
    request: HttpRequest, template: str, region: str, context: dict, *, status: int = 200
) -> HttpResponse:
    """``template#region`` for an htmx request, else the whole ``template``."""
    name = f"{template}#{region}" if wants_region(request) else template
    response = render(request, name, context, status=status)
    patch_vary_headers(response, ("HX-Request",))
    return response


def render_problem(request: HttpRequest, *, title: str, message: str, status: int) -> HttpResponse:
    """A plain page saying what was wrong with the address (unknown host, lesson, missing parameter)."""
    return render(request, "review/shared/problem.html", {"title": title, "message": message}, status=status)
