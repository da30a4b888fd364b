"""In a browser: the budget change through its htmx preview, then the decision log filtered with htmx.

Uses the shared chromium fixtures of tests/browser/conftest.py; screenshots go to artifacts/.
"""

from __future__ import annotations

import pytest

from lessons.models import Host
from tests.fixtures.browser import artifacts, browser, sign_in  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_budget_preview_save_and_log_in_a_browser(sign_in, live_server, admin_user, corpora, artifacts):  # noqa: F811
    page = sign_in("ada", "ada-pass")
    page.goto(f"{live_server.url}/hosts/")
    page.click('a[href="/hosts/adbuy-desk/budget/"]')
    page.wait_for_url(f"{live_server.url}/hosts/adbuy-desk/budget/")
    page.fill("input[name=max_active]", "12")
    page.click("button[name=preview]")
    page.wait_for_selector("[data-testid=over-after]")
    assert page.url == f"{live_server.url}/hosts/adbuy-desk/budget/"  # htmx swapped the preview in place
    assert page.inner_text("[data-testid=over-now]") == "1"
    assert page.inner_text("[data-testid=over-after]") == "0"
    assert page.inner_text("[data-testid=disappear]") == "entity:desk.adbuy/invoice_capture"
    page.screenshot(path=str(artifacts / "budget-preview.png"), full_page=True)

    page.fill("textarea[name=reason]", "Invoice capture needs all ten rules for now")
    page.click("button[name=save]")
    page.wait_for_url(f"{live_server.url}/hosts/")
    assert "Budget of adbuy-desk saved: max_active 12, enabled." in page.inner_text(".notices")
    assert Host.objects.get(name="adbuy-desk").max_active == 12

    page.goto(f"{live_server.url}/decisions/")
    page.select_option("select[name=action]", "set_budget")
    page.wait_for_url(f"{live_server.url}/decisions/?**action=set_budget**")
    page.wait_for_selector("tr[data-seq]")
    assert page.locator("tr[data-seq]").count() == 1
    page.click("tr[data-seq] summary")
    page.screenshot(path=str(artifacts / "decision-log.png"), full_page=True)
