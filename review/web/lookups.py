"""Fetch-or-fail for the reviewer pages: each ``get_<thing>_or_404`` returns what an address names or raises
``NotFound``, which ``@shows_not_found`` turns into the problem page (title, message, status).

The NUL guard is written here once (``has_nul``): PostgreSQL text cannot hold a NUL, so no host, lesson,
draft or entity has one, and a query comparing one would fail. Texts are the ones the page tests assert.
README.md (views fetch through selectors); docs/piles-and-recurrence.md, "Piles" (an entity is named by host,
namespace and subject).
"""

from __future__ import annotations

import functools

from django.http import Http404, HttpRequest, QueryDict

from lessons.core.interchange import HEX64
from lessons.core.piles import pile_target
from lessons.models import Host
from review.drafts.selectors import DraftDetail, draft_detail
from review.hosts.selectors import host_get, host_overview
from review.lessons.selectors import LessonDetail, lesson_detail
from review.piles.selectors import PileDetail, pile_detail
from review.web.htmx import render_problem
from review.written.selectors import WriteDetail, write_detail

HOST_UNKNOWN = "There is no host named {host!r}."
PILE_PARAMS_MISSING = (
    "A pile is named by its entity: add host and subject (and namespace, when it has one) to the address, "
    "e.g. /pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture."
)
PILE_PARAMS_NUL = "The pile address contains a NUL character; no host, namespace or subject has one."
ENTITY_EMPTY = "Host {host} has no lesson on {target}."
LESSON_UNKNOWN = "Host {host!r} has no lesson {hash}."
LESSON_HASH_INVALID = "{hash!r} is not a lesson hash: a lesson is named by its 64 lowercase hex characters."
DRAFT_UNKNOWN = "Host {host!r} has no draft {draft!r}."


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


def get_host_or_404(name: str, *, overview: bool = False, message: str = HOST_UNKNOWN) -> Host:
    """The host called ``name`` (with the hosts page's counts when ``overview``); ``NotFound`` with
    ``message`` (formatted with ``host``) when there is none."""
    found = None
    if not has_nul(name):
        found = host_overview(name=name) if overview else host_get(name=name)
    if found is None:
        raise NotFound("Unknown host", message.format(host=name))
    return found


def get_entity_or_404(params: QueryDict) -> tuple[Host, PileDetail]:
    """``(host, detail)`` for the entity named by ``params`` (``host``, ``namespace``, ``subject``).

    ``NotFound``: 400 when host or subject is missing or a value holds a NUL, 404 for an unknown host or an
    entity without a lesson.
    """
    host, namespace, subject = _entity_params(params)
    detail = pile_detail(host=host, namespace=namespace, subject=subject)
    if detail is None:
        target = pile_target(namespace, subject)
        raise NotFound("No such entity", ENTITY_EMPTY.format(host=host.name, target=target))
    return host, detail


def _entity_params(params: QueryDict) -> tuple[Host, str, str]:
    host_name, namespace, subject = (query_text(params, key) for key in ("host", "namespace", "subject"))
    if not host_name or not subject:
        raise NotFound("Which pile?", PILE_PARAMS_MISSING, status=400)
    if has_nul(host_name, namespace, subject):
        raise NotFound("Which pile?", PILE_PARAMS_NUL, status=400)
    return get_host_or_404(host_name), namespace, subject


def get_write_or_404(params: QueryDict) -> WriteDetail:
    """The editor's entity named by ``params``, as ``get_entity_or_404`` (``NotFound`` alike)."""
    host, namespace, subject = _entity_params(params)
    detail = write_detail(host=host, namespace=namespace, subject=subject)
    if detail is None:
        raise NotFound(
            "No such entity", ENTITY_EMPTY.format(host=host.name, target=pile_target(namespace, subject))
        )
    return detail


def get_lesson_or_404(host: str, lesson_hash: str) -> LessonDetail:
    """The lesson page's detail of ``(host, hash)``; ``NotFound`` for a malformed hash or no such lesson."""
    if not HEX64.fullmatch(lesson_hash):
        raise NotFound("Not a lesson", LESSON_HASH_INVALID.format(hash=lesson_hash))
    detail = None if has_nul(host) else lesson_detail(host_name=host, lesson_hash=lesson_hash)
    if detail is None:
        raise NotFound("Unknown lesson", LESSON_UNKNOWN.format(host=host, hash=lesson_hash))
    return detail


def get_draft_or_404(host: str, draft_id: str) -> DraftDetail:
    """The draft page's detail of ``(host, draft id)``; ``NotFound`` when there is no such draft."""
    detail = None if has_nul(host, draft_id) else draft_detail(host_name=host, ext_id=draft_id)
    if detail is None:
        raise NotFound("Unknown draft", DRAFT_UNKNOWN.format(host=host, draft=draft_id))
    return detail
