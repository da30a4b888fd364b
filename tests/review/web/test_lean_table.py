"""LeanTable builds the <tbody> in Python: the same rows as django-tables2's own template."""

from __future__ import annotations

import re

import django_tables2 as tables
import pytest
from django.template.loader import get_template
from django.test import RequestFactory
from django.utils.html import format_html

from review.web.tables import LeanTable


def _columns():
    return {
        "name": tables.Column(attrs={"td": {"class": "b a"}}),
        "count": tables.Column(attrs={"th": {"class": "num"}, "td": {"class": "num"}}),
        "note": tables.Column(empty_values=()),
        "when": tables.Column(),
    }


class _Rendered:
    def render_count(self, value, record):
        return format_html("<b>{}</b> of {}", value, record["name"])

    def render_note(self, record, table):
        return f"<{record['name']}> & {table.Meta.empty_text}"


class Lean(_Rendered, LeanTable):
    locals().update(_columns())

    class Meta:
        row_attrs = {"data-name": lambda record: record["name"], "class": "row"}
        empty_text = "Nothing <here>."


class Plain(_Rendered, tables.Table):
    locals().update(_columns())

    class Meta:
        template_name = "tables/htmx_table.html"
        row_attrs = Lean.Meta.row_attrs
        empty_text = Lean.Meta.empty_text


ROWS = [
    {"name": "<script>", "count": 3, "when": None},
    {"name": "b", "count": 0, "when": ""},
    {"name": "c", "count": None, "when": 12},
]


def _html(table) -> str:
    request = RequestFactory().get("/")
    html = get_template(table.template_name).render({"table": table, "request": request})
    html = re.sub(r">\s+<", "><", re.sub(r"\s+", " ", html))
    return html


@pytest.mark.parametrize("rows", [ROWS, []], ids=["rows", "empty"])
def test_lean_rows_are_the_rows_django_tables2_renders(rows):
    assert _html(Lean(rows)) == _html(Plain(rows))


def _header_columns():
    return {
        "name": tables.Column(verbose_name="Name <&>", attrs={"th": {"class": "x"}}),
        "count": tables.Column(initial_sort_descending=True, order_by=("count", "name")),
        "note": tables.Column(orderable=False),
        "when": tables.Column(verbose_name=format_html("<i>{}</i>", "When")),
    }


class LeanSorted(LeanTable):
    locals().update(_header_columns())


class PlainSorted(tables.Table):
    locals().update(_header_columns())

    class Meta:
        template_name = "tables/htmx_table.html"


def _rendered(table, query: str) -> str:
    """The table as ``{% render_table %}`` renders it for a request to ``/?query`` (before_render runs),
    with the whitespace next to tags taken out (the template indents a header's text, Python does not)."""
    from django.template import engines

    request = RequestFactory().get("/" + query)
    html = (
        engines["django"]
        .from_string("{% load django_tables2 %}{% render_table table %}")
        .render({"table": table}, request)
    )
    return re.sub(r"\s*>\s*", ">", re.sub(r"\s*<\s*", "<", html))


QUERIES = [
    "",
    "?sort=name",
    "?sort=-count&page=3&after=abc&before=def",
    "?q=a+b&host=h%26x&q=second&sort=when",
    "?page=2&q=%3Cscript%3E",
]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("order_by", [None, "name", "-name", "count", "-count", "-when"])
def test_lean_header_is_the_header_django_tables2_renders(query, order_by):
    lean = LeanSorted(ROWS, order_by=order_by)
    plain = PlainSorted(ROWS, order_by=order_by)
    assert _rendered(lean, query) == _rendered(plain, query)


def test_lean_header_links_keep_the_filters_and_drop_the_page_and_cursors():
    html = _rendered(LeanSorted(ROWS, order_by="-count"), "?q=a&page=3&after=x&sort=-count")
    assert '<th class="desc orderable" aria-sort="descending">' in html
    assert (
        '<a href="?q=a&amp;sort=count" hx-get="?q=a&amp;sort=count" hx-target="closest [data-region]" '
        'hx-swap="outerHTML" hx-push-url="true" class="sort sorted">Count'
        '<span class="sort-mark" aria-hidden="true">\u25bc</span></a>'
    ) in html
    assert '<a href="?q=a&amp;sort=name" ' in html
    assert "<th>Note</th>" in html  # not orderable: no link
    assert "Name &lt;&amp;&gt;" in html and "<i>When</i>" in html


