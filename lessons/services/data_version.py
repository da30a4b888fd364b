"""The data versions: numbers that go up after every committed write, for conditional reads and kept page
parts. docs: docs/api.md ("Conditional reads"), docs/production.md ("Cache").

The global version counts every write. Every statement that writes (INSERT, UPDATE, DELETE, REPLACE,
TRUNCATE) through a Django connection is seen by an execute wrapper installed on each new connection
(``install``), so no writer can forget it: ingest, sync, imports, decisions, budgets, claims, marks,
recounts, outcomes, background tasks and any later code. Inside a transaction the version is raised once,
right after the transaction commits (a rolled-back transaction raises nothing; the row is not held locked
for the length of a long ingest); outside one, right after the statement. Writes to the sign-in tables
(sessions, django-axes) do not count: no conditional answer shows them. PostgreSQL's ``COPY`` bypasses
the wrapper: its caller says so (``note_write``).

Host versions narrow that for the pages of one host. A write is narrowed only where its code says which
hosts it changes (``for_host``, or ``global_only`` for rows no host's page shows); every other counted
write is *unscoped*. A raise whose writes were all narrowed adds one to the global ``value`` and to
``scoped`` in the same statement, then sets each named host's row to the new global value (never lower:
a host's version only goes up); a raise with any unscoped write adds to ``value`` alone. So
``value - scoped``, the unscoped count, moves with every write that may have changed any host's page,
even one from code that knows nothing of hosts, and a host's page reads ``(epoch, unscoped count, that
host's value)`` (``host_current``): a write on another host changes none of the three.

A reader takes a version *before* it reads anything else (``current``, ``host_current``): an answer built
then is at least as new as its version, so a version never labels an answer older than itself. A process
that dies between a commit and the raise (or between the raise's two statements) leaves the versions
behind until the next write (of that host, for a host's version).
"""

from __future__ import annotations

import logging
import re
import secrets
from collections.abc import Callable, Collection, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from django.db import DatabaseError, connections
from django.db.backends.base.base import BaseDatabaseWrapper

log = logging.getLogger(__name__)
TABLE = "lessons_dataversion"
HOST_TABLE = "lessons_hostversion"
# Statements that write, and the table they write: INSERT [OR x] INTO t, UPDATE t, DELETE FROM t, ...
_WRITE = re.compile(
    r"""^\s*(?:INSERT\s+(?:OR\s+\w+\s+)?INTO|REPLACE\s+INTO|UPDATE|DELETE\s+FROM|TRUNCATE(?:\s+TABLE)?)
        \s+(?:ONLY\s+)?["`]?(\w+)""",
    re.IGNORECASE | re.VERBOSE,
)
# Tables whose writes no conditional answer shows (and the version's own row).
# The outcome rules' own derived state (session ends, counted charges, marks) shows on no page: the outcomes
# it gives (review_decisionoutcome) do, and are counted.
IGNORED = re.compile(
    r"^(?:lessons_dataversion|lessons_hostversion|django_session|axes_\w+|lessons_sessionend(?:skept)?"
    r"|review_outcome(?:key|mark))$",
    re.IGNORECASE,
)
_table_ready: dict[str, bool] = {}
_quiet: ContextVar[bool] = ContextVar("data_version_quiet", default=False)


class HostScope:
    """The hosts whose pages the writes of a ``for_host`` block may change: ``names`` (a set of host names,
    read when the raise happens, so a writer that meets its hosts as it goes adds them with ``add``, or
    names a collection it fills: ``for_hosts_in``). ``global_only``: the block's writes change no host's
    page at all (``global_only``)."""

    def __init__(
        self, names: Iterable[str] = (), *, source: Collection[str] = (), global_only: bool = False
    ) -> None:
        self._names: set[str] = set(names)
        self._source = source
        self.global_only = global_only

    @property
    def names(self) -> set[str]:
        """The host names now: those given or added, and those in the followed collection."""
        return self._names | set(self._source)

    def add(self, name: str) -> None:
        """Count the block's writes for host ``name`` too."""
        self._names.add(name)


_scopes: ContextVar[tuple[HostScope, ...]] = ContextVar("data_version_scopes", default=())


