"""In a real browser: "keep one of this group" ticks all but the kept member (JavaScript), then the
group's others are retired with one reason. Screenshot to /tmp/triage-groups.png."""

from __future__ import annotations

import importlib

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

OLD = "be490fe0e69454ef91c8d4de94069048692ead816ea021b93651600ef34c58e5"
NEW = "590b48ce4f04fbc6f6d8c886f5bf751fbdc53b0d02a1c746ca441c7a80bcf0cf"


@pytest.fixture(autouse=True)
def roles(transactional_db):
    from django.apps import apps

    importlib.import_module("review.migrations.0002_roles").create_roles(apps, None)


def test_keep_one_of_a_group_ticks_the_others_and_retires_them(corpora, reviewer, sign_in):  # noqa: F811
    page = sign_in("rita", "rita-pass")
    page.goto(page.url + "pile/?host=warehouse-sql&namespace=analytics&subject=revenue_models")
    page.check(f"input[name=members][value='{NEW}']")  # ticked by hand: keep-one unticks the kept one
    page.click("a.keep-one")
    assert page.url.endswith("subject=revenue_models")  # JavaScript acted; the link was not followed
    checked = page.eval_on_selector_all("input[name=members]:checked", "els => els.map(e => e.value)")
    assert checked == [OLD]
    page.screenshot(path="/tmp/triage-groups.png", full_page=True)
    page.fill("textarea[name=reason]", "Restated by the newer member.")
    assert page.inner_text("[data-selected-count]") == "1 of 8 selected"
    page.click("button:has-text('Retire 1 lesson')")
    page.wait_for_selector(".notice-success")
    assert page.inner_text("[data-testid=pile-count]") == "7 live lessons · budget 5"
    assert page.locator(".group-head").count() == 0
