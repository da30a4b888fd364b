"""Fetch-or-fail shared by the reviewer pages: ``NotFound``, which ``@shows_not_found`` turns into the
problem page (title, message, status), the host and the entity an address names. Each area's own
``get_<thing>_or_404`` lives in that area (review/<area>/lookups.py) and builds on these.

The NUL guard is written here once (``has_nul``): PostgreSQL text cannot hold a NUL, so no host, lesson,
draft or entity has one, and a query comparing one would fail. Texts are the ones the page tests assert.
README.md (views fetch through selectors); docs/piles-and-recurrence.md, "Piles" (an entity is named by host,
namespace and subject).
"""

from __future__ import annotations

import functools

from django.http import Http404, HttpRequest, QueryDict

from lessons.core.piles import pile_target
from lessons.models import Host
from review.web.htmx import render_problem

HOST_UNKNOWN = "There is no host named {host!r}."
PILE_PARAMS_MISSING = (
    "A pile is named by its entity: add host and subject (and namespace, when it has one) to the address, "
    "e.g. /pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture."
)
PILE_PARAMS_NUL = "The pile address contains a NUL character; no host, namespace or subject has one."
ENTITY_EMPTY = "Host {host} has no lesson on {target}."


class NotFound(Http404):
    """The address names nothing (or is malformed): ``title``, ``message`` and ``status`` of the problem page.

    A subclass of ``Http404``, so one that escapes a view without ``@shows_not_found`` is Django's 404.
    """

    def __init__(self, title: str, message: str, status: int = 404):
        super().__init__(message)
        self.title, self.message, self.status = title, message, status


def shows_not_found(view):
    """Decorate a view so that a ``NotFound`` it raises is answered with the problem page."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs):
        try:
            return view(request, *args, **kwargs)
        except NotFound as exc:
            return render_problem(request, title=exc.title, message=exc.message, status=exc.status)

    return wrapped


def has_nul(*values: str) -> bool:
    """Whether any of ``values`` holds a NUL (then nothing stored can match it)."""
    return any("\x00" in value for value in values)


def query_text(params: QueryDict, key: str) -> str:
    """A query parameter trimmed, "" when absent (``?host=&namespace=&subject=``)."""
    return params.get(key, "").strip()


def get_host_or_404(name: str, *, message: str = HOST_UNKNOWN) -> Host:
    """The host called ``name``; ``NotFound`` with ``message`` (formatted with ``host``) when there is
    none."""
    found = None if has_nul(name) else Host.objects.filter(name=name).first()
    if found is None:
        raise NotFound("Unknown host", message.format(host=name))
    return found


def entity_params(params: QueryDict) -> tuple[Host, str, str]:
    """``(host, namespace, subject)`` named by ``params`` (``?host=&namespace=&subject=``), the host
    fetched. ``NotFound``: 400 when host or subject is missing or a value holds a NUL, 404 for an unknown
    host."""
    host_name, namespace, subject = (query_text(params, key) for key in ("host", "namespace", "subject"))
    if not host_name or not subject:
        raise NotFound("Which pile?", PILE_PARAMS_MISSING, status=400)
    if has_nul(host_name, namespace, subject):
        raise NotFound("Which pile?", PILE_PARAMS_NUL, status=400)
    return get_host_or_404(host_name), namespace, subject


def no_such_entity(host: Host, namespace: str, subject: str) -> NotFound:
    """The 404 of an entity without a lesson."""
    return NotFound(
        "No such entity", ENTITY_EMPTY.format(host=host.name, target=pile_target(namespace, subject))
    )
