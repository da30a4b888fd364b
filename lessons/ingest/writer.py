"""The row writers of ingest: plain ``executemany`` INSERTs of typed rows (lessons, verdicts, exposures,
corrections), and the one writer of the append-only rows (insert the rows whose identity is new, count
the others unchanged). docs/interchange.md ("Identity and repeats").

Why not ``bulk_create``: building its SQL costs about five times the database's own execute (the
per-object, per-field preparation). Here each column's value is adapted once per row by a function
chosen once per call, and every chunk is one prepared statement run for all its rows (psycopg 3
pipelines an ``executemany`` on PostgreSQL). Column names come from the model, never from input.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Generic, TypeVar

from django.db import connection
from django.db.models import DateTimeField, JSONField, Model
from django.utils import timezone

from lessons.core.text import from_ms
from lessons.ingest.report import ImportReport
from lessons.services.data_version import note_write

T = TypeVar("T")
_NAIVE_EPOCH = datetime(1970, 1, 1)
SECONDS_CACHED = 4096


def _ms_adapter() -> Callable[[int | None], object]:
    """Epoch milliseconds (or None) to what the database stores for a ``DateTimeField``.

    SQLite stores Django's ``str()`` of the naive UTC datetime; computing it from the milliseconds is
    the same text without ``make_naive`` per value. Other databases take the aware datetime.
    """
    if connection.vendor == "sqlite" and connection.timezone == UTC:
        # Rows of a batch come close in time: the text of each whole second is made once per call (up to
        # SECONDS_CACHED of them), the milliseconds appended as Django's str() would (".mmm000", none at 0).
        seconds: dict[int, str] = {}

        def sqlite(ms: int | None) -> object:
            if ms is None:
                return None
            second, milli = divmod(ms, 1000)
            text = seconds.get(second)
            if text is None:
                if len(seconds) >= SECONDS_CACHED:
                    seconds.clear()
                text = seconds[second] = str(_NAIVE_EPOCH + timedelta(seconds=second))
            return f"{text}.{milli:03d}000" if milli else text

        return sqlite
    adapt = connection.ops.adapt_datetimefield_value

    def other(ms: int | None) -> object:
        return None if ms is None else adapt(from_ms(ms))

    return other


@dataclass(frozen=True)
class Table:
    """A model's INSERT: ``fields`` are the columns each row gives, in order (``DateTimeField`` values as
    epoch milliseconds, ``JSONField`` values as Python lists); every other concrete field except the
    primary key gets its default once per statement (``auto_now`` / ``auto_now_add``: now)."""

    model: type[Model]
    fields: tuple[str, ...]

    def insert(
        self, rows: Sequence[Sequence[object]], *, unique: Sequence[str] = (), update: Sequence[str] = ()
    ) -> int:
        """INSERT ``rows`` (each matching ``fields``) with one statement; returns how many were written.

        With ``unique`` (the fields of a unique constraint) and ``update`` (fields), an upsert: a row whose
        ``unique`` values are stored already overwrites that row's ``update`` columns instead
        (``ON CONFLICT ... DO UPDATE``, the same on SQLite and PostgreSQL), one ``executemany``. With
        ``unique`` and no ``update``, such a row is skipped (``ON CONFLICT ... DO NOTHING``) and not counted
        in the result.
        Without, one ``executemany`` on SQLite and one ``COPY ... FROM STDIN`` on PostgreSQL (psycopg 3:
        the same rows, constraints and errors as the INSERTs, several times faster): a row that breaks a
        constraint raises Django's ``IntegrityError`` either way (and the caller's transaction rolls back).
        """
        if not rows:
            return 0
        meta = self.model._meta
        given = [meta.get_field(name) for name in self.fields]
        ms = _ms_adapter()
        adapters: list[Callable | None] = []
        for f in given:
            if isinstance(f, DateTimeField):
                adapters.append(ms)
            elif isinstance(f, JSONField):
                adapters.append(lambda v, f=f: f.get_db_prep_save(v, connection))
            else:
                adapters.append(None)
        now = timezone.now()
        constants = []
        for f in meta.concrete_fields:
            if f.primary_key or f.name in self.fields or f.attname in self.fields:
                continue
            auto = isinstance(f, DateTimeField) and (f.auto_now or f.auto_now_add)
            value = now if auto else f.get_default()
            constants.append((f, f.get_db_prep_save(value, connection)))
        columns = [f.column for f in given] + [f.column for f, _v in constants]
        tail = tuple(v for _f, v in constants)
        adapted = [(i, a) for i, a in enumerate(adapters) if a is not None]
        width = len(adapters)
        params: list[Sequence[object]] = []
        for row in rows:
            if len(row) != width:
                raise ValueError(f"{meta.db_table}: a row of {len(row)} values for {width} fields")
            if adapted:  # only the adapted columns are touched (a generator over every value cost more)
                row = list(row)
                for i, adapt in adapted:
                    row[i] = adapt(row[i])
                row.extend(tail)
            elif tail:
                row = (*row, *tail)
            params.append(row)
        quote = connection.ops.quote_name
        if not unique and connection.vendor == "postgresql":
            return _copy(
                f"COPY {quote(meta.db_table)} ({', '.join(quote(c) for c in columns)}) FROM STDIN", params
            )
        sql = (
            f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(c) for c in columns)}) "
            f"VALUES ({', '.join(['%s'] * len(columns))})"
        )
        if unique:
            target = ", ".join(quote(meta.get_field(name).column) for name in unique)
            assignments = ", ".join(
                f"{quote(meta.get_field(name).column)} = excluded.{quote(meta.get_field(name).column)}"
                for name in update
            )
            sql += f" ON CONFLICT ({target}) " + (f"DO UPDATE SET {assignments}" if update else "DO NOTHING")
        with connection.cursor() as cursor:
            cursor.executemany(sql, params)
            return cursor.rowcount if unique and not update else len(params)


def _copy(sql: str, rows: list[Sequence[object]]) -> int:
    """Run ``COPY ... FROM STDIN`` (PostgreSQL, psycopg 3) with ``rows``, in the current transaction: its
    errors raised as Django's (``wrap_database_errors``), the statement in Django's query log as an
    ``executemany`` would be (``CaptureQueriesContext`` counts it), and counted as a write for the data
    version once it is written (``COPY`` passes no execute wrapper). Returns ``len(rows)``."""
    start = time.monotonic()
    try:
        with connection.cursor() as cursor, connection.wrap_database_errors:
            with cursor.cursor.copy(sql) as copy:
                for row in rows:
                    copy.write_row(row)
        note_write(connection)
    finally:  # logged whether or not it failed, as Django logs a statement
        if connection.queries_logged:
            connection.queries_log.append(
                {"sql": f"{len(rows)} times: {sql}", "time": f"{time.monotonic() - start:.3f}"}
            )
    return len(rows)


@dataclass(frozen=True)
class RowKind(Generic[T]):
    """An append-only row type: its record type in the report (``rtype``), its ``table``, the column
    that with ``key`` identifies a row (``scope``: ``lesson_id`` or ``host_id``), and ``build``, which
    makes the row (a tuple in ``table.fields`` order) of an item."""

    rtype: str
    table: Table
    scope: str
    build: Callable[[T], tuple]


def insert_new_rows(
    *, report: ImportReport, kind: RowKind[T], items: Sequence[tuple[int, str, T]]
) -> list[T]:
    """Insert a row for each ``(scope id, key, item)`` whose identity ``(scope id, key)`` is neither
    stored nor earlier in ``items``; returns those items, in order.

    One query reads the stored identities (``_stored_identities``), then one ``executemany`` writes the
    new rows (the caller keeps ``items`` under the database's parameter limit). Counts ``kind.rtype``
    as ``created`` or ``unchanged`` in ``report``.

    On SQLite the rows go in first, skipping a stored identity (``ON CONFLICT DO NOTHING``): when every
    row was written, as in a first ingest, no identity is read at all; otherwise the identities stored
    before the statement (ids at most the table's ``AUTOINCREMENT`` sequence before it: those ids only
    grow) are read to tell which, and since SQLite's sequence counts a skipped row too, the statement's
    rows are taken out again (the sequence put back) and the new ones written alone: the same ids as
    reading first gives, wherever the chunks begin. The identity lookups before every chunk were a sixth
    of the references pass on a large first ingest.
    """
    if not items:
        return []
    if connection.vendor == "sqlite":
        return _insert_new_sqlite(report, kind, items)
    existing = _stored_identities(kind, {(s, k) for s, k, _i in items})
    new = []
    for scope_id, key, item in items:
        if (scope_id, key) in existing:
            report.count(kind.rtype, "unchanged")
            continue
        existing.add((scope_id, key))
        new.append(item)
    kind.table.insert([kind.build(item) for item in new])
    report.count(kind.rtype, "created", len(new))
    return new


def _insert_new_sqlite(
    report: ImportReport, kind: RowKind[T], items: Sequence[tuple[int, str, T]]
) -> list[T]:
    """``insert_new_rows`` on SQLite: insert first, read the identities only when some row was skipped."""
    seen: set[tuple[int, str]] = set()
    unique: list[tuple[int, str, T]] = []
    for scope_id, key, item in items:
        if (scope_id, key) in seen:
            report.count(kind.rtype, "unchanged")
            continue
        seen.add((scope_id, key))
        unique.append((scope_id, key, item))
    meta = kind.table.model._meta
    quote = connection.ops.quote_name
    table, pk = quote(meta.db_table), quote(meta.pk.column)
    with connection.cursor() as cursor:
        # The largest id given so far (rows deleted since included): every stored row's id is at most it.
        cursor.execute(
            "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = %s), 0)", [meta.db_table]
        )
        before = cursor.fetchone()[0]
    written = kind.table.insert([kind.build(item) for _s, _k, item in unique], unique=(kind.scope, "key"))
    if written == len(unique):
        new = [item for _s, _k, item in unique]
    else:
        stored = _stored_identities(kind, {(s, k) for s, k, _i in unique}, before)
        new = [item for scope_id, key, item in unique if (scope_id, key) not in stored]
        # The skipped rows used up ids: take this statement's rows out (nothing refers to them yet), put
        # the sequence back and write the new rows alone, numbered as if the stored ones had been read first.
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {table} WHERE {pk} > %s", [before])
            cursor.execute("UPDATE sqlite_sequence SET seq = %s WHERE name = %s", [before, meta.db_table])
        kind.table.insert([kind.build(item) for item in new])
    if len(unique) > len(new):
        report.count(kind.rtype, "unchanged", len(unique) - len(new))
    report.count(kind.rtype, "created", len(new))
    return new


def _stored_identities(
    kind: RowKind, pairs: set[tuple[int, str]], up_to: int | None = None
) -> set[tuple[int, str]]:
    """Which of ``pairs`` (``(scope id, key)``) are stored (with ``up_to``: in rows whose id is at most that),
    with one plain SELECT (a queryset's ``__in`` lookups prepare every value one by one, which costs more
    than the query here).

    On PostgreSQL the pairs are joined as arrays (``unnest``) to the table, so that each is one look-up in
    the unique index of (scope, key). Asked as ``scope IN (...) AND key IN (...)``, a table that was never
    analyzed (any table a large first ingest fills, inside its transaction) was read by its scope's index
    with the keys as a filter: every row of the host for each chunk, the ingest quadratic in its rows
    (docs/benchmarks.md, "Session of 2026-12-04, fifth: ingest"). SQLite searches the unique index for
    the IN lists as they are.
    """
    if not pairs:
        return set()
    meta = kind.table.model._meta
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    scope = quote(meta.get_field(kind.scope).column)
    key = quote(meta.get_field("key").column)
    scopes, keys = zip(*sorted(pairs), strict=True)
    if connection.vendor == "postgresql":
        sql = (
            f"SELECT t.{scope}, t.{key} FROM {table} t "
            f"JOIN unnest(%s::bigint[], %s::text[]) AS asked(scope, key) "
            f"ON t.{scope} = asked.scope AND t.{key} = asked.key"
        )
        params: list[object] = [list(scopes), list(keys)]
    else:
        distinct_scopes, distinct_keys = sorted(set(scopes)), sorted(set(keys))
        sql = (
            f"SELECT t.{scope}, t.{key} FROM {table} t "
            f"WHERE t.{scope} IN ({', '.join(['%s'] * len(distinct_scopes))}) "
            f"AND t.{key} IN ({', '.join(['%s'] * len(distinct_keys))})"
        )
        params = [*distinct_scopes, *distinct_keys]
    if up_to is not None:
        sql += f" AND t.{quote(meta.pk.column)} <= %s"
        params.append(up_to)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {(row[0], row[1]) for row in cursor.fetchall()} & pairs


@contextlib.contextmanager
def indexes_built_after(models: Sequence[type[Model]], *, rows: int, minimum: int) -> Iterator[None]:
    """On SQLite, within one write transaction: the non-unique indexes of each of ``models``' tables that
    the block's ``rows`` new rows (an upper bound) would at least double are dropped for the block and
    made again after it, from their own ``CREATE INDEX`` text; nothing when ``rows`` is under ``minimum``.

    Why (issue 10, Build 4): a new row goes into every index of its table at a place that moves with
    each row (sessions, lesson keys), and SQLite's sort of the whole table once is cheaper than that
    when the table at least doubles: at 1,000,000 lines, 950,000 exposures and corrections went in with
    a fifth less CPU, their two indexes made again in 1.3 s. The unique indexes stay: they find a row
    already stored (``ON CONFLICT``).

    The caller's part: the block runs in one transaction that is never committed part-way and that rolls
    back when the block raises (then the indexes are not made here: the rollback restores them, as it
    does everything else), and nothing in the block reads those tables by the dropped indexes. Other
    connections see the indexes throughout (SQLite: schema changes are part of the transaction). Made
    again with the connection's page cache as it is after the block: the sort keeps to that memory.
    Elsewhere than SQLite, nothing (PostgreSQL would lock the table for the whole transaction).
    """
    if connection.vendor != "sqlite" or rows < minimum:
        yield
        return
    dropped: list[tuple[str, str]] = []
    with connection.cursor() as cursor:
        for model in models:
            table = model._meta.db_table
            cursor.execute("SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = %s), 0)", [table])
            if rows < cursor.fetchone()[0]:  # ids only grow: the table holds at most that many rows
                continue
            cursor.execute(
                "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = %s "
                "AND sql IS NOT NULL AND sql NOT LIKE 'CREATE UNIQUE%%' ORDER BY name",
                [table],
            )
            dropped += cursor.fetchall()
        for name, _sql in dropped:
            cursor.execute(f"DROP INDEX {connection.ops.quote_name(name)}")
    yield
    with connection.cursor() as cursor:
        for _name, sql in dropped:
            cursor.execute(sql)
