"""The lesson page's form: restoring a lesson a ``retire`` retracted. spec: decisions.md, "Actions"."""

from __future__ import annotations

from django import forms

from review.web.forms import PILE_VERSION_MISSING, ReasonForm


class RestoreForm(ReasonForm):
    """Restore a lesson a ``retire`` decision retracted; ``pile_version`` as seen on the lesson page."""

    pile_version = forms.CharField(
        widget=forms.HiddenInput, error_messages={"required": PILE_VERSION_MISSING}, max_length=64
    )
