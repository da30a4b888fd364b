"""What the server renders for keyboard-first triage and selection (issue 12, Build 2; findings 4, 5, 11, 13):
the skip link first, one live region for notices, the rows j/k move between, the selection line, the
retire button's count and the preview of the count after it, and the pile's words explained in text.
The behaviour in a browser: tests/browser/test_keyboard.py."""

from __future__ import annotations

import pytest

from review.web.format import counted, retire_preview
from tests.html import parse

WAREHOUSE = "/pile/?host=warehouse-sql&namespace=analytics&subject=revenue_models"
OLD = "be490fe0e69454ef91c8d4de94069048692ead816ea021b93651600ef34c58e5"


@pytest.mark.parametrize(
    ("args", "text"),
    [
        ((9, 6, True, 2), "After the retire: 9 \u2192 7 of 6 (still over by 1)"),
        ((9, 6, True, 3), "After the retire: 9 \u2192 6 of 6 (within budget)"),
        ((9, 6, False, 0), "After the retire: 9 \u2192 9 of 6 (budget off)"),
    ],
)
def test_retire_preview(args, text):
    assert retire_preview(*args) == text


@pytest.mark.parametrize(("n", "text"), [(0, "0 sessions"), (1, "1 session"), (2, "2 sessions")])
def test_counted(n, text):
    assert counted(n, "session") == text


def test_the_skip_link_is_the_first_link_and_main_is_its_target(corpora, as_reviewer):
    page = parse(as_reviewer.get("/").content)
    first = page.find("body").find("a")
    assert (first.attrs["href"], first.text) == ("#content", "Skip to content")
    assert page.find("main").attrs["id"] == "content"


def test_only_the_announcer_is_a_live_region_of_the_pile_page(corpora, as_reviewer):
    page = parse(as_reviewer.get(WAREHOUSE).content)
    live = [
        el.attrs.get("id") for el in page.iter() if "aria-live" in el.attrs and el.attrs["aria-live"] != "off"
    ]
    assert live == ["announcer"]
    assert page.find(id="announcer").attrs["role"] == "status"


def test_members_are_keyboard_rows_with_a_select_all_box(corpora, as_reviewer):
    page = parse(as_reviewer.get(WAREHOUSE).content)
    table = page.find("table", "members")
    assert "data-rows" in table.attrs
    rows = [tr.attrs["data-row"] for tr in table.find_all("tr") if "data-row" in tr.attrs]
    assert len(rows) == 8 and rows[2] == OLD
    box = table.find("input", data_select_all="")
    assert (box.attrs["id"], box.attrs["aria-keyshortcuts"]) == ("select-all", "a")
    assert [lb.text for lb in table.find_all("label") if lb.attrs.get("for") == "select-all"] == [
        "Select all"
    ]


def test_nothing_selected_the_button_and_preview_say_so(corpora, as_reviewer):
    page = parse(as_reviewer.get(WAREHOUSE).content)
    assert page.find(data_selected_count="").text == "0 of 8 selected"
    assert page.find(data_retire_label="").text == "Retire selected lessons"
    assert page.find(data_retire_preview="").text == "After the retire: 8 \u2192 8 of 5 (still over by 3)"
    form = page.find("form", id="retire-form")
    assert (form.attrs["data-count"], form.attrs["data-max-active"], form.attrs["data-budget-enabled"]) == (
        "8",
        "5",
        "true",
    )


def test_keep_one_without_javascript_counts_the_preselected_member(corpora, as_reviewer):
    page = parse(as_reviewer.get(f"{WAREHOUSE}&keep={OLD}").content)
    assert page.find(data_selected_count="").text == "1 of 8 selected"
    assert page.find(data_retire_label="").text == "Retire 1 lesson"
    assert page.find(data_retire_preview="").text == "After the retire: 8 \u2192 7 of 5 (still over by 2)"


def test_the_pile_explains_its_bar_version_and_stale_in_text(corpora, as_reviewer):
    terms = parse(as_reviewer.get(WAREHOUSE).content).find(data_testid="pile-terms")
    assert [dt.text for dt in terms.find_all("dt")] == ["The bar, 8 / 5", "Pile version", "Stale"]
    assert [dd.text for dd in terms.find_all("dd")] == [
        "8 live lessons against the host's budget (max_active) of 5; the dark tick marks the budget, the red "
        "part is the overage. An entity is a pile while its live lessons exceed the budget.",
        "A fingerprint of the pile's lessons; an action on a pile that changed since you loaded it is "
        "refused: you are shown the pile fresh instead, and nothing is written.",
        "A draft is stale when a lesson this draft supersedes is no longer live: it can be rejected, not "
        "approved, until that lesson is restored.",
    ]


def test_the_hosts_table_names_its_budget_column(corpora, client, admin_user):
    client.force_login(admin_user)
    page = parse(client.get("/hosts/").content)
    # One "Budget" header; the edit links' column is "Edit".
    headers = [th.text for th in page.find("table", "hosts").find_all("th")]
    assert headers == ["Host", "Description", "Budget", "Live lessons", "Entities", "Piles", "Edit"]


def test_the_api_docs_page_has_a_language_a_way_back_and_a_main(corpora, as_reviewer):
    page = parse(as_reviewer.get("/api/v1/docs").content)
    assert page.find("html").attrs["lang"] == "en"
    back = page.find("nav").find("a")
    assert (back.attrs["href"], back.text) == ("/", "\u2190 Back to Lesson Pile Review")
    assert page.find("main").find(id="swagger-ui") is not None
