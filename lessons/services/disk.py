"""Telling a full disk from other failures (issue 13, fault 12): the operator's to fix, said in one line.

README.md, "Commands" (exit statuses); docs/production.md.
"""

from __future__ import annotations

import errno

from django.db import DatabaseError

# PostgreSQL's disk_full SQLSTATE; SQLite says "database or disk is full" (SQLITE_FULL).
_PG_DISK_FULL = "53100"
_SQLITE_FULL = "disk is full"


def disk_full(exc: BaseException | None) -> bool:
    """Whether ``exc`` (or its cause) says the disk is full: ``ENOSPC``, PostgreSQL's ``53100`` or
    SQLite's "database or disk is full"."""
    while exc is not None:
        if isinstance(exc, OSError) and exc.errno == errno.ENOSPC:
            return True
        if getattr(exc, "sqlstate", None) == _PG_DISK_FULL or (
            isinstance(exc, DatabaseError) and _SQLITE_FULL in str(exc)
        ):
            return True
        exc = exc.__cause__
    return False
