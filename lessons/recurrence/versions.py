"""Lesson versions by recurrence key, and which version is current. docs/piles-and-recurrence.md,
"Recurrence".

Shared by the recurrence service (which stores counts on the current version) and the recurrence
selectors (which read them back), so both agree on what "current" means.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from datetime import datetime
from typing import NamedTuple

from django.db import connection
from django.db.models import BigIntegerField, Func, QuerySet

from lessons.core.recurrence import _KEY_SEPARATOR, LessonKey, LessonVersion, current_version, lesson_key
from lessons.core.text import from_ms
from lessons.models import Lesson, ShownText

KEY_CHUNK = 500  # keys per lookup query: well under SQLite's 999 parameters
_HASH_PREFIX = "hash:"
_ID_PREFIX = "id:"


class EpochMs(Func):
    """A ``DateTimeField``'s value as integer milliseconds since the Unix epoch (UTC, floor, as
    ``lessons.core.text.to_ms``), computed by the database: reading many rows this way skips Django's
    Python datetime converter per row. NULL stays NULL.

    SQLite stores Django's naive UTC text (``YYYY-MM-DD HH:MM:SS[.ffffff]``): whole seconds from
    ``strftime('%s')`` plus the first three digits of the fraction (none: 0). PostgreSQL: ``EXTRACT(EPOCH)``
    is an exact numeric there (15), floored after scaling.
    """

    output_field = BigIntegerField()
    template = "CAST(FLOOR(EXTRACT(EPOCH FROM %(expressions)s) * 1000) AS BIGINT)"

    def as_sqlite(self, compiler, connection, **extra_context):
        # '%%%%s': Func's template formatting leaves '%%s', the SQLite backend's placeholder pass '%s'.
        template = (
            "(CAST(strftime('%%%%s', %(expressions)s) AS INTEGER) * 1000"
            " + CAST(substr(%(expressions)s, 21, 3) AS INTEGER))"
        )
        return self.as_sql(compiler, connection, template=template, **extra_context)


def rows_where_any_in(base: QuerySet, lists: Sequence[tuple[str, Sequence[object]]]) -> list[tuple]:
    """The rows of ``base`` (an unordered ``values_list`` of plain columns: no converters are applied)
    where any of ``lists``' fields is one of its values: ``base``'s own SQL with ``AND (f1 IN (...) OR
    ...)`` appended. The IN lists are written as placeholders directly; a queryset's ``__in`` lookups
    prepare every value one by one, which costs more than the query here. Empty lists are left out
    (all empty: no query, no rows). The caller keeps the values under the database's parameter limit.
    """
    meta = base.model._meta
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    conditions, params = [], []
    for name, values in lists:
        if values:
            conditions.append(
                f"{table}.{quote(meta.get_field(name).column)} IN ({', '.join(['%s'] * len(values))})"
            )
            params.extend(values)
    if not conditions:
        return []
    sql, base_params = base.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(f"{sql} AND ({' OR '.join(conditions)})", [*base_params, *params])
        return cursor.fetchall()


def plain_rows(base: QuerySet) -> list[tuple]:
    """The rows of ``base`` (a ``values_list`` of plain columns and expressions the database computes:
    no converters are applied) as the database cursor gives them: for reads of tens of thousands of rows,
    where the queryset's own iteration costs more than the query."""
    sql, params = base.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


_FIELDS = ("id", "hash", "store", "lesson_id", "text", "text_hash", "status", EpochMs("created_at"))


class Version(NamedTuple):
    """One stored lesson version, as recurrence needs it; ``key`` is its recurrence key, ``created_at_ms``
    its creation time in epoch milliseconds (UTC), ``status`` the lesson's (``live`` is ``status ==
    "live"``; the lesson page lists the versions with their status)."""

    id: int
    hash: str
    key: LessonKey
    text: str
    text_hash: str
    live: bool
    created_at_ms: int
    status: str = Lesson.Status.LIVE

    @property
    def created_at(self) -> datetime:
        """``created_at_ms`` as an aware UTC datetime (for the lesson page's versions table)."""
        return from_ms(self.created_at_ms)

    def as_core(self, *, is_current: bool) -> LessonVersion:
        return LessonVersion(
            key=self.key, hash=self.hash, text=self.text, text_hash=self.text_hash, is_current=is_current
        )


def key_of(lesson: Lesson) -> LessonKey:
    """A lesson row's recurrence key: ``(store, lesson_id)`` when it has a ``lesson_id``, else its hash."""
    return lesson_key(hash=lesson.hash, store=lesson.store, lesson_id=lesson.lesson_id)


def _version(row: tuple) -> Version:
    pk, digest, store, lid, text, text_hash, status, created_at_ms = row
    return Version(
        id=pk,
        hash=digest,
        key=lesson_key(hash=digest, store=store, lesson_id=lid),
        text=text,
        text_hash=text_hash,
        live=status == Lesson.Status.LIVE,
        created_at_ms=created_at_ms,
        status=status,
    )


