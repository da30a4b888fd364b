"""The pile an address names (``?host=&namespace=&subject=``), or the problem page. review/web/lookups.py."""

from __future__ import annotations

from django.http import QueryDict

from lessons.models import Host
from review.piles.selectors import PileDetail, pile_detail
from review.web.lookups import entity_params, no_such_entity


def get_entity_or_404(params: QueryDict) -> tuple[Host, PileDetail]:
    """``(host, detail)`` for the entity named by ``params`` (``host``, ``namespace``, ``subject``).

    ``NotFound``: 400 when host or subject is missing or a value holds a NUL, 404 for an unknown host or an
    entity without a lesson.
    """
    host, namespace, subject = entity_params(params)
    detail = pile_detail(host=host, namespace=namespace, subject=subject)
    if detail is None:
        raise no_such_entity(host, namespace, subject)
    return host, detail
