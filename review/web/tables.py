"""Tables whose header and body rows are built in Python: ``LeanTable`` (django-tables2 keeps the columns,
ordering and pagination; the ``<thead>`` with its sort links and the ``<tbody>`` are rendered here).

django-tables2 renders each cell through the template engine and calls each column's ``render`` via
``inspect.signature`` per cell; at 25 rows x 14 columns that was most of the queue page's server time
(issue 10: profile in docs/benchmarks.md). Here each column's ``<td>`` attributes, accessor and render
call are worked out once per table, then every row is one string join. The cells are what
django-tables2 renders: the column's ``render_<name>`` (table method) or ``render``, called with the
arguments it names; its ``default`` for a value in its ``empty_values``; every value escaped
(``conditional_escape``) and localized like ``{{ cell }}``. The header is what ``tables/htmx_table.html``
renders: each sort link through django-tables2's ``querystring_replace`` rules (the request's query string
with the column's next sort, without the page number and the keyset cursors), worked out once per request.
Only the whitespace between the tags differs.
"""

from __future__ import annotations

import contextlib
import inspect
from urllib.parse import urlencode

import django_tables2 as tables
from django.conf import settings
from django.core.exceptions import FieldDoesNotExist
from django.db.models import Model
from django.utils.formats import localize
from django.utils.html import conditional_escape, escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django_tables2.utils import A, AttributeDict

from review.web.format import esc

LEAN_TABLE_TEMPLATE = "tables/lean_table.html"
# The arguments django-tables2 offers a render method (django_tables2.rows.BoundRow._optional_cell_arguments).
_RENDER_ARGUMENTS = ("value", "record", "column", "bound_column", "bound_row", "table")
# What a new sort drops from the query string (tables/htmx_table.html): the keyset cursors of the queue;
# the table's own page field is dropped too.
_SORT_DROPS = ("after", "before")
# What a sort link carries for htmx: swap the nearest region, push the URL (tables/htmx_table.html).
_SORT_HTMX = 'hx-target="closest [data-region]" hx-swap="outerHTML" hx-push-url="true"'


def _wanted(fn, offered: tuple[str, ...], *, what: str) -> tuple[str, ...]:
    """The names of ``offered`` that ``fn`` takes (all with ``**kwargs``), as django-tables2's
    ``call_with_appropriate`` passes them; ``ValueError`` for an argument it cannot be given."""
    params = inspect.signature(fn).parameters.values()
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return offered
    wants = tuple(p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))
    unknown = set(wants) - set(offered)
    if unknown:
        raise ValueError(f"{what} takes unknown arguments {sorted(unknown)}")
    return wants


class _Cell:
    """One column's rendering, worked out once: ``td`` (its attributes as HTML), how to read its value
    from a record, and its render callable with the arguments it takes."""

    def __init__(self, table: tables.Table, bound_column) -> None:
        column = bound_column.column
        if column.localize is not None or bound_column.link:
            raise ValueError(f"LeanTable does not render column {bound_column.name!r}: localize or link set")
        self.bound_column = bound_column
        self.td = bound_column.attrs["td"].as_html()
        self.accessor = str(bound_column.accessor)
        self.plain = A.LEGACY_SEPARATOR not in self.accessor and A.SEPARATOR not in self.accessor
        self.empty_values = column.empty_values
        self.default = bound_column.default
        self.render = bound_column.render
        self.wants = _wanted(self.render, _RENDER_ARGUMENTS, what=f"render of {bound_column.name!r}")
        # tables.Column's own render returns its value: not called
        self.passthrough = getattr(self.render, "__func__", None) is tables.Column.render
        self.table = table
        self.grouping = settings.USE_THOUSAND_SEPARATOR
        self.displays: dict[type, str | None] = {}

    def value(self, record):
        if self.plain:
            if isinstance(record, dict):
                return record.get(self.accessor)
            if isinstance(record, Model):
                display = self._display_name(type(record))
                if display is not None:
                    return getattr(record, display)()
                try:  # no item lookup to try first: the attribute, unless callable
                    found = getattr(record, self.accessor)
                except Exception:  # what resolve makes of a failed lookup
                    return None
                if not callable(found):
                    return found
        accessor = A(self.accessor)
        penultimate, remainder = accessor.penultimate(record)
        # As django-tables2's BoundRow: a model field with choices shows its label.
        if isinstance(penultimate, Model):
            with contextlib.suppress(FieldDoesNotExist):
                field = accessor.get_field(record)
                display_fn = getattr(penultimate, f"get_{remainder}_display", None)
                if getattr(field, "choices", ()) and display_fn:
                    return display_fn()
        try:
            return accessor.resolve(record)
        except Exception:  # django-tables2 reads a failed lookup as an empty value too
            return None

    def _display_name(self, model: type) -> str | None:
        """``get_<accessor>_display`` when the plain accessor is a field of ``model`` with choices (its
        label is the cell's value, as django-tables2 shows it), else None; worked out once per model."""
        if model not in self.displays:
            try:
                field = model._meta.get_field(self.accessor)
            except FieldDoesNotExist:
                field = None
            name = f"get_{self.accessor}_display"
            has = getattr(field, "choices", None) and hasattr(model, name)
            self.displays[model] = name if has else None
        return self.displays[model]

    def html(self, row) -> str:
        record = row.record
        value = self.value(record)
        if value in self.empty_values:
            content = self.default
        elif self.passthrough:
            content = value
        elif self.wants == ("value",):
            content = self.render(value=value)
        elif self.wants == ("record",):
            content = self.render(record=record)
        else:
            offered = {
                "value": value,
                "record": record,
                "column": self.bound_column.column,
                "bound_column": self.bound_column,
                "bound_row": row,
                "table": self.table,
            }
            content = self.render(**{name: offered[name] for name in self.wants})
        return f"<td {self.td}>{_cell_text(content, grouping=self.grouping)}</td>"


