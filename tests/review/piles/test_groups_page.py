"""The pile page by restatement group: the groups line, a group's header with its shared words marked,
and "keep one of this group" (a link that pre-selects without JavaScript)."""

from __future__ import annotations

from tests.html import parse

WAREHOUSE = "/pile/?host=warehouse-sql&namespace=analytics&subject=revenue_models"
OLD = "be490fe0e69454ef91c8d4de94069048692ead816ea021b93651600ef34c58e5"  # the group's name (oldest)
NEW = "590b48ce4f04fbc6f6d8c886f5bf751fbdc53b0d02a1c746ca441c7a80bcf0cf"  # kept: both unmeasured, newest


def _checked(page) -> list[str]:
    return [i.attrs["value"][:8] for i in page.find_all("input", name="members") if "checked" in i.attrs]


def test_the_page_lists_members_by_group_with_the_shared_words_marked(corpora, as_reviewer):
    html = as_reviewer.get(WAREHOUSE).content.decode()
    page = parse(html)
    assert page.find(data_testid="groups-line").text.startswith("8 lessons, 7 groups.")
    order = [
        tr.attrs["data-hash"][:8]
        for tr in page.find("table", "members").find_all("tr")
        if "data-hash" in tr.attrs
    ]
    assert order == [
        "88129015",
        "93607270",
        "be490fe0",
        "590b48ce",
        "efd23782",
        "15329f64",
        "793e0c1c",
        "c586a834",
    ]
    (head,) = page.find_all("tr", cls="group-head")
    assert head.attrs["data-group"] == OLD
    assert [m.text for m in head.find_all("mark", cls="shared")] == [
        "accounts",
        "false",
        "filter",
        "is_internal",
        "query",
        "revenue",
        "test",
    ]
    link = head.find("a", cls="keep-one")
    assert link.attrs["data-keep-one"] == OLD  # every member but the kept one
    assert link.attrs["href"] == (
        f"?host=warehouse-sql&namespace=analytics&subject=revenue_models&keep={OLD}#retire-form"
    )
    text = page.find("tr", data_hash=NEW).find(cls="lesson-text")
    assert [m.text for m in text.find_all("mark")] == [
        "Filter",
        "test",
        "accounts",
        "is_internal",
        "false",
        "revenue",
        "query",
    ]
    mark = '<mark class="shared">{}</mark>'.format
    marked = " ".join(mark(w) for w in ("Filter", "test", "accounts"))
    # The text is kept as it is between the marks (no space added or lost).
    assert (
        f"{marked} with `{mark('is_internal')} = {mark('false')}` in every {mark('revenue')} and retention"
        f" {mark('query')}.</div>"
    ) in html
    # A group of one has nothing marked; nothing is pre-selected without ?keep=.
    single = next(tr for tr in page.find_all("tr") if tr.attrs.get("data-hash", "").startswith("88129015"))
    assert single.find("mark") is None
    assert _checked(page) == []


def test_the_keep_link_pre_selects_all_but_the_kept_one_and_an_unknown_group_nothing(corpora, as_reviewer):
    assert _checked(parse(as_reviewer.get(f"{WAREHOUSE}&keep={OLD}").content)) == ["be490fe0"]
    assert _checked(parse(as_reviewer.get(f"{WAREHOUSE}&keep={NEW}").content)) == []


def test_a_viewer_sees_the_groups_but_no_keep_action(corpora, as_viewer):
    page = parse(as_viewer.get(WAREHOUSE).content)
    assert len(page.find_all("tr", cls="group-head")) == 1
    assert page.find("a", cls="keep-one") is None