def test_lean_rows_escape_the_values_and_keep_what_render_marked_safe():
    body = Lean(ROWS[:1]).body_html()
    assert body == (
        '<tr data-name="&lt;script&gt;" class="row even"><td class="a b">&lt;script&gt;</td>'
        '<td class="num"><b>3</b> of &lt;script&gt;</td><td >&lt;&lt;script&gt;&gt; &amp; Nothing &lt;here&gt;.</td>'
        "<td >\u2014</td></tr>"
    )


def test_a_paginated_lean_table_renders_its_page_only():
    table = Lean(ROWS)
    table.paginate(per_page=2, page=2)
    assert table.body_html().count("<tr ") == 1
    assert 'data-name="c"' in table.body_html()


def test_a_linkified_column_is_refused():
    class Linked(LeanTable):
        name = tables.Column(linkify=lambda record: "/x/")

    with pytest.raises(ValueError, match="'name'"):
        Linked(ROWS).body_html()


@pytest.mark.parametrize("grouping", [False, True])
def test_cell_text_is_what_localize_and_conditional_escape_give(settings, grouping):
    from datetime import UTC, date, datetime
    from decimal import Decimal

    from django.utils.formats import localize
    from django.utils.html import conditional_escape
    from django.utils.safestring import mark_safe
    from django.utils.translation import gettext_lazy

    from review.web.tables import _cell_text

    settings.USE_THOUSAND_SEPARATOR = grouping
    values = [0, -7, 1234567, True, False, 2.5, Decimal("1234.50"), None, "", "a <b> & 'c\" d", "plain"]
    values += [
        mark_safe("<b>safe</b>"),
        gettext_lazy("lazy <x>"),
        date(2026, 12, 1),
        datetime(2026, 12, 1, 9, 5, tzinfo=UTC),
    ]
    for value in values:
        assert _cell_text(value, grouping=grouping) == conditional_escape(localize(value)), value


def test_esc_is_conditional_escape():
    from datetime import date

    from django.utils.html import conditional_escape
    from django.utils.safestring import mark_safe
    from django.utils.translation import gettext_lazy

    from review.web.format import esc

    values = [0, -7, 1234567, True, None, 2.5, "", "a <b> & 'c\" d", mark_safe("<b>safe</b>")]
    values += [gettext_lazy("lazy <x>"), date(2026, 12, 1)]
    for value in values:
        assert esc(value) == conditional_escape(value), value


def _model_columns():
    return {
        "name": tables.Column(),
        "max_active": tables.Column(),
        "description": tables.Column(),
        "counts": tables.Column(),  # a reverse one-to-one the host lacks: an empty value
        "get_deferred_fields": tables.Column(),  # a method: called, as django-tables2 does
        "nothing_here": tables.Column(),  # no such attribute: an empty value
    }


class LeanModels(LeanTable):
    locals().update(_model_columns())


class PlainModels(tables.Table):
    locals().update(_model_columns())

    class Meta:
        template_name = "tables/htmx_table.html"


def test_lean_cells_of_model_records_are_the_cells_django_tables2_renders(db):
    from lessons.models import Host

    hosts = [
        Host.objects.create(name="alpha", max_active=3, description="<b>x</b> & y"),
        Host.objects.create(name="beta", max_active=8, description=""),
    ]
    assert _html(LeanModels(hosts)) == _html(PlainModels(hosts))
    assert "<td >&lt;b&gt;x&lt;/b&gt; &amp; y</td>" in _html(LeanModels(hosts))


def _choice_columns():
    return {
        "hash": tables.Column(),
        "status": tables.Column(),  # a field with choices: its label, as django-tables2 shows it
        "host__name": tables.Column(),
        "host__budget_enabled": tables.Column(),
    }


class LeanChoices(LeanTable):
    locals().update(_choice_columns())


class PlainChoices(tables.Table):
    locals().update(_choice_columns())

    class Meta:
        template_name = "tables/htmx_table.html"


def test_a_field_with_choices_shows_its_label_as_django_tables2_does(entity, reviewer):
    from lessons.models import Host, Lesson
    from review.services.decisions import lessons_retire

    hashes = entity(2)
    lessons_retire(host=Host.objects.get(name="qa-host"), hashes=hashes[:1], actor=reviewer, reason="dup")
    rows = list(Lesson.objects.select_related("host").order_by("hash"))
    assert _html(LeanChoices(rows)) == _html(PlainChoices(rows))
    labels = {choice.label for choice in Lesson.Status}
    assert sum(_html(LeanChoices(rows)).count(f"<td >{label}</td>") for label in labels) == 2
