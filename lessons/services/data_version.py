"""The data version: one number that goes up after every committed write, for conditional reads.

Every statement that writes (INSERT, UPDATE, DELETE, REPLACE, TRUNCATE) through a Django connection is
seen by an execute wrapper installed on each new connection (``install``), so no writer can forget it:
ingest, sync, imports, decisions, budgets, claims, marks, recounts, outcomes, background tasks and any
later code. Inside a transaction the version is raised once, right after the transaction commits (a
rolled-back transaction raises nothing; the row is not held locked for the length of a long ingest);
outside one, right after the statement. Writes to the sign-in tables (sessions, django-axes) do not
count: no conditional answer shows them. PostgreSQL's ``COPY`` bypasses the wrapper: its caller says so
(``note_write``).

A reader takes the version *before* it reads anything else (``current``): an answer built then is at
least as new as its version, so a version never labels an answer older than itself. A process that dies
between a commit and the raise leaves the version one write behind until the next write.
docs: docs/api.md ("Conditional reads").
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.db import DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper

log = logging.getLogger(__name__)
TABLE = "lessons_dataversion"
# Statements that write, and the table they write: INSERT [OR x] INTO t, UPDATE t, DELETE FROM t, ...
_WRITE = re.compile(
    r"""^\s*(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM|TRUNCATE(?:\s+TABLE)?)
        \s+(?:ONLY\s+)?["`]?(\w+)""",
    re.IGNORECASE | re.VERBOSE,
)
# Tables whose writes no conditional answer shows (and the version's own row).
IGNORED = re.compile(r"^(?:lessons_dataversion|django_session|axes_\w+)$", re.IGNORECASE)
_table_ready: dict[str, bool] = {}
_quiet: ContextVar[bool] = ContextVar("data_version_quiet", default=False)


@contextmanager
def uncounted() -> Iterator[None]:
    """Writes inside this block do not raise the version: for bookkeeping no conditional answer shows (an
    API token's last use, written at most once a minute on a read, would otherwise make every poll a
    change)."""
    token = _quiet.set(True)
    try:
        yield
    finally:
        _quiet.reset(token)


def written_table(sql: str) -> str | None:
    """The table ``sql`` writes to (case as written), or ``None`` for a statement that does not write (or
    one the version ignores: ``IGNORED``)."""
    found = _WRITE.match(sql)
    if found is None or IGNORED.match(found.group(1)):
        return None
    return found.group(1)


def current(using: str = "default") -> str:
    """The data version as ``"<epoch>.<value>"`` (``"0"`` before the first counted write). One query."""
    with connections[using].cursor() as cursor:
        cursor.execute(f"SELECT epoch, value FROM {TABLE} WHERE id = 1")  # noqa: S608 (a constant)
        row = cursor.fetchone()
    return f"{row[0]}.{row[1]}" if row else "0"


def _raise(connection: BaseDatabaseWrapper) -> None:
    """Add one to the version, making its row (with a new epoch) when a wipe removed it. ``connection``
    is the one that wrote (not always one of ``connections``: the jobs' progress has its own)."""
    if not _ready(connection):
        return
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {TABLE} SET value = value + 1 WHERE id = 1")  # noqa: S608
        if cursor.rowcount == 0:
            cursor.execute(
                f"INSERT INTO {TABLE} (id, epoch, value) VALUES (1, %s, 1) ON CONFLICT (id) DO NOTHING",  # noqa: S608
                [secrets.token_hex(8)],
            )
            if cursor.rowcount == 0:  # another process made the row meanwhile
                cursor.execute(f"UPDATE {TABLE} SET value = value + 1 WHERE id = 1")  # noqa: S608


def _ready(connection: BaseDatabaseWrapper) -> bool:
    """Whether the version's table exists (not yet while the migrations that make it run)."""
    if not _table_ready.get(connection.alias):
        with connection.cursor() as cursor:
            _table_ready[connection.alias] = TABLE in connection.introspection.table_names(cursor)
    return _table_ready[connection.alias]


class _AfterCommit:
    """The callback that raises the version once a transaction commits; one per transaction (the
    connection's pending callbacks are looked through for it)."""

    def __init__(self, connection: BaseDatabaseWrapper) -> None:
        self.connection = connection

    def __call__(self) -> None:
        _raise_or_log(self.connection)


def _raise_or_log(connection: BaseDatabaseWrapper) -> None:
    """``_raise`` after a write that already committed: its failure (a lock wait, the database gone) must
    not turn that write into an error; it is logged, and the version lags until the next write."""
    try:
        _raise(connection)
    except DatabaseError:
        log.error("the data version was not raised after a committed write", exc_info=True)


def note_write(connection: BaseDatabaseWrapper) -> None:
    """Count a write made on ``connection`` outside its execute wrappers (PostgreSQL ``COPY``): raised after
    the transaction commits, or now outside one."""
    if not connection.in_atomic_block:
        _raise_or_log(connection)
        return
    if any(isinstance(callback, _AfterCommit) for _sids, callback, _robust in connection.run_on_commit):
        return
    connection.on_commit(_AfterCommit(connection))


def _wrapper(connection: BaseDatabaseWrapper) -> Callable[..., Any]:
    def count_writes(execute, sql, params, many, context):
        table = written_table(sql) if isinstance(sql, str) and not _quiet.get() else None
        if table is None:
            return execute(sql, params, many, context)
        if connection.in_atomic_block:
            note_write(connection)
            return execute(sql, params, many, context)
        result = execute(sql, params, many, context)
        note_write(connection)
        return result

    count_writes.data_version = True  # type: ignore[attr-defined]
    return count_writes


def install(sender: object, connection: BaseDatabaseWrapper, **kwargs: object) -> None:
    """The ``connection_created`` receiver: put the write counter on ``connection`` once, innermost (first:
    a ``connection.execute_wrapper`` block open meanwhile pops its own wrapper, the last, on exit)."""
    if not any(getattr(w, "data_version", False) for w in connection.execute_wrappers):
        connection.execute_wrappers.insert(0, _wrapper(connection))
