"""In a browser, 1280 and 390 px wide: the stray keys `a` (select all), `r` (the reason) and Ctrl+Enter
(retire) no longer retire a whole entity. The htmx answer asks for "Yes, retire all N" with the selection
and the reason kept, focus on the message; ticking it retires them all. Axe-clean, no wider than the
window; screenshots go to artifacts/ (retire-all-<width>.png)."""

from __future__ import annotations

import importlib

import pytest

from review.piles.forms import RETIRE_ALL_LABEL, RETIRE_ALL_UNCONFIRMED
from tests.browser.test_facts import focused, problems

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PILE = "pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture"


@pytest.fixture(autouse=True)
def roles(transactional_db):
    from django.apps import apps

    importlib.import_module("review.migrations.0002_roles").create_roles(apps, None)


@pytest.mark.parametrize("width", [1280, 390])
def test_select_all_and_ctrl_enter_ask_before_emptying_the_entity(
    corpora, reviewer, sign_in, artifacts, width
):
    from lessons.models import Lesson
    from review.models import Decision

    page = sign_in("rita", "rita-pass", width=width, height=900)
    page.goto(page.url + PILE)
    page.keyboard.press("a")
    page.keyboard.press("r")
    page.keyboard.type("stray typing")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector("[data-testid=retire-all-error]")
    assert page.inner_text("[data-testid=retire-all-error]") == RETIRE_ALL_UNCONFIRMED.format(n=10)
    assert focused(page, "el => el.classList.contains('form-summary')", True) is True
    box = page.locator("input[name=retire_all]")
    assert box.is_visible() and not box.is_checked()
    assert page.inner_text(".confirm-all label") == RETIRE_ALL_LABEL.format(n=10)
    assert page.eval_on_selector_all("input[name=members]:checked", "els => els.length") == 10
    assert page.input_value("textarea[name=reason]") == "stray typing"
    assert Decision.objects.count() == 0
    assert (
        Lesson.objects.filter(host__name="adbuy-desk", subject="invoice_capture", status="live").count() == 10
    )
    assert problems(page) == []
    box.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / f"retire-all-{width}.png"))

    with page.expect_response(lambda r: "/pile/retire/" in r.url) as answer:
        page.keyboard.press("Control+Enter")  # again without the box: still asked, still nothing written
    assert answer.value.status == 422
    page.wait_for_selector("[data-testid=retire-all-error]")
    assert Decision.objects.count() == 0

    page.check("input[name=retire_all]")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".notice-success")
    assert page.inner_text("[data-testid=pile-count]") == "0 live lessons · budget 8"
    assert Decision.objects.filter(action="retire").count() == 10
    assert problems(page) == []


@pytest.mark.parametrize("width", [1280, 390])
def test_the_lesson_page_asks_before_retiring_the_only_live_lesson(
    corpora, reviewer, sign_in, artifacts, width
):
    from lessons.models import Host, Lesson
    from review.piles.forms import RETIRE_ONLY_UNCONFIRMED
    from review.services.decisions import lessons_retire

    live = list(Lesson.objects.filter(host__name="adbuy-desk", subject="invoice_capture", status="live"))
    last = live.pop()
    lessons_retire(
        host=Host.objects.get(name="adbuy-desk"), hashes=[x.hash for x in live], actor=reviewer, reason="go"
    )
    page = sign_in("rita", "rita-pass", width=width, height=900)
    page.goto(page.url + f"lessons/adbuy-desk/{last.hash}/")
    page.fill("form.retire-one textarea[name=reason]", "the last one")
    page.click("form.retire-one button[type=submit]")
    page.wait_for_selector("[data-testid=retire-all-error]")
    assert page.inner_text("[data-testid=retire-all-error]") == RETIRE_ONLY_UNCONFIRMED
    assert problems(page) == []
    page.locator("input[name=retire_all]").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / f"retire-only-{width}.png"))
    last.refresh_from_db()
    assert last.status == "live"
    page.check("input[name=retire_all]")
    page.click("form.retire-one button[type=submit]")
    page.wait_for_url("**?retired=*")
    last.refresh_from_db()
    assert last.status == "retracted"
