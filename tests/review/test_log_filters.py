"""The console handler's filter: refusals without tracebacks, server errors with theirs (a newcomer
found each 403 printing a full PermissionDenied traceback under make run)."""

from __future__ import annotations

import logging
import sys

import pytest

from review.web.log_filters import RefusalsWithoutTraceback


@pytest.mark.parametrize(
    ("status", "kept"), [(403, False), (404, False), (409, False), (500, True), (None, True)]
)
def test_a_refusal_loses_its_traceback_and_a_server_error_keeps_it(status, kept):
    try:
        raise PermissionError("no")
    except PermissionError:
        record = logging.LogRecord("django.request", logging.WARNING, __file__, 1, "Forbidden: /x/", (), None)
        record.exc_info = sys.exc_info()
    if status is not None:
        record.status_code = status
    assert RefusalsWithoutTraceback().filter(record) is True
    assert (record.exc_info is not None) == kept
    assert record.getMessage() == "Forbidden: /x/"


def test_the_console_handler_carries_the_filter(settings):
    handler = settings.LOGGING["handlers"]["console"]
    assert handler["filters"] == ["refusals"]
    assert settings.LOGGING["filters"]["refusals"]["()"] == "review.web.log_filters.RefusalsWithoutTraceback"
    console = next(h for h in logging.getLogger().handlers if isinstance(h, logging.StreamHandler))
    assert any(isinstance(f, RefusalsWithoutTraceback) for f in console.filters)
