"""The pile page leads with its facts (issue 22, Build 3): the facts line, each fact's head (label, size,
why, the suggested keeper, "keep one of this fact"), and resolve by facts, a preview that selects every
member but each fact's keeper, presets the reason code and writes nothing."""

from __future__ import annotations

import pytest

from lessons.models import EntityCount, Host, Lesson
from lessons.selectors.facts import pile_facts_stored
from review.models import Decision, ReasonCode
from review.piles.facts import RESOLVE_NOTHING, RESOLVE_READY, facts_line
from tests.html import parse

ADBUY = "/pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture"
ADBUY_RESOLVE = "/pile/resolve/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture"
WAREHOUSE = "/pile/?host=warehouse-sql&namespace=analytics&subject=revenue_models"
WAREHOUSE_RESOLVE = "/pile/resolve/?host=warehouse-sql&namespace=analytics&subject=revenue_models"
OLD = "be490fe0e69454ef91c8d4de94069048692ead816ea021b93651600ef34c58e5"  # the fact's name (oldest)
NEW = "590b48ce4f04fbc6f6d8c886f5bf751fbdc53b0d02a1c746ca441c7a80bcf0cf"  # kept: both unmeasured, newest


def _checked(page) -> list[str]:
    return [i.attrs["value"][:8] for i in page.find_all("input", name="members") if "checked" in i.attrs]


def _facts(host: str, namespace: str, subject: str):
    return pile_facts_stored(host=Host.objects.get(name=host), namespace=namespace, subject=subject)


@pytest.mark.parametrize(
    ("counts", "line"),
    [
        ((10, 4, 2), "10 rules, 4 facts, 2 rules cover several"),
        ((1, 1, 1), "1 rule, 1 fact, 1 rule covers several"),
        ((8, 7, 0), "8 rules, 7 facts, 0 rules cover several"),
    ],
)
def test_the_facts_line_counts_rules_facts_and_umbrellas_with_singular_forms(counts, line):
    rules, facts, umbrellas = counts
    assert facts_line(rules=rules, facts=facts, umbrellas=umbrellas) == line


def test_the_adbuy_pile_leads_with_its_facts_in_pile_order(corpora, as_reviewer):
    facts = _facts("adbuy-desk", "desk.adbuy", "invoice_capture")
    page = parse(as_reviewer.get(ADBUY).content)
    umbrellas = sum(f.umbrella for f in facts)
    assert page.find(data_testid="facts-line").text == facts_line(
        rules=10, facts=len(facts) - umbrellas, umbrellas=umbrellas
    )
    heads = page.find_all("tr", data_fact_head="")
    assert [h.attrs["data-group"] for h in heads] == [f.name for f in facts]
    rows = [
        tr.attrs["data-hash"]
        for tr in page.find("table", "members").find_all("tr")
        if "data-hash" in tr.attrs
    ]
    assert rows == [h for f in facts for h in f.members]


def test_a_facts_head_has_its_label_size_why_keeper_and_keep_one(corpora, as_reviewer):
    page = parse(as_reviewer.get(WAREHOUSE).content)
    assert page.find(data_testid="facts-line").text == "8 rules, 7 facts, 0 rules cover several"
    head = page.find("tr", cls="group-head")
    assert head.attrs["data-group"] == OLD
    assert head.find(cls="fact-size").text == "2 rules state this fact"
    why = head.find(cls="why")
    assert [m.text for m in why.find_all("mark")] == [
        *("false", "is_internal"),  # the shared anchors
        *("accounts", "false", "filter", "internal", "query", "revenue", "test"),  # the shared words
    ]
    assert why.text.startswith("shared anchors false is_internal ; shared words accounts")
    keeper = head.find("select", name="keepers")
    options = [(o.attrs["value"][:8], "selected" in o.attrs, o.text) for o in keeper.find_all("option")]
    assert options == [
        ("be490fe0", False, "be490fe0 · not measured"),
        ("590b48ce", True, "590b48ce · not measured · suggested"),
    ]
    link = head.find("a", cls="keep-one")
    assert link.attrs["data-keep-one"] == OLD  # every member but the kept one
    assert link.attrs["href"] == (
        f"?host=warehouse-sql&namespace=analytics&subject=revenue_models&keep={OLD}#retire-form"
    )
    assert link.text == "Keep one of this fact o"
    # The suggested keeper is tagged in its row; only members of a fact of two or more can be taken out.
    tagged = [tr.attrs["data-hash"] for tr in page.find_all("tr") if tr.find(cls="keeper-tag")]
    assert tagged == [NEW]
    assert [a.attrs["data-split"] for a in page.find_all("a", cls="take-out")] == [OLD, NEW]
    # A fact of one says it restates no other rule, and is not marked.
    single = page.find("tr", data_group="881290152022e16d9fb7c152e48e460bf7e4c2aaeb2461889202a6e05377664b")
    assert single.find(cls="why").text == "restates no other rule of the pile"
    assert single.find(cls="fact-size").text == "1 rule states this fact"
    assert single.find("select") is None
    assert _checked(page) == []


def test_the_keep_link_pre_selects_all_but_the_kept_one_and_an_unknown_fact_nothing(corpora, as_reviewer):
    assert _checked(parse(as_reviewer.get(f"{WAREHOUSE}&keep={OLD}").content)) == ["be490fe0"]
    assert _checked(parse(as_reviewer.get(f"{WAREHOUSE}&keep={NEW}").content)) == []


