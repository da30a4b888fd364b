"""The pile an address names (``?host=&namespace=&subject=``), or the problem page. review/web/lookups.py."""

from __future__ import annotations

from django.http import HttpRequest, QueryDict

from lessons.models import Host
from review.piles.selectors import PileDetail, pile_detail
from review.web.fragments import fragment
from review.web.lookups import entity_params, no_such_entity


def get_entity_or_404(params: QueryDict, *, request: HttpRequest | None = None) -> tuple[Host, PileDetail]:
    """``(host, detail)`` for the entity named by ``params`` (``host``, ``namespace``, ``subject``).
    With ``request`` (a page that only reads), the detail is kept by data version
    (``review.web.fragments``); a page that writes reads it fresh.

    ``NotFound``: 400 when host or subject is missing or a value holds a NUL, 404 for an unknown host or an
    entity without a lesson.
    """
    host, namespace, subject = entity_params(params)

    def read() -> PileDetail | None:
        return pile_detail(host=host, namespace=namespace, subject=subject)

    key = ("pile_detail", host.pk, namespace, subject)
    detail = read() if request is None else fragment(request, key, read)
    if detail is None:
        raise no_such_entity(host, namespace, subject)
    return host, detail