def host_versions(*, host_id: int) -> Iterator[Version]:
    """Every lesson version of a host (one query, streamed)."""
    rows = Lesson.objects.filter(host_id=host_id).order_by("id").values_list(*_FIELDS)
    for row in rows.iterator(chunk_size=2000):
        yield _version(row)


def key_versions(*, host_id: int, keys: Iterable[LessonKey]) -> list[Version]:
    """The versions of ``keys`` on one host, in id order. One query per ``KEY_CHUNK`` keys.

    A ``hash:`` key names one lesson without a ``lesson_id``; an ``id:`` key every version of one
    ``(store, lesson_id)``. Rows found by ``lesson_id`` in another store are dropped by their key.
    """
    wanted = set(keys)
    ordered = sorted(wanted)
    found: dict[int, Version] = {}
    for start in range(0, len(ordered), KEY_CHUNK):
        rows = _key_rows(host_id, ordered[start : start + KEY_CHUNK])
        if rows is None:
            continue
        for row in rows:
            version = _version(row)
            if version.key in wanted:
                found[version.id] = version
    return [found[pk] for pk in sorted(found)]


def _key_rows(host_id: int, chunk: list[LessonKey]) -> QuerySet | None:
    """The rows of one chunk of keys, as ``_FIELDS`` tuples, in one statement (``None``: no key to look up).

    Each kind of key is its own branch of a ``UNION ALL``, so each is an index search: by ``(host, hash)``
    and by ``(host, store, lesson_id)`` (an empty store is stored as ``""`` or NULL). One ``OR`` of them
    made SQLite scan every lesson of the host (issue 10: 74–110 ms of the lesson page at 1M lessons).
    """
    hashes = [k[len(_HASH_PREFIX) :] for k in chunk if k.startswith(_HASH_PREFIX)]
    pairs = [k[len(_ID_PREFIX) :].split(_KEY_SEPARATOR, 1) for k in chunk if k.startswith(_ID_PREFIX)]
    stores = sorted({store for store, *lid in pairs if lid})
    ids = sorted({lid[0] for _store, *lid in pairs if lid})
    host = Lesson.objects.filter(host_id=host_id).values_list(*_FIELDS).order_by()
    branches = [host.filter(hash__in=hashes)] if hashes else []
    if ids:
        branches.append(host.filter(store__in=stores, lesson_id__in=ids))
        if "" in stores:
            branches.append(host.filter(store__isnull=True, lesson_id__in=ids))
    if not branches:
        return None
    first, *rest = branches
    return first.union(*rest, all=True) if rest else first


def current_versions(versions: Iterable[Version]) -> dict[LessonKey, Version]:
    """The current version of every key (``lessons.core.recurrence.current_version``), "newest" ordering
    by ``(created_at, hash)`` as ingest resolves a ``store`` + ``lesson_id`` reference.
    docs/piles-and-recurrence.md, "Recurrence".
    """
    by_key: dict[LessonKey, list[Version]] = defaultdict(list)
    for version in versions:
        by_key[version.key].append(version)
    return {
        key: current_version(group, live=lambda v: v.live, newest=lambda v: (v.created_at_ms, v.hash))
        for key, group in by_key.items()
    }


def shown_versions(
    *, host_id: int, versions: Iterable[Version], shown: Iterable[tuple[LessonKey, str]]
) -> list[LessonVersion]:
    """The texts sessions were shown that no stored version has (``ShownText``), as non-current versions
    of their keys: a correction matching one counts as ``earlier_version``.

    ``shown``: the ``(lesson key, text_hash)`` pairs of the exposures being attributed. Only pairs whose
    key has a stored version (a key needs a current text) and whose hash none of its versions has are
    looked up: no query at all when every exposure shows a stored version; else one per ``KEY_CHUNK``
    keys. docs/piles-and-recurrence.md, "Attributing one correction", step 2.
    """
    stored: dict[LessonKey, set[str]] = defaultdict(set)
    for version in versions:
        stored[version.key].add(version.text_hash)
    missing = {(key, digest) for key, digest in shown if key in stored and digest not in stored[key]}
    return shown_texts(host_id=host_id, missing=missing)


def shown_texts(*, host_id: int, missing: set[tuple[LessonKey, str]]) -> list[LessonVersion]:
    """``shown_versions`` for the ``(lesson key, text_hash)`` pairs already known to be no stored version
    of a key that has one (``ShownText`` rows, as non-current versions); no query when there is none."""
    keys = sorted({key for key, _digest in missing})
    result = []
    for start in range(0, len(keys), KEY_CHUNK):
        rows = ShownText.objects.filter(host_id=host_id, lesson_key__in=keys[start : start + KEY_CHUNK])
        for key, digest, text in rows.order_by("lesson_key", "text_hash").values_list(
            "lesson_key", "text_hash", "text"
        ):
            if (key, digest) in missing:
                result.append(LessonVersion(key=key, hash="", text=text, text_hash=digest, is_current=False))
    return result
