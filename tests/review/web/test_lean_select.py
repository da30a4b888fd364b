"""LeanSelect renders the HTML of Django's select templates, in Python."""

from __future__ import annotations

import pytest
from django import forms

from review.web.widgets import LeanSelect

CHOICES = [("", "All hosts"), ("a<b", "a<b & c"), ("7", 7), ("x", "x")]


@pytest.mark.parametrize("value", ["", "a<b", "7", None, "unknown"])
@pytest.mark.parametrize("attrs", [None, {"id": "id_host", "required": True, "data-x": '"q"', "off": False}])
def test_lean_select_renders_what_django_select_renders(value, attrs):
    lean = LeanSelect(choices=CHOICES).render("host", value, attrs)
    plain = forms.Select(choices=CHOICES).render("host", value, attrs)
    assert lean == plain


def test_lean_select_marks_the_chosen_option_and_escapes_the_labels():
    html = LeanSelect(choices=CHOICES[:2]).render("host", "a<b", {"id": "id_host"})
    assert html == (
        '<select name="host" id="id_host">\n  <option value="">All hosts</option>\n\n'
        '  <option value="a&lt;b" selected>a&lt;b &amp; c</option>\n\n</select>'
    )


def test_grouped_choices_render_through_the_templates():
    grouped = [("G<", [("a", "A")]), ("b", "B")]
    assert LeanSelect(choices=grouped).render("h", "a") == forms.Select(choices=grouped).render("h", "a")


@pytest.mark.parametrize("value", ["", "a", None])
def test_a_none_choice_and_a_repeated_value_render_as_django_renders_them(value):
    """A ``None`` choice is the empty value; of two options with the chosen value only the first is
    selected (Django's rule for a single select)."""
    choices = [(None, "none"), ("a", "first a"), ("a", "second a")]
    lean = LeanSelect(choices=choices).render("f", value, {"id": "id_f"})
    assert lean == forms.Select(choices=choices).render("f", value, {"id": "id_f"})
    assert lean.count(" selected") == 1
