"""Fixtures of the polish tests: the page tests' entity builder."""

from tests.pages.conftest import entity  # noqa: F401 - re-exported fixture
