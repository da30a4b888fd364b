"""The queue's filter form: the host typed in a search box and checked against the one host it names
(issue 25: no page lists every host); an unknown host unsets the filters and says so."""

from __future__ import annotations

from review.piles.forms import UNKNOWN_HOST, QueueFilterForm


def test_a_known_host_filters_and_an_unknown_one_unsets_every_filter():
    form = QueueFilterForm({"host": " zeta ", "namespace": " ns ", "q": "x"}, pile_counts={"zeta": 2})
    assert form.filters() == {"host": "zeta", "namespace": "ns", "text": "x", "recurring": False}
    form = QueueFilterForm({"host": "nowhere", "namespace": "ns"}, pile_counts={})
    assert form.filters() == {"host": "", "namespace": "", "text": "", "recurring": False}
    assert form.errors["host"] == [UNKNOWN_HOST % {"host": "nowhere"}]


def test_the_host_box_is_a_search_field_with_a_list_the_server_fills():
    from tests.html import parse

    html = str(QueueFilterForm({"host": "b<&>\"'"}, pile_counts={})["host"])
    box = parse(html).find("input")
    assert (box.attrs["type"], box.attrs["value"], box.attrs["list"]) == ("search", "b<&>\"'", "host-names")
    assert (box.attrs["hx-get"], box.attrs["hx-target"]) == ("/host-names/", "#host-names")
    assert parse(html).find("datalist").attrs == {"id": "host-names"}


def test_an_unknown_host_in_the_url_says_the_filters_are_not_applied(entity, client, viewer):
    from tests.html import inline_text, parse

    entity(3)
    client.force_login(viewer)
    page = parse(client.get("/?host=no-such-host&namespace=qa").content)
    box = page.find("div", **{"data-testid": "filter-errors"})
    assert inline_text(box) == (
        "These filters are not valid, so none is applied and every pile is shown: "
        "host: There is no host named 'no-such-host'."
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
