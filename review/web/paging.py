"""Paging of the django-tables2 tables: a ``?per_page=`` out of range gives the page's default size.

django-tables2 takes ``per_page`` from the query as any integer: ``-1`` answered 500, ``0`` fell back to
its own default (25, not the page's), and a huge one loaded every row (issue 13, fault 11).
"""

from __future__ import annotations

from django_tables2 import RequestConfig

MAX_PER_PAGE = 500


class PageSizeConfig(RequestConfig):
    """``RequestConfig`` that reads ``per_page`` from the request only when it is a whole number in
    ``1..MAX_PER_PAGE``; otherwise the ``paginate`` default holds."""

    def configure(self, table):
        name = table.prefixed_per_page_field
        original = self.request.GET
        if name in original and not _in_range(original[name]):
            cleaned = original.copy()
            del cleaned[name]
            self.request.GET = cleaned  # for this configure only: the rest of the view sees the query as sent
            try:
                return super().configure(table)
            finally:
                self.request.GET = original
        return super().configure(table)


def _in_range(value: str) -> bool:
    return value.isascii() and value.isdigit() and 1 <= int(value) <= MAX_PER_PAGE