def _cell_text(content, *, grouping: bool) -> str:
    """``conditional_escape(localize(content))``, with the common types first: a plain ``int`` is its
    digits unless thousands are grouped, a plain ``str`` is escaped, a ``SafeString`` kept (what
    ``localize`` and ``conditional_escape`` give for them)."""
    kind = type(content)
    if kind is SafeString or kind is str or (kind is int and not grouping):
        return esc(content)
    return conditional_escape(localize(content))


class LeanTable(tables.Table):
    """A django-tables2 table whose template (``tables/lean_table.html``, the project's htmx table with
    another ``<tbody>``) prints ``body_html``: every row built in Python.

    Same cells, row attributes (``Meta.row_attrs``, then ``even`` / ``odd``) and empty text as
    django-tables2's own ``<tbody>``. Columns with ``localize`` or ``linkify`` are refused (``ValueError``):
    none of ours use them, and the lean body does not implement them.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("template_name", LEAN_TABLE_TEMPLATE)
        super().__init__(*args, **kwargs)
        self._request = None

    def before_render(self, request) -> None:
        """Keeps the ``request`` that ``{% render_table %}`` renders for (its query string is the base of
        the sort links of ``thead_html``)."""
        super().before_render(request)
        self._request = request

    def thead_html(self) -> SafeString:
        """The ``<thead>`` of ``tables/htmx_table.html`` (empty when ``show_header`` is off): one ``<th>``
        per column with its attributes, ``aria-sort`` on the ordered column, and for an orderable column a
        link to its next sort (``href`` and ``hx-get``) with the sort mark (▼ descending, ▲ ascending).

        A link's query string is the request's (``before_render``; none when rendered without one) with
        the order field set to the column's ``order_by_alias.next`` and the page field, ``after`` and
        ``before`` dropped, encoded as django-tables2's ``querystring_replace`` does."""
        if not self.show_header:
            return mark_safe("")
        order_field, page_field = self.prefixed_order_by_field, self.prefixed_page_field
        base = dict(self._request.GET) if self._request is not None else {}
        for drop in (page_field, *_SORT_DROPS):
            base.pop(drop, None)
        cells = []
        for column in self.columns:
            th = column.attrs["th"].as_html()
            ordered = column.is_ordered
            alias = column.order_by_alias
            aria = ""
            mark = ""
            if ordered:
                descending = alias.is_descending
                aria = f' aria-sort="{"descending" if descending else "ascending"}"'
                mark = f'<span class="sort-mark" aria-hidden="true">{"▼" if descending else "▲"}</span>'
            header = conditional_escape(column.header)
            if column.orderable:
                params = {**base, order_field: alias.next}  # kept in place, or new and last
                href = escape("?" + urlencode(params, doseq=True))
                link_class = "sort sorted" if ordered else "sort"
                link = f'href="{href}" hx-get="{href}" {_SORT_HTMX}'
                header = f'<a {link} class="{link_class}">{header}{mark}</a>'
            cells.append(f"<th {th}{aria}>{header}</th>")
        thead = self.attrs.get("thead")
        thead_attrs = thead.as_html() if isinstance(thead, AttributeDict) else ""
        return mark_safe(f"<thead {thead_attrs}><tr>{''.join(cells)}</tr></thead>")  # noqa: S308 - escaped

    def body_html(self) -> SafeString:
        """The ``<tr>`` rows of the table's current page (all rows when not paginated), or the empty text
        in one cell across the columns; escaped except what the render methods marked safe."""
        page = getattr(self, "page", None)
        rows = page.object_list if page is not None else self.rows
        rows = list(rows)  # BoundRows: each takes its even/odd number from the table's counter, in order
        if not rows:
            if not self.empty_text:
                return mark_safe("")
            return format_html('<tr><td colspan="{}">{}</td></tr>', len(self.columns), self.empty_text)
        cells = [_Cell(self, bound) for bound in self.columns]
        attrs = {
            key: (value, _wanted(value, ("table", "record"), what=f"row_attrs[{key!r}]"))
            if callable(value)
            else (value, None)
            for key, value in self.row_attrs.items()
        }
        out = []
        for row in rows:
            tds = "".join(cell.html(row) for cell in cells)
            out.append(f"<tr {self._row_attrs(attrs, row)}>{tds}</tr>")
        return mark_safe("\n".join(out))  # noqa: S308 - every cell went through conditional_escape

    def _row_attrs(self, attrs: dict, row) -> str:
        """``BoundRow.attrs`` as HTML: ``Meta.row_attrs`` (callables given what they name), then the
        row's ``even`` / ``odd`` class."""
        offered = {"table": self, "record": row.record}
        values = {
            key: value(**{name: offered[name] for name in wants}) if wants is not None else value
            for key, (value, wants) in attrs.items()
        }
        parity = row.get_even_odd_css_class()
        values["class"] = f"{values['class']} {parity}" if values.get("class") else parity
        return AttributeDict(values).as_html()
