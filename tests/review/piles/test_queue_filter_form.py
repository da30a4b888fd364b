"""The queue's filter form with its host choices as a ``HostChoices`` iterator (issue 10)."""

from __future__ import annotations

from django import forms

from review.piles.forms import HostChoices, QueueFilterForm
from review.web.widgets import LeanSelect

NAMES = ["alpha", "b<&>\"'", "zeta"]


def test_a_known_host_filters_and_an_unknown_one_unsets_every_filter():
    form = QueueFilterForm({"host": "zeta", "namespace": " ns ", "q": "x"}, host_names=NAMES)
    assert form.filters() == {"host": "zeta", "namespace": "ns", "text": "x", "recurring": False}
    form = QueueFilterForm({"host": "nowhere", "namespace": "ns"}, host_names=NAMES)
    assert form.filters() == {"host": "", "namespace": "", "text": "", "recurring": False}
    assert "host" in form.errors


def test_host_choices_render_as_a_list_of_pairs_does_and_iterate_again():
    choices = HostChoices(NAMES, "All hosts")
    pairs = [("", "All hosts"), *((n, n) for n in NAMES)]
    assert list(choices) == pairs and list(choices) == pairs

    class Listed(forms.Form):
        host = forms.ChoiceField(required=False, widget=LeanSelect, choices=pairs)

    for value in ("", "b<&>\"'", "nowhere"):
        lean = QueueFilterForm({"host": value}, host_names=NAMES)
        assert str(lean["host"]) == str(Listed({"host": value})["host"])
