"""Links to the reviewer pages, built in one place for views, tables and template tags.

A route that is renamed or gone raises ``NoReverseMatch`` here (a test fails), never a silently missing
link. Only a name that cannot be a path segment (empty, or a host or hash with a ``/``; a draft id may hold
one) gets no link: ``None``. docs/piles-and-recurrence.md, "Piles" (a pile is named by host, namespace and
subject).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache
from urllib.parse import quote, urlencode

from django.conf import settings
from django.urls import get_script_prefix, get_urlconf, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from lessons.core.piles import pile_target


def _segment(value: str) -> bool:
    """Whether ``value`` fits a ``<str:…>`` path segment (non-empty, no ``/``)."""
    return bool(value) and "/" not in value


# Stands for the one path segment of a route reversed once (``route_path``); "%00" once quoted.
_MARK = "\x00"
_MARK_QUOTED = quote(_MARK)
# What ``reverse`` leaves unquoted in a path (django.urls.resolvers: RFC 3986 sub-delims and "/~:@").
_PATH_SAFE = "!$&'()*+,;=/~:@"


@lru_cache(maxsize=64)
def _route(name: str, kwarg: str | None, _prefix: str, urlconf: str) -> str:
    kwargs = {kwarg: _MARK} if kwarg else None
    return reverse(name, kwargs=kwargs, urlconf=urlconf)


def route_path(route: str, /, **segment: str) -> str:
    """``reverse(route, kwargs=segment)`` for a route with at most one ``<str:…>`` segment, reversed once
    per route (and script prefix): the tables and the hosts page link 200 rows (issue 10). A value that
    cannot be a segment (empty, or with a ``/``) goes through ``reverse`` itself, which refuses it."""
    if not segment:
        return _route(route, None, get_script_prefix(), get_urlconf() or settings.ROOT_URLCONF)
    ((kwarg, value),) = segment.items()
    return route_builder(route, kwarg)(value)


def route_builder(route: str, kwarg: str) -> Callable[[str], str]:
    """``value -> route_path(route, **{kwarg: value})`` with the urlconf and the script prefix read once,
    for the many links of one route on one page (each read is a context-local look-up)."""
    urlconf = get_urlconf() or settings.ROOT_URLCONF
    path = _route(route, kwarg, get_script_prefix(), urlconf)

    def build(value: str) -> str:
        if not _segment(value) or _MARK in value:
            return reverse(route, kwargs={kwarg: value}, urlconf=urlconf)
        return path.replace(_MARK_QUOTED, quote(value, safe=_PATH_SAFE), 1)

    return build


def pile_href(host: str, namespace: str, subject: str) -> str:
    """The pile page of an entity: ``/pile/?host=…&namespace=…&subject=…`` (namespace may be empty)."""
    query = urlencode({"host": host, "namespace": namespace, "subject": subject})
    return f"{route_path('review:pile')}?{query}"


def host_url(host: str) -> str | None:
    """``/hosts/<host>/``, or ``None`` for a name that cannot be a path segment."""
    return reverse("review:host", args=[host]) if _segment(host) else None


def lesson_url(host: str, lesson_hash: str) -> str | None:
    """``/lessons/<host>/<hash>/``, or ``None`` for a name that cannot be a path segment."""
    return (
        reverse("review:lesson", args=[host, lesson_hash])
        if _segment(host) and _segment(lesson_hash)
        else None
    )


def draft_url(host: str, draft_id: str) -> str | None:
    """``/drafts/<host>/<id>/`` (the id may hold ``/``: its routes take a path), or ``None`` for a host or an
    empty id that cannot be addressed."""
    return reverse("review:draft", args=[host, draft_id]) if _segment(host) and draft_id else None


def target_breaks(target: str) -> SafeString:
    """An entity's target (``entity:<namespace>/<subject>``) escaped, with ``<wbr>`` after its ":" and
    its last "/", so a narrow column or header breaks it there rather than mid-word."""
    head, _, tail = target.rpartition("/")
    if not head:
        return format_html("{}<wbr>{}", "entity:", target.removeprefix("entity:"))
    return format_html("{}/<wbr>{}", head, tail)


def target_link(host: str, namespace: str, subject: str) -> str:
    """The entity's target linked to its pile page, breaking as ``target_breaks`` lets it."""
    target = pile_target(namespace, subject)
    return format_html('<a href="{}">{}</a>', pile_href(host, namespace, subject), target_breaks(target))


# "decision #3", "Decision #3", "decisions #3, #4": the references a success message makes to the log;
# "recount job 7": a background recount a status change started (review/services/recount.py).
_DECISION_REFS = re.compile(r"([Dd]ecisions? )(#\d+(?:, #\d+)*)|(recount job )(\d+)")


def link_decisions(message) -> str:
    """A message with each "decision #N" linked to the decision log filtered to that decision
    (``/decisions/?seq=N``) and each "recount job N" to that job's page (``/jobs/N/``). Everything else
    is escaped (a message may quote a host's draft id)."""
    text = str(message)
    log = reverse("review:decisions")
    parts: list = []
    last = 0
    for match in _DECISION_REFS.finditer(text):
        if match.group(3):
            job = match.group(4)
            href = reverse("review:job", args=[int(job)])
            parts += [
                text[last : match.start()],
                format_html('<a href="{}">{}{}</a>', href, match.group(3), job),
            ]
            last = match.end()
            continue
        parts += [text[last : match.start()], match.group(1)]
        refs = [ref.removeprefix("#") for ref in match.group(2).split(", ")]
        parts.append(format_html_join(", ", '<a href="{}?seq={}">#{}</a>', ((log, seq, seq) for seq in refs)))
        last = match.end()
    parts.append(text[last:])
    return format_html_join("", "{}", ((part,) for part in parts))
