"""The README's pile after its consolidation rec-adbuy-consolidate-1 is approved (facts method 18): the
one live rule is the consolidation, the fact of everything it consolidated, never an umbrella over "0
facts"; nothing is left to resolve. docs/piles-and-recurrence.md, "Retire and restore"."""

from __future__ import annotations

from lessons.models import Draft, Host, Lesson
from lessons.selectors.facts import pile_facts_stored
from review.piles.facts import facts_line
from review.services.consolidation import draft_approve
from tests.fixtures.drafts import ADBUY, CONSOLIDATE, NS, SUBJECT
from tests.html import parse

PILE = "/pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture"


def test_the_approved_consolidation_is_the_fact_of_the_rules_it_consolidated(adbuy, reviewer, signed_in):
    draft_approve(
        draft=Draft.objects.get(ext_id=CONSOLIDATE),
        actor=reviewer,
        reason="Ten rules say one thing; keep one.",
        confirm_dropped_anchors=True,
    )
    created = Lesson.objects.get(host__name=ADBUY, namespace=NS, subject=SUBJECT, status="live")
    assert created.kind == "consolidation"
    facts = pile_facts_stored(host=Host.objects.get(name=ADBUY), namespace=NS, subject=SUBJECT)
    assert [(f.members, f.keep, f.umbrella, f.covers) for f in facts] == [
        ((created.hash,), created.hash, False, ())
    ]
    assert facts[0].label == "Gross Amount, Advertiser, Contract Number, Client, ISO"
    page = parse(signed_in(reviewer).get(PILE).content)
    assert page.find(data_testid="facts-line").text == facts_line(rules=1, facts=1, umbrellas=0)
    assert page.find(data_testid="facts-line").text == "1 rule, 1 fact, 0 rules cover several"
    rows = [
        (r.attrs["data-row"], r.attrs["data-group"]) for r in page.find_all("tr") if "data-row" in r.attrs
    ]
    assert rows == [(created.hash, created.hash)]
    head = page.find("tr", data_fact_head="")
    assert head.attrs["data-group"] == created.hash
    assert "umbrella" not in head.text
    assert "Gross Amount, Advertiser, Contract Number, Client, ISO" in head.text
    assert page.find("button", data_resolve="") is None
