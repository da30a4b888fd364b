"""Paging: the django-tables2 tables (a ``?per_page=`` out of range gives the page's default size), and
keyset pages (``keyset_page``: cursor links whose cost does not grow with the page number; issue 10).

django-tables2 takes ``per_page`` from the query as any integer: ``-1`` answered 500, ``0`` fell back to
its own default (25, not the page's), and a huge one loaded every row (issue 13, fault 11).
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property

from django.core.exceptions import ValidationError
from django.core.paginator import EmptyPage
from django.db.models import Q, QuerySet
from django.utils.dateparse import parse_datetime
from django_tables2 import LazyPaginator, RequestConfig

MAX_PER_PAGE = 500
COUNT_CAP = 10_000
# The largest OFFSET the databases take (a signed 64-bit integer): SQLite answers one past it "datatype
# mismatch", PostgreSQL "bigint out of range".
MAX_OFFSET = 2**63 - 1


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

    def validate_number(self, number) -> int:
        """``LazyPaginator``'s check, and ``EmptyPage`` for a page past the last when the count is exact, or
        past what an OFFSET can reach (``?page=99999999999999999999`` was a 500): ``RequestConfig`` then
        shows the last page (the first, when capped), as for Django's paginator."""
        number = super().validate_number(number)
        if (not self.count_capped and number > self.num_pages) or number * self.per_page > MAX_OFFSET:
            raise EmptyPage("That page contains no results")
        return number


# --- keyset paging -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KeysetPage:
    """One page of rows read by keyset (``WHERE (sort key) > (the last row's)``, never an OFFSET that grows
    with the page): ``rows`` in order; ``number`` (1-based, for display) of ``num_pages``; ``total`` rows;
    ``next_cursor`` / ``previous_cursor``: opaque tokens of the boundary rows (None at an end)."""

    rows: list
    number: int
    total: int
    per_page: int
    next_cursor: str | None
    previous_cursor: str | None
    cap: int | None = None  # the count stopped past this many rows (``keyset_page``'s ``cap``)

    @property
    def capped(self) -> bool:
        """Whether there are more than ``cap`` rows: ``total`` is then ``cap + 1``, not the count."""
        return self.cap is not None and self.total > self.cap

    @property
    def num_pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    @property
    def total_text(self) -> str:
        """What a page says of its rows: ``"4,776"``, or ``"more than 10,000"`` past the cap."""
        return f"more than {self.cap:,}" if self.capped else f"{self.total:,}"


def _encode(values: Sequence) -> str:
    plain = [{"t": v.isoformat()} if isinstance(v, datetime) else v for v in values]
    return base64.urlsafe_b64encode(json.dumps(plain, separators=(",", ":")).encode()).decode().rstrip("=")


def _decode(token: str, model, fields: Sequence[str]) -> list | None:
    """The values of ``fields`` a cursor carries, each valid for its model field and one the databases can
    hold (no infinite number, no time outside years 1-9999 in UTC, no NUL or lone surrogate in a text);
    None for a token that is not one of ours (it then reads as no cursor: the first page)."""
    try:
        raw = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        if not isinstance(raw, list) or len(raw) != len(fields):
            return None
        values = []
        for name, value in zip(fields, raw, strict=True):
            if isinstance(value, dict):
                value = parse_datetime(value.get("t", ""))
                if value is None:
                    return None
            if isinstance(value, (list, dict)) or value is None:
                return None
            if isinstance(value, str) and "\x00" in value:
                return None
            value = model._meta.get_field(name).to_python(value)
            if isinstance(value, str):
                value.encode()  # UnicodeEncodeError (a ValueError) for a lone surrogate
            elif isinstance(value, datetime) and value.tzinfo is not None:
                value.astimezone(UTC)  # OverflowError past the years a database stores
            values.append(value)
        return values
    except (ValueError, TypeError, AttributeError, OverflowError, ValidationError, binascii.Error):
        return None


def _beyond(order: Sequence[str], values: Sequence) -> Q:
    """Rows after ``values`` in ``order`` (fields, ``-`` for descending): the lexicographic comparison
    spelled out, so that mixed directions work on every database."""
    beyond, equal = Q(), Q()
    for position, (term, value) in enumerate(zip(order, values, strict=True)):
        name = term.lstrip("-")
        step = Q(**{f"{name}__{'lt' if term.startswith('-') else 'gt'}": value})
        beyond = (equal & step) if position == 0 else beyond | (equal & step)
        equal &= Q(**{name: value})
    return beyond


