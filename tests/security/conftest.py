"""Fixtures of the security tests: the headless chromium of tests/browser (imported, not copied)."""

from tests.browser.conftest import browser  # noqa: F401  (a fixture, found by name)