@contextmanager
def for_host(*names: str) -> Iterator[HostScope]:
    """Counted writes inside this block change only the pages of the hosts named (``names``, and any
    added to the yielded ``HostScope`` before the transaction commits) and the pages of every host (the
    global version): their raise leaves every other host's version as it was. Blocks nest; a write counts
    for the hosts of every enclosing block. A block that names no host by the time of the raise counts
    as unscoped (every host's pages). Use it only around writes of rows that no other host's page shows.
    docs/production.md, "Cache"."""
    with _inside(HostScope(names)) as scope:
        yield scope


@contextmanager
def for_hosts_in(names: Collection[str]) -> Iterator[HostScope]:
    """``for_host`` for a writer that meets its hosts as it writes: the block's writes count for the names
    ``names`` (a dict or set the writer fills before its transaction commits) holds at each raise."""
    with _inside(HostScope(source=names)) as scope:
        yield scope


@contextmanager
def global_only() -> Iterator[None]:
    """Counted writes inside this block raise the global version only, no host's: for rows that no page of
    one host shows (a job's progress). docs/production.md, "Cache"."""
    with _inside(HostScope(global_only=True)):
        yield


@contextmanager
def _inside(scope: HostScope) -> Iterator[HostScope]:
    """``scope`` added to the enclosing blocks' for the length of the block."""
    token = _scopes.set((*_scopes.get(), scope))
    try:
        yield scope
    finally:
        _scopes.reset(token)


def _hosts(scopes: Iterable[HostScope], unscoped: bool) -> frozenset[str] | None:
    """The host names a raise for writes made under ``scopes`` narrows to, or ``None`` for unscoped."""
    names: set[str] = set()
    for scope in scopes:
        if scope.global_only:
            continue
        if not scope.names:
            return None
        names |= scope.names
    return None if unscoped else frozenset(names)


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
    """The global data version as ``"<epoch>.<value>"`` (``"0"`` before the first counted write). One
    query."""
    with connections[using].cursor() as cursor:
        cursor.execute(f"SELECT epoch, value FROM {TABLE} WHERE id = 1")  # noqa: S608 (a constant)
        row = cursor.fetchone()
    return f"{row[0]}.{row[1]}" if row else "0"


def _host_version(rows: list[tuple]) -> str:
    """``"<epoch>.u<unscoped count>[.<host>:<value>]..."`` of the rows ``(epoch, unscoped, name, value)``
    of a host query (hosts by name; a host without a row this epoch is left out), ``"0"`` for none."""
    if not rows:
        return "0"
    epoch, unscoped = rows[0][0], rows[0][1]
    hosts = sorted((name, value) for _e, _u, name, value in rows if name is not None)
    return f"{epoch}.u{unscoped}" + "".join(f".{name}:{value}" for name, value in hosts)


def host_current(names: Iterable[str], using: str = "default") -> str:
    """The version of a page that shows only the data of the hosts ``names``: the epoch, the unscoped
    count and each named host's value, as ``"<epoch>.u<unscoped>.<host>:<value>..."`` (hosts by name; a
    host with no row of this epoch yet is left out: every write it had was unscoped or of another epoch,
    and its first narrowed write adds it). ``"0"`` before the first counted write. One query.
    docs/production.md, "Cache"."""
    wanted = sorted(set(names))
    marks = ", ".join(["%s"] * len(wanted)) or "NULL"
    sql = (
        f"SELECT d.epoch, d.value - d.scoped, h.name, h.value FROM {TABLE} d "  # noqa: S608 (constants)
        f"LEFT JOIN {HOST_TABLE} h ON h.epoch = d.epoch AND h.name IN ({marks}) WHERE d.id = 1"
    )
    with connections[using].cursor() as cursor:
        cursor.execute(sql, wanted)
        return _host_version(cursor.fetchall())


def lesson_current(host: str, lesson_hash: str, using: str = "default") -> str:
    """``host_current`` of the lesson page of ``(host, lesson_hash)``: host ``host`` and every host that
    holds a lesson with the same text (the page shows them, with their counts). The hosts are found in the
    same query, so a host that gains or loses the text changes the version with its own write. One
    query. docs/production.md, "Cache"."""
    sql = (
        f"SELECT d.epoch, d.value - d.scoped, h.name, h.value FROM {TABLE} d "  # noqa: S608 (constants)
        f"LEFT JOIN {HOST_TABLE} h ON h.epoch = d.epoch AND (h.name = %s OR h.name IN ("
        "SELECT oh.name FROM lessons_lesson o JOIN lessons_host oh ON oh.id = o.host_id "
        "WHERE o.text_hash IN (SELECT l.text_hash FROM lessons_lesson l "
        "JOIN lessons_host lh ON lh.id = l.host_id WHERE lh.name = %s AND l.hash = %s))) "
        "WHERE d.id = 1"
    )
    with connections[using].cursor() as cursor:
        cursor.execute(sql, [host, host, lesson_hash])
        return _host_version(cursor.fetchall())