def _reverse(order: Sequence[str]) -> list[str]:
    return [term[1:] if term.startswith("-") else f"-{term}" for term in order]


def keyset_page(
    rows: QuerySet,
    *,
    order: Sequence[str],
    per_page: int,
    number: int = 1,
    after: str | None = None,
    before: str | None = None,
    total: int | None = None,
    cap: int | None = None,
) -> KeysetPage:
    """A page of ``rows`` (a ``values()`` queryset of one model whose dicts hold every ``order`` field)
    sorted by ``order``, which must end in a unique key.

    With ``after`` (``before``) a cursor from an earlier page, the rows after (before) it; without one,
    page ``number`` by OFFSET (a typed-in ``?page=``; the pages' own links always carry a cursor).
    ``number`` is only shown. Two queries: the COUNT and the page (``per_page + 1`` rows, to know whether
    there is more); one when the caller knows ``total`` (``rows.count()``) from a stored total. With
    ``cap``, the COUNT reads at most ``cap + 1`` rows (``SELECT COUNT(*) FROM (... LIMIT cap + 1)``), so
    its cost stops growing with the matches: past the cap the page is ``capped`` and its pages run on by
    their cursors.
    """
    if total is None:
        total = rows.order_by()[: cap + 1].count() if cap is not None else rows.count()
    pages = max(1, -(-total // per_page))
    # Past the cap the last page is unknown: the number a link carries is shown as it is.
    number = max(1, number) if cap is not None and total > cap else min(max(1, number), pages)
    fields = [term.lstrip("-") for term in order]
    model = rows.model
    cursor = _decode(after, model, fields) if after else None
    backwards = False
    if cursor is None and before:
        cursor, backwards = _decode(before, model, fields), True
    if cursor is None:
        found = list(rows.order_by(*order)[(number - 1) * per_page : number * per_page + 1])
        more_before, more_after = number > 1, len(found) > per_page
        found = found[:per_page]
    elif not backwards:
        found = list(rows.filter(_beyond(order, cursor)).order_by(*order)[: per_page + 1])
        more_before, more_after = True, len(found) > per_page
        found = found[:per_page]
    else:
        found = list(rows.filter(_beyond(_reverse(order), cursor)).order_by(*_reverse(order))[: per_page + 1])
        more_before, more_after = len(found) > per_page, True
        found = found[:per_page][::-1]
        if not more_before:
            number = 1
    if not found:
        more_before = more_after = False
    return KeysetPage(
        rows=found,
        number=number,
        total=total,
        per_page=per_page,
        next_cursor=_encode([found[-1][f] for f in fields]) if more_after else None,
        previous_cursor=_encode([found[0][f] for f in fields]) if more_before else None,
        cap=cap,
    )


def page_size(request, default: int, name: str = "per_page") -> int:
    """``?per_page=`` when a whole number in ``1..MAX_PER_PAGE``, else ``default``."""
    value = request.GET.get(name, "")
    return int(value) if _in_range(value) else default


def whole_number(value: str) -> int | None:
    """``value`` as a whole number when it is one written in ASCII digits (``"²"`` and ``"٣"`` are
    digits to ``str.isdigit``, not to a reader of the address) of at most 9 of them, else None."""
    return int(value) if value.isascii() and value.isdigit() and len(value) < 10 else None


def page_number(request, name: str = "page") -> int:
    """``?page=`` as a whole number (1 when missing or not one); ``keyset_page`` clamps it to the pages."""
    return whole_number(request.GET.get(name, "")) or 1


CURSOR_PARAMS = ("page", "after", "before")


def keyset_links(request, page: KeysetPage) -> dict[str, str | None]:
    """``{"previous", "next"}`` hrefs (query strings) of a keyset page's links, the request's other
    parameters kept (filters, sort, page size): "next" carries the ``after`` cursor and the page number
    shown; "previous" the ``before`` cursor, or no cursor at all when it leads to page 1. None at an end."""

    def href(**changes) -> str:
        query = request.GET.copy()
        for name in CURSOR_PARAMS:
            query.pop(name, None)
        for name, value in changes.items():
            query[name] = value
        return "?" + query.urlencode()

    previous = None
    if page.previous_cursor is not None:
        previous = href() if page.number <= 2 else href(before=page.previous_cursor, page=page.number - 1)
    following = href(after=page.next_cursor, page=page.number + 1) if page.next_cursor else None
    return {"previous": previous, "next": following}