def test_a_viewer_sees_the_facts_but_no_keeper_keep_one_resolve_or_mark_forms(corpora, as_viewer):
    page = parse(as_viewer.get(WAREHOUSE).content)
    assert page.find(data_testid="facts-line").text == "8 rules, 7 facts, 0 rules cover several"
    assert len(page.find_all("tr", cls="group-head")) == 1
    for found in (
        page.find("a", cls="keep-one"),
        page.find("select", name="keepers"),
        page.find("button", data_resolve=""),
        page.find("a", cls="take-out"),
        page.find("a", cls="merge-link"),
        page.find("form", id="merge-form"),
        page.find("form", id="split-form"),
    ):
        assert found is None
    assert page.find(data_testid="no-marks").text == "No reviewer has corrected this pile's facts."


def test_resolve_by_facts_selects_all_but_each_keeper_presets_the_code_and_writes_nothing(
    corpora, as_reviewer
):
    facts = _facts("warehouse-sql", "analytics", "revenue_models")
    before = list(Lesson.objects.order_by("id").values_list("status", flat=True))
    response = as_reviewer.post(WAREHOUSE_RESOLVE, {"reason": "  typed so far "})
    assert response.status_code == 200
    page = parse(response.content)
    assert _checked(page) == ["be490fe0"]
    code = page.find("select", name="reason_code")
    assert [o.attrs["value"] for o in code.find_all("option") if "selected" in o.attrs] == [
        ReasonCode.RESTATES_ANOTHER
    ]
    assert page.find("textarea", name="reason").text == "typed so far"
    panel = page.find(data_testid="resolve")
    assert panel.find("b").text == RESOLVE_READY.format(n=1, s="")
    assert page.find(data_testid="resolve-preview").text == "After the retire: 8 → 7 of 5 (still over by 2)"
    assert page.find(data_testid="resolve-umbrellas") is None  # no umbrella in this pile
    assert len(facts) == 7
    assert list(Lesson.objects.order_by("id").values_list("status", flat=True)) == before
    assert Decision.objects.count() == 0


def test_resolve_by_facts_keeps_the_keeper_the_reviewer_picked(corpora, as_reviewer):
    page = parse(as_reviewer.post(WAREHOUSE_RESOLVE, {"keepers": [OLD], "reason": ""}).content)
    assert _checked(page) == ["590b48ce"]
    keeper = page.find("select", name="keepers")
    assert [o.attrs["value"] for o in keeper.find_all("option") if "selected" in o.attrs] == [OLD]


def test_resolve_by_facts_on_a_pile_of_one_rule_per_fact_selects_nothing_and_says_so(corpora, as_reviewer):
    facts = _facts("adbuy-desk", "desk.adbuy", "invoice_capture")
    page = parse(as_reviewer.post(ADBUY_RESOLVE, {}).content)
    retire = [h for f in facts if not f.umbrella for h in f.others]
    assert _checked(page) == [h[:8] for h in retire]
    if not retire:
        assert page.find(data_testid="resolve").find("b").text == RESOLVE_NOTHING


def test_a_viewer_may_not_resolve_by_facts(corpora, as_viewer):
    assert as_viewer.post(WAREHOUSE_RESOLVE, {}).status_code == 403


def test_the_resolve_region_is_the_pile_region_for_htmx(corpora, as_reviewer):
    response = as_reviewer.post(WAREHOUSE_RESOLVE, {}, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="pile" data-region>')
    assert "<html" not in body


def test_an_umbrella_is_shown_covering_its_facts_and_resolve_leaves_it_alone(corpora, as_reviewer):
    facts = _facts("adbuy-desk", "desk.adbuy", "invoice_capture")
    umbrellas = [f for f in facts if f.umbrella]
    page = parse(as_reviewer.get(ADBUY).content)
    for umbrella in umbrellas:
        head = page.find("tr", data_group=umbrella.name)
        assert head.find("span", cls="umbrella").text == "umbrella"
        assert (
            head.find(cls="fact-size").text
            == f"umbrella: one rule stating {len(umbrella.covers)} of the pile's facts"
        )
        links = [a.attrs["href"] for a in head.find(cls="covers").find_all("a")]
        assert links == [f"#fact-{name}" for name in umbrella.covers]
        assert all(page.find("tr", id=f"fact-{name}") is not None for name in umbrella.covers)
        assert head.find("select", name="keepers") is None
    resolved = parse(as_reviewer.post(ADBUY_RESOLVE, {}).content)
    checked = {i.attrs["value"] for i in resolved.find_all("input", name="members") if "checked" in i.attrs}
    assert not checked & {u.name for u in umbrellas}
    # The queue's "Restatements" counts exactly what resolving by facts selects (a newcomer found 6 there
    # against 4 selected, while umbrellas were counted as restatements).
    assert len(checked) == EntityCount.objects.get(subject="invoice_capture").restatements == 4
    if umbrellas:
        listed = resolved.find(data_testid="resolve-umbrellas").find_all("span", cls="mono")
        assert [s.text for s in listed] == [u.name[:8] for u in umbrellas]