def _raise(connection: BaseDatabaseWrapper, hosts: frozenset[str] | None = None) -> None:
    """Add one to the global version, making its row (with a new epoch) when a wipe removed it; with
    ``hosts`` (the writes were all narrowed: ``for_host``), add one to ``scoped`` too and set each host's
    row to the new value (never lower within an epoch). ``connection`` is the one that wrote (not always
    one of ``connections``: the jobs' progress has its own)."""
    if not _ready(connection):
        return
    scoped = 0 if hosts is None else 1
    with connection.cursor() as cursor:
        bump = f"UPDATE {TABLE} SET value = value + 1, scoped = scoped + %s WHERE id = 1"  # noqa: S608
        cursor.execute(bump, [scoped])
        if cursor.rowcount == 0:
            cursor.execute(
                f"INSERT INTO {TABLE} (id, epoch, value, scoped) VALUES (1, %s, 1, %s) "  # noqa: S608
                "ON CONFLICT (id) DO NOTHING",
                [secrets.token_hex(8), scoped],
            )
            if cursor.rowcount == 0:  # another process made the row meanwhile
                cursor.execute(bump, [scoped])
        if hosts:
            # the global value read in the same statement: at least this raise's, so higher than any value
            # a reader could have seen before it
            cursor.executemany(
                f"INSERT INTO {HOST_TABLE} (name, epoch, value) "  # noqa: S608 (constants)
                f"SELECT %s, epoch, value FROM {TABLE} WHERE id = 1 "
                f"ON CONFLICT (name) DO UPDATE SET value = CASE WHEN {HOST_TABLE}.epoch <> excluded.epoch "
                f"OR {HOST_TABLE}.value < excluded.value THEN excluded.value ELSE {HOST_TABLE}.value END, "
                "epoch = excluded.epoch",
                [[name] for name in sorted(hosts)],
            )


def _ready(connection: BaseDatabaseWrapper) -> bool:
    """Whether the versions' tables exist (not yet while the migrations that make them run; the host
    table comes with the ``scoped`` column, lessons/migrations/0018_host_versions.py)."""
    if not _table_ready.get(connection.alias):
        with connection.cursor() as cursor:
            _table_ready[connection.alias] = HOST_TABLE in connection.introspection.table_names(cursor)
    return _table_ready[connection.alias]


class _AfterCommit:
    """The callback that raises the versions once a transaction commits; one per transaction (the
    connection's pending callbacks are looked through for it). It gathers the scopes of the transaction's
    writes (``note``), whose host names are read when it runs."""

    def __init__(self, connection: BaseDatabaseWrapper) -> None:
        self.connection = connection
        self.scopes: list[HostScope] = []
        self.unscoped = False

    def note(self, scopes: tuple[HostScope, ...]) -> None:
        """One more counted write, made under ``scopes`` (none: unscoped)."""
        if not scopes:
            self.unscoped = True
        for scope in scopes:
            if not any(scope is kept for kept in self.scopes):
                self.scopes.append(scope)

    def __call__(self) -> None:
        _raise_or_log(self.connection, _hosts(self.scopes, self.unscoped))


def _raise_or_log(connection: BaseDatabaseWrapper, hosts: frozenset[str] | None = None) -> None:
    """``_raise`` after a write that already committed: its failure (a lock wait, the database gone) must
    not turn that write into an error; it is logged, and the version lags until the next write."""
    try:
        _raise(connection, hosts)
    except DatabaseError:
        log.error("the data version was not raised after a committed write", exc_info=True)


def note_write(connection: BaseDatabaseWrapper) -> None:
    """Count a write made on ``connection`` outside its execute wrappers (PostgreSQL ``COPY``), for the
    hosts of the enclosing ``for_host`` blocks (none: unscoped): raised after the transaction commits, or
    now outside one."""
    scopes = _scopes.get()
    if not connection.in_atomic_block:
        _raise_or_log(connection, _hosts(scopes, not scopes))
        return
    for _sids, callback, _robust in connection.run_on_commit:
        if isinstance(callback, _AfterCommit):
            callback.note(scopes)
            return
    pending = _AfterCommit(connection)
    pending.note(scopes)
    connection.on_commit(pending)


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
