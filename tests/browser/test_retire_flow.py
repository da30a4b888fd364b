"""A reviewer retires a pile member in a real browser: queue → pile → tick → reason → submit (htmx).

Headless Debian chromium through Playwright's sync API against pytest-django's ``live_server``; the
``browser``/``sign_in``/``artifacts`` fixtures (tests/browser/conftest.py) skip when /usr/bin/chromium is
missing, unless ``CI=true`` (then they fail: CI must run it). The retire goes through htmx: the header
count must change in place.
"""

from __future__ import annotations

import importlib

import pytest

# transaction=True: the browser talks to live_server in another thread, so the data must be committed.
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def roles(transactional_db):
    """The viewer/reviewer/admin groups, recreated when an earlier transactional test's flush removed them
    (a flush re-creates content types and permissions, but not the rows of review's data migration).
    """
    from django.apps import apps

    importlib.import_module("review.migrations.0002_roles").create_roles(apps, None)


def test_a_reviewer_retires_one_member_of_the_adbuy_pile(corpora, reviewer, sign_in, artifacts):
    from lessons.models import Lesson
    from review.models import Decision

    first = Lesson.objects.get(host__name="adbuy-desk", hash__startswith="36727f00")
    page = sign_in("rita", "rita-pass")

    page.click("text=entity:desk.adbuy/invoice_capture")
    page.wait_for_url("**/pile/?host=adbuy-desk*")
    assert page.inner_text("[data-testid=pile-count]") == "10 live lessons · budget 8"

    page.check(f"input[name=members][value='{first.hash}']")
    page.fill("textarea[name=reason]", "Restated by the consolidation draft.")
    assert page.inner_text(".counter") == "36 / 500 characters"
    page.select_option("select[name=reason_code]", "restates_another")
    assert page.inner_text("[data-retire-preview]") == "After the retire: 10 \u2192 9 of 8 (still over by 1)"
    page.click("button:has-text('Retire 1 lesson')")

    page.wait_for_selector(".notice-success")
    assert page.inner_text("[data-testid=pile-count]") == "9 live lessons · budget 8"
    assert page.url.endswith("/pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture")
    assert page.locator(f"input[name=members][value='{first.hash}']").count() == 0

    page.screenshot(path=str(artifacts / "retire_flow.png"), full_page=True)

    decision = Decision.objects.get()
    assert (decision.action, decision.lesson_hash, decision.actor, decision.reason, decision.reason_code) == (
        "retire",
        first.hash,
        "rita",
        "Restated by the consolidation draft.",
        "restates_another",
    )
    first.refresh_from_db()
    assert first.status == "retracted"
