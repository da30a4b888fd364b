"""The attack tests reuse the browser fixtures (headless chromium, signed-in pages, artifacts folder)."""

from tests.browser.conftest import artifacts, browser, sign_in  # noqa: F401 (fixtures)
