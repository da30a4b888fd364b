"""Unmatched topics of one host: what users keep correcting that no live lesson anchors.

spec: recurrence.md, "Unmatched topics".
"""

from __future__ import annotations

from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from lessons.models import Host
from lessons.selectors.recurrence import host_unmatched_topics, recurrence_coverage
from review.roles import PERM_VIEW
from review.web.htmx import render_problem

HOST_UNKNOWN = "There is no host {host!r}."
TOPIC_EXAMPLES = 3


@require_GET
@permission_required(PERM_VIEW, raise_exception=True)
def unmatched_topics(request: HttpRequest, host: str) -> HttpResponse:
    """``/hosts/<host>/unmatched-topics/``: at most five topics, each with its newest corrections."""
    # PostgreSQL text cannot hold NUL, so no host has one (and the query would fail).
    host_obj = None if "\x00" in host else Host.objects.filter(name=host).first()
    if host_obj is None:
        return render_problem(
            request, title="Unknown host", message=HOST_UNKNOWN.format(host=host), status=404
        )
    context = {
        "host": host_obj,
        "topics": host_unmatched_topics(host=host_obj, examples=TOPIC_EXAMPLES),
        "coverage": recurrence_coverage(host=host_obj),
    }
    return render(request, "review/hosts/unmatched_topics.html", context)
