"""Each session's last activity, kept for the hosts whose decision outcomes are kept (``SessionEnd``).

A retire's outcome counts the host's sessions active after it (docs/decisions.md, "Outcomes"). Counting
them from the exposures and corrections reads all of a host's history after its oldest decision at every
refresh; a ``SessionEnd`` row per session (its greatest ``shown_at`` or ``corrected_at``, epoch ms UTC)
answers it from one index. The rows are kept only for the hosts ``SessionEndsKept`` names (the outcome
refresh builds them whole the first time, ``session_ends_rebuild``) and updated by each recurrence refresh
of changed sessions (``session_ends_update``), in the transaction that wrote the exposures and corrections
and under its host lock, so they are never behind a committed row. Exposures and corrections are never
updated or deleted (docs/interchange.md): a session's last activity only moves with new rows, which make it
a changed session.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from django.db import connection
from django.db.models import Max

from lessons.core.text import from_ms
from lessons.models import Correction, Exposure, SessionEnd, SessionEndsKept
from lessons.recurrence.versions import EpochMs

SESSION_CHUNK = 500  # sessions per statement


def _activity_sql(host_id: int, sessions: list[str] | None, after_ms: int | None = None) -> tuple[str, list]:
    """``SELECT host_id, session, MAX(ms) ... GROUP BY`` over the exposures' and corrections' last times of
    ``host_id`` (of ``sessions`` only, when given; of the activity after ``after_ms`` only, when given):
    one row per session, its last activity (epoch ms)."""
    parts, params = [], []
    for model, field in ((Exposure, "shown_at"), (Correction, "corrected_at")):
        rows = model.objects.filter(host_id=host_id).order_by()
        if sessions is not None:
            rows = rows.filter(session__in=sessions)
        if after_ms is not None:
            rows = rows.filter(**{f"{field}__gt": from_ms(after_ms)})
        # each table's last time a session, converted to ms once a session (not once a row)
        last = rows.values("host_id", "session").annotate(ms=EpochMs(Max(field)))
        sql, part = last.values_list("host_id", "session", "ms").query.sql_with_params()
        parts.append(sql)
        params.extend(part)
    q = connection.ops.quote_name
    union = " UNION ALL ".join(parts)  # its columns are named as its first part's: host_id, session, ms
    host, session, ms = (f"a.{q(name)}" for name in ("host_id", "session", "ms"))
    # WHERE: SQLite reads an INSERT ... SELECT's ON CONFLICT as the SELECT's without one
    sql = f"SELECT {host}, {session}, MAX({ms}) FROM ({union}) a WHERE 1 = 1 GROUP BY {host}, {session}"
    return sql, params


def _insert(select_sql: str, params: list, *, upsert: bool) -> None:
    table, q = SessionEnd._meta.db_table, connection.ops.quote_name
    sql = f"INSERT INTO {q(table)} ({q('host_id')}, {q('session')}, {q('last_ms')}) {select_sql}"
    if upsert:
        last = q("last_ms")
        sql += f" ON CONFLICT ({q('host_id')}, {q('session')}) DO UPDATE SET {last} = excluded.{last}"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def session_ends_update(host_id: int, sessions: Iterable[str]) -> None:
    """Set the last activity of ``sessions`` (names) of host ``host_id`` from its stored exposures and
    corrections, when the host's session ends are kept (one query when they are not). Called by the
    recurrence refresh for the sessions a transaction changed, under the host's lock."""
    names = sorted(set(sessions))
    if not names or not SessionEndsKept.objects.filter(host_id=host_id).exists():
        return
    for start in range(0, len(names), SESSION_CHUNK):
        _insert(*_activity_sql(host_id, names[start : start + SESSION_CHUNK]), upsert=True)


def session_ends_rebuild(host_id: int) -> None:
    """Write every session end of host ``host_id`` afresh from its exposures and corrections, and keep them
    from now on (``SessionEndsKept``). Run under the host's lock (``_lock_host``), so that no recurrence
    refresh of the host runs meanwhile."""
    SessionEnd.objects.filter(host_id=host_id).delete()
    _insert(*_activity_sql(host_id, None), upsert=False)
    SessionEndsKept.objects.get_or_create(host_id=host_id)


def session_ends_read(host_id: int, after_ms: int) -> np.ndarray:
    """What ``session_ends_after`` answers, read from the host's exposures and corrections rather than the
    kept ends (a host whose ends are not kept; a check of the kept ones): each session's last activity
    after ``after_ms`` (epoch ms), sorted (an int64 array; one query)."""
    sql, params = _activity_sql(host_id, None, after_ms)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return np.sort(np.array([ms for _host, _session, ms in cursor.fetchall()], dtype=np.int64))


def session_ends_after(host_id: int, after_ms: int) -> np.ndarray:
    """The last activity (epoch ms) of each session of host ``host_id`` active after ``after_ms``, sorted
    (an int64 array): how many of them are after a time ``T >= after_ms`` is the count of sessions with
    activity after ``T``. The host's ends must be kept (``session_ends_rebuild``)."""
    rows = SessionEnd.objects.filter(host_id=host_id, last_ms__gt=after_ms).order_by("last_ms")
    sql, params = rows.values_list("last_ms").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return np.array([ms for (ms,) in cursor.fetchall()], dtype=np.int64)
