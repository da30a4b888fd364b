"""Shared fixtures of the browser tests: headless Debian chromium through Playwright's sync API.

Every browser test is ``pytest.mark.browser`` and ``django_db(transaction=True)`` and drives pytest-django's
``live_server``. Skipped when /usr/bin/chromium is missing, unless ``CI=true`` (then it fails: CI must run
it). Never ``playwright install``: the Debian package is the browser.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in this thread; Django's ORM refuses to run in a thread with
# a running loop unless told it is safe (the test's own queries happen between browser steps).
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"  # gitignored


@pytest.fixture
def browser():
    """A launched headless chromium (Playwright ``Browser``), closed after the test."""
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{CHROMIUM} is missing on CI: install Debian's chromium package")
        pytest.skip(f"{CHROMIUM} is missing")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def sign_in(browser, live_server):
    """``sign_in(username, password, width=1280, height=800)``: a new page signed in through the login form,
    left on the queue."""

    def open_page(username: str, password: str, *, width: int = 1280, height: int = 800):
        page = browser.new_page(viewport={"width": width, "height": height})
        page.set_default_timeout(15_000)
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", username)
        page.fill("input[name=password]", password)
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        return page

    return open_page


@pytest.fixture
def artifacts() -> Path:
    """The folder screenshots go to (``artifacts/`` at the project root, gitignored)."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
