"""Paging of the django-tables2 tables: a ``?per_page=`` out of range gives the page's default size.

django-tables2 takes ``per_page`` from the query as any integer: ``-1`` answered 500, ``0`` fell back to
its own default (25, not the page's), and a huge one loaded every row (issue 13, fault 11).
"""

from __future__ import annotations

from functools import cached_property

from django.db.models import QuerySet
from django_tables2 import LazyPaginator, RequestConfig

MAX_PER_PAGE = 500
COUNT_CAP = 10_000


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


class BoundedPaginator(LazyPaginator):
    """A paginator whose COUNT stops at ``COUNT_CAP`` rows: ``SELECT COUNT(*)`` over at most
    ``COUNT_CAP + 1`` rows, never the whole table (the decision log holds millions).

    Up to the cap it is exact (``count``, ``num_pages``, the last page known), as Django's ``Paginator``.
    Above it ``count_capped`` is True, ``count`` is ``COUNT_CAP + 1`` and the pages run on as
    django-tables2's ``LazyPaginator``: each page reads one row past its end to know a next page exists.
    ``count_text`` is what a page shows: ``"123"`` or ``"more than 10,000"``. Queries: one bounded count,
    one page read.
    """

    cap = COUNT_CAP

    @cached_property
    def count(self) -> int:
        # django-tables2 pages its BoundRows; their TableQuerysetData holds the (sorted) queryset
        queryset = getattr(getattr(self.object_list, "data", None), "data", None)
        if isinstance(queryset, QuerySet):
            return queryset[: self.cap + 1].count()
        return min(len(self.object_list), self.cap + 1)

    @property
    def count_capped(self) -> bool:
        return self.count > self.cap

    @property
    def count_text(self) -> str:
        return f"more than {self.cap:,}" if self.count_capped else str(self.count)

    @property
    def num_pages(self) -> int:
        if self.count_capped:
            return self._num_pages
        return max(1, -(-self.count // self.per_page))

    def is_last_page(self, number: int) -> bool:
        return super().is_last_page(number) if self.count_capped else number == self.num_pages
