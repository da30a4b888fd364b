"""Logging filters the settings install (config/settings.py, ``LOGGING``).

docs: docs/production.md ("Logs").
"""

from __future__ import annotations

import logging


class RefusalsWithoutTraceback(logging.Filter):
    """Keeps Django's one line about a refused request ("Forbidden (Permission denied): /hosts/x/budget/")
    and drops its traceback: a 4xx answer is the app working, and a traceback under it reads like a crash
    in the server's output. A 5xx keeps its traceback. Never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        if isinstance(status, int) and status < 500:
            record.exc_info = None
            record.exc_text = None
        return True
