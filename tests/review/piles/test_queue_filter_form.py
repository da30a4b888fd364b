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


def test_an_unknown_host_in_the_url_says_the_filters_are_not_applied(entity, client, viewer):
    from tests.html import inline_text, parse

    entity(3)
    client.force_login(viewer)
    page = parse(client.get("/?host=no-such-host&namespace=qa").content)
    box = page.find("div", **{"data-testid": "filter-errors"})
    assert inline_text(box) == (
        "These filters are not valid, so none is applied and every pile is shown: "
        "host: Select a valid choice. no-such-host is not one of the available choices."
    )
    assert len(page.find("table", cls="queue-table").find("tbody").find_all("tr")) == 1
    assert parse(client.get("/?host=qa-host").content).find("div", **{"data-testid": "filter-errors"}) is None


def test_the_default_order_is_named_until_a_column_sorts(entity, client, viewer):
    from tests.html import inline_text, parse

    entity(3)
    client.force_login(viewer)
    note = parse(client.get("/").content).find("p", **{"data-testid": "default-order"})
    assert inline_text(note) == (
        "Worst first: the most over budget, then the most live lessons; a column header sorts by that column."
    )
    assert parse(client.get("/?sort=-count").content).find("p", **{"data-testid": "default-order"}) is None
