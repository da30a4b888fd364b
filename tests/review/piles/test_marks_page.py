"""Correcting the facts on the pile page (issue 22, Build 2): "mark two facts as one" and "take a rule out",
each with a reason; the marks are listed with who made them, on the pile page and the host page; a viewer
sees them and may not make them."""

from __future__ import annotations

import pytest

from lessons.models import Host, RestatementMark
from lessons.selectors.facts import pile_facts_stored
from review.models import Decision
from review.piles.fact_views import MARK_ACTION_UNKNOWN, MERGED_NOTICE, SPLIT_NOTICE
from review.piles.forms import FACT_GONE, FACTS_THE_SAME, MEMBER_NOT_IN_A_GROUP
from review.services.common import REASON_REQUIRED
from review.services.restatements import restatement_mark
from tests.html import parse

ADBUY = "/pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture"
MARK = "/pile/mark/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture"


def facts():
    return pile_facts_stored(
        host=Host.objects.get(name="adbuy-desk"), namespace="desk.adbuy", subject="invoice_capture"
    )


def labels(page) -> dict[str, str]:
    return {
        tr.attrs["data-group"]: tr.find(cls="fact-label").text
        for tr in page.find_all("tr", data_fact_head="")
    }


def test_marking_two_facts_as_one_regroups_the_pile_and_lists_the_mark(corpora, as_reviewer):
    first, second = [f for f in facts() if not f.umbrella][:2]
    shown = labels(parse(as_reviewer.get(ADBUY).content))
    response = as_reviewer.post(
        MARK,
        {
            "do": "merge",
            "merge-fact": first.name,
            "merge-other": second.name,
            "merge-reason": "Both say fill it.",
        },
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    page = parse(response.content)
    notice = MERGED_NOTICE.format(a=shown[first.name], b=shown[second.name])
    assert page.find(cls="notice-success").find("span").text == notice
    merged = next(f for f in facts() if first.name in f.members)
    assert set(first.members) | set(second.members) <= set(merged.members)
    assert merged.marked
    head = page.find("tr", data_group=merged.name)
    assert head.find(cls="marked").text == "corrected by rita"
    (item,) = page.find(data_testid="marks").find_all("li")
    a, b = sorted((first.name, second.name))
    assert (
        item.text
        == f"rita {item.find('time').text} : {a[:8]} and {b[:8]} state one fact . “Both say fill it.”"
    )
    assert Decision.objects.count() == 0


def test_taking_a_rule_out_makes_it_a_fact_of_its_own(corpora, as_reviewer, reviewer):
    first, second = [f for f in facts() if not f.umbrella][:2]
    host = Host.objects.get(name="adbuy-desk")
    restatement_mark(host=host, pairs=[(first.name, second.name)], same=True, actor=reviewer, reason="one")
    merged = next(f for f in facts() if first.name in f.members)
    newer = merged.members[-1]
    response = as_reviewer.post(
        MARK, {"do": "split", "split-member": newer, "split-reason": "Another instruction."}
    )
    assert response.status_code == 302  # without htmx: back to the pile, with the notice as a message
    page = parse(as_reviewer.get(ADBUY).content)
    label = labels(page)[merged.name]
    assert page.find(cls="notice-success").find("span").text == SPLIT_NOTICE.format(
        member=newer[:8], label=label
    )
    assert next(f for f in facts() if newer in f.members).members == (newer,)
    assert RestatementMark.objects.filter(same=False).count() == len(merged.members) - 1


@pytest.mark.parametrize(
    ("data", "field", "error"),
    [
        ({"merge-fact": "F0", "merge-other": "F0", "merge-reason": "x"}, "merge-other", FACTS_THE_SAME),
        ({"merge-fact": "F0", "merge-other": "f" * 64, "merge-reason": "x"}, "merge-other", FACT_GONE),
        ({"merge-fact": "F0", "merge-other": "F1", "merge-reason": " "}, "merge-reason", REASON_REQUIRED),
    ],
)
def test_a_bad_merge_is_refused_beside_its_field_and_nothing_is_written(
    corpora, as_reviewer, data, field, error
):
    names = {"F0": facts()[0].name, "F1": facts()[1].name}
    sent = {"do": "merge", **{k: names.get(v, v) for k, v in data.items()}}
    response = as_reviewer.post(MARK, sent, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    page = parse(response.content)
    box = page.find(id=f"id_{field}").attrs["id"]
    errors = [p.text for p in page.find("form", id="merge-form").find_all("p", cls="field-error")]
    assert (box, errors) == (f"id_{field}", [error])
    assert page.find("form", id="split-form").find("p", cls="field-error") is None
    assert RestatementMark.objects.count() == 0


def test_a_rule_in_no_fact_of_two_cannot_be_taken_out(corpora, as_reviewer):
    alone = next(f for f in facts() if len(f.members) == 1)
    response = as_reviewer.post(MARK, {"do": "split", "split-member": alone.name, "split-reason": "x"})
    assert response.status_code == 422
    errors = [
        p.text for p in parse(response.content).find("form", id="split-form").find_all("p", cls="field-error")
    ]
    assert errors == [MEMBER_NOT_IN_A_GROUP]


def test_an_unknown_mark_action_is_refused(corpora, as_reviewer):
    response = as_reviewer.post(MARK, {"do": "steal"})
    assert response.status_code == 422
    assert parse(response.content).find(cls="notice-error").text == MARK_ACTION_UNKNOWN


def test_a_viewer_sees_the_marks_but_may_not_make_one(corpora, as_viewer, reviewer):
    first, second = facts()[:2]
    host = Host.objects.get(name="adbuy-desk")
    restatement_mark(
        host=host, pairs=[(first.name, second.name)], same=False, actor=reviewer, reason="differ"
    )
    response = as_viewer.post(
        MARK, {"do": "merge", "merge-fact": first.name, "merge-other": second.name, "merge-reason": "x"}
    )
    assert response.status_code == 403
    page = parse(as_viewer.get(ADBUY).content)
    (item,) = page.find(data_testid="marks").find_all("li")
    assert "different facts" in item.text and item.text.startswith("rita ")
    assert page.find("form", id="merge-form") is None
    assert RestatementMark.objects.count() == 1


def test_the_merge_and_take_out_links_fill_the_forms_without_javascript(corpora, as_reviewer):
    first, second = facts()[:2]
    page = parse(as_reviewer.get(f"{ADBUY}&merge={first.name}&split={second.name}").content)
    chosen = page.find("select", id="id_merge-fact").find_all("option")
    assert [o.attrs["value"] for o in chosen if "selected" in o.attrs] == [first.name]
    members = page.find("select", id="id_split-member").find_all("option")
    assert [o.attrs["value"] for o in members if "selected" in o.attrs] in ([second.name], [])


def test_the_host_page_lists_the_marks_newest_first_with_their_pile(
    corpora, as_viewer, reviewer, second_reviewer
):
    first, second, third = facts()[:3]
    host = Host.objects.get(name="adbuy-desk")
    restatement_mark(host=host, pairs=[(first.name, second.name)], same=True, actor=reviewer, reason="one")
    restatement_mark(
        host=host, pairs=[(first.name, third.name)], same=False, actor=second_reviewer, reason="=two"
    )
    page = parse(as_viewer.get("/hosts/adbuy-desk/").content)
    rows = [
        [td.text for td in tr.find_all("td")][1:]
        for tr in page.find(data_testid="host-marks").find("tbody").find_all("tr")
    ]
    pair = " , ".join(h[:8] for h in sorted((first.name, third.name)))  # the reader spaces the links
    assert rows[0] == ["rob", "entity:desk.adbuy/invoice_capture", pair, "different facts", "=two"]
    assert [r[0] for r in rows] == ["rob", "rita"]
    link = page.find(data_testid="host-marks").find("a")
    assert link.attrs["href"] == ADBUY
