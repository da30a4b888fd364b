"""Finding 12: the budget form offers no retire reason code; its preview asks for a reason only when none
is written; the piles it lists are links to their pile pages."""

from __future__ import annotations

import pytest

from tests.html import parse
from tests.review.hosts.test_budget_page import URL, post

ASK = "Nothing has changed yet. Write a reason and save to record the decision."
SAVE = "Nothing has changed yet. Save budget to record the decision with your reason."


@pytest.mark.parametrize(
    ("reason", "line"), [("", ASK), ("   ", ASK), ("Fewer piles while we consolidate.", SAVE)]
)
def test_the_preview_asks_for_a_reason_only_when_none_is_written(client, admin_user, corpora, reason, line):
    client.force_login(admin_user)
    response = post(client, max_active="12", budget_enabled="on", reason=reason, preview="1", htmx=True)
    page = parse(response.content)
    assert page.find(data_testid="preview-next").text == line
    (link,) = page.find(data_testid="disappear").find_all("a")
    assert (link.text, link.attrs["href"]) == (
        "entity:desk.adbuy/invoice_capture",
        "/pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture",
    )


def test_the_budget_form_has_no_reason_code(client, admin_user, corpora):
    client.force_login(admin_user)
    page = parse(client.get(URL).content)
    assert page.find("select", name="reason_code") is None
    assert [
        f.attrs["name"]
        for f in page.find("form", id="budget-form").find_all("input")
        if f.attrs.get("type") != "hidden"
    ] == ["max_active", "budget_enabled"]
