"""The decision log's filters (django-filter), shared by the page and its exports. docs/decisions.md.

URL parameters: ``seq`` (one decision: the target of the "decision #N" links), ``batch`` (the records of
one submission: the target of the log's batch links), ``host``, ``actor``, ``action``, ``reason_code``,
``status`` (the host's: ``awaiting``, ``applied``, ``failed``), ``outcome`` (``supported``,
``contradicted``, ``too_early``: docs/decisions.md, "Outcomes"), ``from`` and ``to`` (dates,
``YYYY-MM-DD``, UTC, both inclusive). ``from``
and ``to`` are Python keywords, hence they are added to ``base_filters`` after the class body.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import django_filters
from django import forms
from django.db.models import QuerySet

from review.log.selectors import (
    STATUS_APPLIED,
    STATUS_AWAITING,
    STATUS_FAILED,
    log_actor_names,
)
from review.models import Action, Decision, DecisionOutcome, ReasonCode
from review.web.format import action_term
from review.web.widgets import HostSearch, LeanSelect

DATE_RANGE_BACKWARDS = "The date range ends before it starts: 'to' must be on or after 'from'."


def _actor_choices() -> list[tuple[str, str]]:
    return [(name, name) for name in log_actor_names()]


def _day_start(day) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


class DecisionFilterForm(forms.Form):
    def clean(self):
        data = super().clean()
        start, end = data.get("from"), data.get("to")
        if start and end and end < start:
            raise forms.ValidationError(DATE_RANGE_BACKWARDS)
        return data


HOST_STATUS_CHOICES = [("awaiting", STATUS_AWAITING), ("applied", STATUS_APPLIED), ("failed", STATUS_FAILED)]
SEQ_MAX = 2**63 - 1  # the largest seq a database column holds


class SeqFilter(django_filters.NumberFilter):
    """One decision by its ``seq``: a whole number 1.. ``SEQ_MAX`` (a bigger one is a form error, not a
    database overflow)."""

    field_class = forms.IntegerField


class DecisionFilter(django_filters.FilterSet):
    """Filters of the log page and its exports; every value is exact (no partial matches)."""

    seq = SeqFilter(label="Decision #", min_value=1, max_value=SEQ_MAX)
    # LeanSelect: the same HTML as Django's select templates, without an include per option (200 hosts)
    # a host typed (review.web.widgets.HostSearch), not chosen among every host: 200 at scale (issue 25)
    host = django_filters.CharFilter(max_length=64, widget=HostSearch)
    actor = django_filters.ChoiceFilter(choices=(), empty_label="every actor", widget=LeanSelect)
    # Actions by their words with the record's term (the exports' and the URL's value) in brackets. Reason
    # codes by their labels ("restates another"), as every form shows them; the URL carries the value.
    action = django_filters.ChoiceFilter(
        choices=[(a, action_term(a)) for a in Action.values],
        empty_label="every action",
        widget=LeanSelect,
    )
    reason_code = django_filters.ChoiceFilter(
        choices=ReasonCode.choices, empty_label="any reason code", widget=LeanSelect
    )
    # The host's acknowledgement (docs/decisions.md, "Hosts apply decisions"): none yet, applied, failed.
    status = django_filters.ChoiceFilter(
        choices=HOST_STATUS_CHOICES,
        empty_label="any host status",
        label="Host status",
        widget=LeanSelect,
        method="filter_status",
    )
    # Did the decision help (docs/decisions.md, "Outcomes"): derived, stored beside the record.
    outcome = django_filters.ChoiceFilter(
        field_name="outcome__outcome",
        choices=DecisionOutcome.Kind.choices,
        empty_label="any outcome",
        label="Outcome",
        widget=LeanSelect,
    )
    batch = django_filters.CharFilter(label="Batch", max_length=64)

    class Meta:
        model = Decision
        fields: list[str] = []
        form = DecisionFilterForm

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # Lists, not callables: a callable's choices are read again each time the form iterates them.
        self.filters["actor"].extra["choices"] = _actor_choices()

    def filter_status(self, queryset: QuerySet, name: str, value: str) -> QuerySet:
        """``awaiting``: no acknowledgement yet; ``applied`` / ``failed``: the latest ack says so."""
        if value == "awaiting":
            return queryset.filter(ack__isnull=True)
        return queryset.filter(ack__status=value)

    def filter_from(self, queryset: QuerySet, name: str, value) -> QuerySet:
        return queryset.filter(at__gte=_day_start(value))

    def filter_to(self, queryset: QuerySet, name: str, value) -> QuerySet:
        if value >= date.max:  # no day follows 9999-12-31: nothing is later (issue 13, fault 11)
            return queryset
        return queryset.filter(at__lt=_day_start(value) + timedelta(days=1))


DecisionFilter.base_filters["from"] = django_filters.DateFilter(
    method="filter_from", label="From", widget=forms.DateInput(attrs={"type": "date"})
)
DecisionFilter.base_filters["to"] = django_filters.DateFilter(
    method="filter_to", label="To", widget=forms.DateInput(attrs={"type": "date"})
)


def filter_decisions(params, queryset: QuerySet[Decision]) -> DecisionFilter:
    """A bound ``DecisionFilter`` over ``queryset`` for the query parameters ``params`` (a QueryDict)."""
    return DecisionFilter(params, queryset=queryset)
