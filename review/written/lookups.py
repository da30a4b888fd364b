"""The entity the consolidation editor writes for, or the problem page. review/web/lookups.py."""

from __future__ import annotations

from django.http import QueryDict

from review.web.lookups import entity_params, no_such_entity
from review.written.selectors import WriteDetail, write_detail


def get_write_or_404(params: QueryDict) -> WriteDetail:
    """The editor's entity named by ``params``, as ``review.piles.lookups.get_entity_or_404`` (``NotFound``
    alike)."""
    host, namespace, subject = entity_params(params)
    detail = write_detail(host=host, namespace=namespace, subject=subject)
    if detail is None:
        raise no_such_entity(host, namespace, subject)
    return detail
