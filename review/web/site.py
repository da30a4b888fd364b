"""Site-wide odds and ends outside any review page: the favicon browsers ask for at ``/favicon.ico``."""

from __future__ import annotations

from django.contrib.auth.decorators import login_not_required
from django.http import HttpRequest, HttpResponseRedirect
from django.templatetags.static import static
from django.views.decorators.http import require_GET

FAVICON = "icons/pile.svg"


@login_not_required  # the sign-in page asks for it too
@require_GET
def favicon(request: HttpRequest) -> HttpResponseRedirect:
    """``/favicon.ico``: a temporary (302) redirect to the project's own icon in ``static/`` (its URL may
    carry a content hash in production, so a permanent redirect could go stale)."""
    return HttpResponseRedirect(static(FAVICON))
