"""The pile page after a retire, in a real browser (facts method 17): retiring one restatement of Gross
Amount on the README's pile leaves "9 rules, 4 facts" (it was "9 rules, 5 facts", the Advertiser pair
split), every other fact with the same rules; Undo gives back the page from before. The ad-buy corpus's
invoice_capture pile; screenshots go to artifacts/ (pile-retire-before.png, pile-retire-after.png).
docs/piles-and-recurrence.md, "Facts", "Retire and restore"."""

from __future__ import annotations

import importlib

import pytest

from tests.fixtures.browser import browser, sign_in  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PILE = "pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture"
REASON = "Gross Amount is said once by the older rule."


@pytest.fixture(autouse=True)
def roles(transactional_db):
    from django.apps import apps

    importlib.import_module("review.migrations.0002_roles").create_roles(apps, None)


def groups(page) -> dict[str, list[str]]:
    """Each fact shown (its head's data-group) and the first three words of its rows' texts, as shown."""
    from lessons.models import Lesson

    texts = dict(Lesson.objects.filter(subject="invoice_capture").values_list("hash", "text"))
    found: dict[str, list[str]] = {}
    for row in page.eval_on_selector_all(
        "tr[data-row]", "els => els.map(e => [e.dataset.group, e.dataset.row])"
    ):
        group, digest = row
        found.setdefault(" ".join(texts[group].split()[:3]), []).append(" ".join(texts[digest].split()[:3]))
    return found


BEFORE = {
    "Write Gross Amount": ["Write Gross Amount", 'Strip "$" and'],
    "Fill Advertiser with": ["Fill Advertiser with", "Every invoice needs"],
    "Record Flight From": ["Record Flight From", "Both flight dates"],
    "Copy the Contract": ["Copy the Contract", "Record the contract"],
    "From every invoice": ["From every invoice"],
    "Do not skip": ["Do not skip"],
}


def test_a_retire_on_the_pile_page_keeps_the_other_facts(corpora, reviewer, sign_in, artifacts):  # noqa: F811
    from lessons.models import Lesson
    from review.piles.facts import facts_line

    strip = Lesson.objects.get(subject="invoice_capture", text__startswith='Strip "$"').hash
    page = sign_in("rita", "rita-pass", width=1280, height=900)
    page.goto(page.url + PILE)
    assert page.inner_text("[data-testid=facts-line]") == facts_line(rules=10, facts=4, umbrellas=2)
    assert groups(page) == BEFORE
    page.locator("#facts").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / "pile-retire-before.png"), full_page=True)

    page.check(f"input[name=members][value='{strip}']")
    page.fill("textarea[name=reason]", REASON)
    page.click("button:has([data-retire-label])")
    page.wait_for_selector(".notice-success")
    assert page.inner_text("[data-testid=pile-count]") == "9 live lessons · budget 8"
    assert page.inner_text("[data-testid=facts-line]") == facts_line(rules=9, facts=4, umbrellas=2)
    assert groups(page) == BEFORE | {"Write Gross Amount": ["Write Gross Amount"]}
    fill = Lesson.objects.get(subject="invoice_capture", text__startswith="Fill Advertiser").hash
    assert "2 rules state this fact" in page.inner_text(f"tr[data-fact-head][data-group='{fill}']")
    page.screenshot(path=str(artifacts / "pile-retire-after.png"), full_page=True)

    page.click("[data-testid=undo]")
    page.wait_for_selector("text=Restored 1 lesson")
    assert page.inner_text("[data-testid=facts-line]") == facts_line(rules=10, facts=4, umbrellas=2)
    assert groups(page) == BEFORE
