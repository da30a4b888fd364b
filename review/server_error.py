"""Django's ``handler500``: what a failure outside a view's own handling answers (issue 13, fault 12).

- Under ``/api/`` the API's JSON error body, never HTML: 503 with ``Retry-After`` for a full disk, else 500.
  (ninja's handlers answer errors inside the API views; this covers the rest, e.g. a middleware.)
- A lock not granted within the web's wait (review/locking.py): 503 with ``Retry-After``, saying so.
- A page whose request failed on a full disk: a 503 page that says so (``templates/503_disk_full.html``),
  instead of the general server-error page; anything else: Django's ``server_error`` (templates/500.html).

Both templates stand alone (no base.html): they are rendered when the request may be half-processed.
"""

from __future__ import annotations

import sys

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template import loader
from django.views import defaults

from lessons.services.disk import disk_full
from review.locking import busy_response, is_lock_timeout
from review.web.paths import API_PREFIX

E_SERVER = "internal error"
E_SERVER_DETAIL = "the server failed; nothing was written"
E_DISK_FULL = "disk full"
E_DISK_FULL_DETAIL = "the server's disk is full; nothing was written; try again later"
RETRY_AFTER_SECONDS = 60


def server_error(request: HttpRequest) -> HttpResponse:
    """The 500 (or disk-full 503) answer for ``request``; the exception being handled is read from
    ``sys.exc_info()`` (Django calls this inside its handler)."""
    if is_lock_timeout(sys.exc_info()[1]):  # e.g. the session's save at sign-in, after the view
        return busy_response(request)
    full = disk_full(sys.exc_info()[1])
    if request.path.startswith(API_PREFIX):
        if full:
            response = JsonResponse({"error": E_DISK_FULL, "details": [E_DISK_FULL_DETAIL]}, status=503)
            response["Retry-After"] = str(RETRY_AFTER_SECONDS)
            return response
        return JsonResponse({"error": E_SERVER, "details": [E_SERVER_DETAIL]}, status=500)
    if full:
        response = HttpResponse(loader.get_template("503_disk_full.html").render(), status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
    return defaults.server_error(request)
