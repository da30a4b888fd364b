"""Signed-in clients for the tests of this folder, the ones the page tests define (not copies)."""

from tests.pages.test_pile import as_reviewer, as_viewer  # noqa: F401 (fixtures)
