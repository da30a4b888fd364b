"""Form widgets rendered in Python rather than through the form renderer's templates.

Django renders a ``<select>`` by including ``select_option.html`` (and ``attrs.html``) once per option:
for the queue's host filter (200 hosts at 1M lessons, issue 10) that was a fifth of the page's time.
``LeanRenderer`` (the project's ``FORM_RENDERER``) does the same for every ``<input>`` and ``<textarea>``.
"""

from __future__ import annotations

from django import forms
from django.forms.renderers import DjangoTemplates
from django.utils.formats import localize
from django.utils.html import conditional_escape, escape, format_html, format_html_join
from django.utils.safestring import SafeData, SafeString, mark_safe


def _attrs(attrs: dict) -> SafeString:
    """As ``django/forms/widgets/attrs.html``: `` name="value"`` each, ``True`` bare, ``False`` left out."""
    return format_html_join(
        "",
        "{}",
        (
            (format_html(" {}", name) if value is True else format_html(' {}="{}"', name, str(value)),)
            for name, value in attrs.items()
            if value is not False
        ),
    )


class LeanSelect(forms.Select):
    """``forms.Select`` giving byte for byte the HTML of Django's ``select.html`` and ``select_option.html``
    (an option a line, each followed by an empty line), built in one pass. Grouped choices fall back to
    the templates."""

    def render(self, name, value, attrs=None, renderer=None) -> SafeString:
        choices = [(("" if v is None else v), label) for v, label in self.choices]
        if self.option_inherits_attrs or any(isinstance(label, list | tuple) for _v, label in choices):
            return super().render(name, value, attrs, renderer)
        # Django's optgroups() builds a dict per option (1.7 ms for 200 options): the same choice of
        # "selected" here, read straight from the choices.
        widget = forms.Widget.get_context(self, name, value, attrs)["widget"]
        if self.allow_multiple_selected:
            widget["attrs"]["multiple"] = True
        chosen = widget["value"]
        options = []
        has_selected = False
        for option_value, label in choices:
            selected = (not has_selected or self.allow_multiple_selected) and str(option_value) in chosen
            has_selected |= selected
            options.append(
                f'\n  <option value="{escape(str(option_value))}"{" selected" if selected else ""}>'
                f"{conditional_escape(label)}</option>\n"
            )
        head = format_html('<select name="{}"{}>', widget["name"], _attrs(widget["attrs"]))
        return mark_safe(head + "".join(options) + "\n</select>")  # noqa: S308 - every value is escaped


class HostSearch(forms.TextInput):
    """A host name typed, not chosen from every host (200 at 1M lessons, issue 25): ``<input
    type="search">`` with a ``<datalist>`` the server fills as the reviewer types (htmx asks
    ``review:host_names`` for at most 20 names, after a 200 ms pause, and once on focus). Without
    JavaScript it is a plain text box; the form checks the name."""

    input_type = "search"
    LIST_ID = "host-names"

    def render(self, name, value, attrs=None, renderer=None) -> SafeString:
        from django.urls import reverse

        attrs = {
            **(attrs or {}),
            "list": self.LIST_ID,
            "autocomplete": "off",
            "hx-get": reverse("review:host_names"),
            "hx-trigger": "input changed delay:200ms, focus once",
            "hx-target": f"#{self.LIST_ID}",
            "hx-swap": "innerHTML",
            "hx-sync": "this:replace",
        }
        field = super().render(name, value, attrs, renderer)
        return mark_safe(f'{field}<datalist id="{self.LIST_ID}"></datalist>')  # noqa: S308 - rendered by Django


# Django's widget templates that are only ``{% include "django/forms/widgets/input.html" %}``
# (Django 5.2), and ``textarea.html``: built here in Python, byte for byte as the templates give them.
INPUT_TEMPLATES = frozenset(
    f"django/forms/widgets/{name}.html"
    for name in (
        "checkbox color date datetime email file hidden number password search tel text time url".split()
    )
)
TEXTAREA_TEMPLATE = "django/forms/widgets/textarea.html"


def _input_html(widget: dict) -> str:
    """``django/forms/widgets/input.html`` for a widget context (``{"type", "name", "value", "attrs"}``)."""
    value = widget["value"]
    shown = ""
    if value is not None:  # the template's ``{% if widget.value != None %}``, then ``|stringformat:'s'``
        text = str(value) if isinstance(value, tuple) else "%s" % (value,)  # noqa: UP031 - as the filter
        shown = format_html(' value="{}"', mark_safe(text) if isinstance(value, SafeData) else text)  # noqa: S308
    return format_html(
        '<input type="{}" name="{}"{}{}>', widget["type"], widget["name"], shown, _attrs(widget["attrs"])
    )


def _textarea_html(widget: dict) -> str:
    """``django/forms/widgets/textarea.html``: the value on the line after the opening tag."""
    value = widget["value"]
    body = conditional_escape(localize(value)) if value else ""
    head = format_html('<textarea name="{}"{}>', widget["name"], _attrs(widget["attrs"]))
    return f"{head}\n{body}</textarea>"


class LeanRenderer(DjangoTemplates):
    """The form renderer (``FORM_RENDERER``): Django's ``DjangoTemplates`` renderer, except that a text-like
    ``<input>`` (text, hidden, search, date, checkbox, …) and a ``<textarea>`` are built in Python instead of
    through their templates (0.2-0.4 ms each through the templates; a pile page has nine fields, issue 25).
    The HTML is the templates' byte for byte (tests/review/web/test_lean_renderer.py holds it to them for
    every such widget); any other template (selects, labels, whole forms, the admin's widgets) is rendered
    by the templates as before."""

    def render(self, template_name: str, context: dict, request=None) -> str:
        if template_name in INPUT_TEMPLATES:
            return _input_html(context["widget"])
        if template_name == TEXTAREA_TEMPLATE:
            return _textarea_html(context["widget"])
        return super().render(template_name, context, request)
