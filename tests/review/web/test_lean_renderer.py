"""LeanRenderer, the project's form renderer: every ``<input>`` and ``<textarea>`` byte for byte as
Django's templates render them, the other templates through the templates."""

from __future__ import annotations

import datetime

import pytest
from django import forms
from django.conf import settings
from django.forms.renderers import DjangoTemplates, get_default_renderer
from django.utils.safestring import mark_safe

from review.lessons.forms import RetireLessonForm
from review.piles.forms import MergeForm, QueueFilterForm
from review.web.widgets import INPUT_TEMPLATES, TEXTAREA_TEMPLATE, HostSearch, LeanRenderer, LeanSelect

TEMPLATES = DjangoTemplates()
LEAN = LeanRenderer()
INPUTS = [
    forms.TextInput,
    forms.HiddenInput,
    forms.SearchInput,
    forms.NumberInput,
    forms.EmailInput,
    forms.URLInput,
    forms.PasswordInput,
    forms.ColorInput,
    forms.TelInput,
    forms.DateInput,
    forms.DateTimeInput,
    forms.TimeInput,
    forms.CheckboxInput,
    forms.FileInput,
]
VALUES = [None, "", "a<b & \"c\" 'd'", mark_safe("<b>kept</b>"), 7, 2.5, True, False, "  spaced  "]
ATTRS = [
    None,
    {"id": "id_f", "required": True, "disabled": False, "data-x": '"q" <&>', "rows": 3},
    {"class": mark_safe("a&amp;b"), "maxlength": 64},
]


def test_the_project_renders_forms_with_the_lean_renderer():
    assert settings.FORM_RENDERER == "review.web.widgets.LeanRenderer"
    assert isinstance(get_default_renderer(), LeanRenderer)


def test_every_template_it_builds_is_an_input_or_the_textarea():
    """The templates it replaces are exactly the widgets' ``<input>`` ones in use and the textarea's: each
    widget class above names one of them, and every one of them is named by a widget class above."""
    assert {widget.template_name for widget in INPUTS} == INPUT_TEMPLATES
    assert forms.Textarea.template_name == TEXTAREA_TEMPLATE


@pytest.mark.parametrize("widget_class", INPUTS)
@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("attrs", ATTRS)
def test_an_input_is_what_the_templates_give(widget_class, value, attrs):
    lean = widget_class().render("field", value, attrs, renderer=LEAN)
    plain = widget_class().render("field", value, attrs, renderer=TEMPLATES)
    assert lean == plain


@pytest.mark.parametrize("value", VALUES)
@pytest.mark.parametrize("attrs", ATTRS)
def test_a_textarea_is_what_the_template_gives(value, attrs):
    lean = forms.Textarea().render("reason", value, attrs, renderer=LEAN)
    assert lean == forms.Textarea().render("reason", value, attrs, renderer=TEMPLATES)


def test_the_html_itself():
    text = forms.TextInput().render("q", 'a<b "c"', {"id": "id_q", "required": True}, renderer=LEAN)
    assert text == '<input type="text" name="q" value="a&lt;b &quot;c&quot;" id="id_q" required>'
    checked = forms.CheckboxInput().render("recurring", True, renderer=LEAN)
    assert checked == '<input type="checkbox" name="recurring" checked>'
    date = forms.DateInput().render("from", datetime.date(2026, 12, 4), renderer=LEAN)
    assert date == '<input type="text" name="from" value="2026-12-04">'
    area = forms.Textarea(attrs={"rows": 3}).render("reason", "x < y", renderer=LEAN)
    assert area == '<textarea name="reason" cols="40" rows="3">\nx &lt; y</textarea>'
    empty = forms.Textarea().render("reason", "", renderer=LEAN)
    assert empty == '<textarea name="reason" cols="40" rows="10">\n</textarea>'


def test_other_templates_go_through_the_templates():
    """A select, a whole form and its labels: the same output as the templates' renderer."""
    choices = [("", "any"), ("a<b", "a<b")]
    select = forms.Select(choices=choices)
    assert select.render("s", "a<b", renderer=LEAN) == select.render("s", "a<b", renderer=TEMPLATES)
    form = QueueFilterForm({"host": "bench-000", "q": "<flaky>", "recurring": "on"}, pile_counts={})
    assert form.render(renderer=LEAN) == form.render(renderer=TEMPLATES)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "form",
    [
        lambda: RetireLessonForm(initial={"pile_version": "v1"}, last_live=False),
        lambda: RetireLessonForm(
            {"reason": "x" * 501, "reason_code": "bogus", "pile_version": "v<1>"}, last_live=True
        ),
        lambda: MergeForm({"merge-fact": "a"}, facts=[("a", "a<1>"), ("b", "b")]),
        lambda: QueueFilterForm({"host": "a&b", "namespace": "ns", "q": '"x"'}, pile_counts={"a&b": 2}),
    ],
)
def test_the_pages_forms_render_as_before(form):
    """The project's forms field by field, errors included: the lean renderer's HTML is the templates'."""
    lean, plain = form(), form()
    lean.renderer, plain.renderer = LEAN, TEMPLATES
    for name in lean.fields:
        assert str(lean[name]) == str(plain[name])


def test_the_reason_code_select_is_djangos_html():
    """The decision forms' reason code is a LeanSelect: the same HTML as Django's ``Select``."""
    form = RetireLessonForm({"reason_code": "duplicate"}, last_live=False)
    field = form.fields["reason_code"]
    assert isinstance(field.widget, LeanSelect)
    plain = forms.Select(choices=field.choices).render("reason_code", "duplicate", {"id": "id_reason_code"})
    assert str(form["reason_code"]) == plain


def test_the_host_box_is_the_text_input_plus_its_list():
    html = HostSearch().render("host", "a<b", {"id": "id_host"}, renderer=LEAN)
    assert html.startswith('<input type="search" name="host" value="a&lt;b" id="id_host" list="host-names"')
    assert html.endswith('hx-sync="this:replace"><datalist id="host-names"></datalist>')
