"""The draft an address names (``/drafts/<host>/<id>/``), or the problem page. review/web/lookups.py."""

from __future__ import annotations

from review.drafts.selectors import DraftDetail, draft_detail
from review.web.lookups import NotFound, has_nul

DRAFT_UNKNOWN = "Host {host!r} has no draft {draft!r}."


def get_draft_or_404(host: str, draft_id: str) -> DraftDetail:
    """The draft page's detail of ``(host, draft id)``; ``NotFound`` when there is no such draft."""
    detail = None if has_nul(host, draft_id) else draft_detail(host_name=host, ext_id=draft_id)
    if detail is None:
        raise NotFound("Unknown draft", DRAFT_UNKNOWN.format(host=host, draft=draft_id))
    return detail
