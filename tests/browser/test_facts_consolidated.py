"""The pile page after the README's consolidation is approved, in a real browser (facts method 18): the
one live rule, rec-adbuy-consolidate-1's lesson, is the fact of the ten rules it consolidated ("1 rule,
1 fact, 0 rules cover several"; it was "1 rule, 0 facts, 1 rule covers several", an umbrella stating 0
of the pile's facts), and Resolve by facts is not offered, nothing being left to resolve. Screenshot:
artifacts/pile-consolidated.png. docs/piles-and-recurrence.md, "Retire and restore"."""

from __future__ import annotations

import importlib

import pytest

from tests.fixtures.browser import browser, sign_in  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PILE = "pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture"


@pytest.fixture(autouse=True)
def roles(transactional_db):
    from django.apps import apps

    importlib.import_module("review.migrations.0002_roles").create_roles(apps, None)


def test_the_approved_consolidation_is_one_rule_of_one_fact(corpora, reviewer, sign_in, artifacts):  # noqa: F811
    from lessons.models import Draft, Lesson
    from review.piles.facts import facts_line
    from review.services.consolidation import draft_approve

    draft_approve(
        draft=Draft.objects.get(ext_id="rec-adbuy-consolidate-1"),
        actor=reviewer,
        reason="Ten rules say one thing; keep one.",
        confirm_dropped_anchors=True,
    )
    created = Lesson.objects.get(subject="invoice_capture", status="live").hash
    page = sign_in("rita", "rita-pass", width=1280, height=900)
    page.goto(page.url + PILE)
    assert page.inner_text("[data-testid=facts-line]") == facts_line(rules=1, facts=1, umbrellas=0)
    assert page.inner_text("[data-testid=pile-count]") == "1 live lesson · budget 8"
    rows = page.eval_on_selector_all("tr[data-row]", "els => els.map(e => [e.dataset.group, e.dataset.row])")
    assert rows == [[created, created]]
    head = page.inner_text(f"tr[data-fact-head][data-group='{created}']")
    assert "Gross Amount, Advertiser, Contract Number, Client, ISO" in head
    assert "umbrella" not in head
    assert page.locator("[data-resolve]").count() == 0
    page.locator("#facts").scroll_into_view_if_needed()
    page.keyboard.press("f")  # no Resolve by facts to press: no panel, nothing selected
    assert page.locator("[data-testid=resolve]").count() == 0
    assert page.locator("input[name=members]:checked").count() == 0
    page.screenshot(path=str(artifacts / "pile-consolidated.png"), full_page=True)
