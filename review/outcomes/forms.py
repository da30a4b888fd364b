"""The calibration page's filters: one host (typed, as the queue's and the log's host boxes) and the
month to page back from. docs/decisions.md, "Outcomes"."""

from __future__ import annotations

from django import forms

from review.web.widgets import HostSearch


class CalibrationFilter(forms.Form):
    """``host``: only that host's decisions, by host ("" for every host, summed); ``before``: show the
    months before this day (the first of a month), for "Earlier months"."""

    host = forms.CharField(required=False, max_length=64, strip=True, label="Host", widget=HostSearch)
    before = forms.DateField(required=False, widget=forms.HiddenInput)
