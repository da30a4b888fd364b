"""In a browser: the queue's and the log's host boxes offer the names the server finds as one types
(issue 25: no page lists every host), and choosing one filters. Screenshots go to artifacts/."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.fixtures.browser import artifacts, browser, sign_in  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_typing_a_host_fills_the_list_and_filters_the_queue(corpora, viewer, sign_in, live_server, artifacts):  # noqa: F811
    page = sign_in("vera", "vera-pass")
    box = page.locator("input[name=host]")
    box.click()
    box.press_sequentially("adb", delay=30)
    expect(page.locator("#host-names option")).to_have_count(1)  # the focus's full list, then "adb"'s
    assert page.eval_on_selector_all("#host-names option", "os => os.map(o => o.value)") == ["adbuy-desk"]
    box.fill("adbuy-desk")
    box.press("Enter")
    page.wait_for_url(f"{live_server.url}/?**host=adbuy-desk**")
    page.wait_for_selector("table.queue-table tbody tr")
    rows = page.locator("table.queue-table tbody tr")
    assert rows.count() == 1 and "adbuy-desk" in rows.first.inner_text()
    page.screenshot(path=str(artifacts / "host-search-queue.png"), full_page=True)

    page.goto(f"{live_server.url}/decisions/")
    log_box = page.locator("input[name=host]")
    log_box.click()
    log_box.press_sequentially("supp", delay=30)
    expect(page.locator("#host-names option")).to_have_count(1)
    assert page.eval_on_selector_all("#host-names option", "os => os.map(o => o.value)") == ["support-triage"]
