"""The log chart's rollup: decisions per host, ISO week and reason code (``DecisionWeek``; issue 10,
Build 3: "the log's chart reads only the window it shows, or a rollup kept by ``decision_append``").

``decisions_append_many`` calls ``decision_weeks_add`` with the rows it inserts, in its transaction, so
the rollup commits (or rolls back) with the decisions. ``decision_weeks_rebuild`` recounts it from the
log (the migration that made it, and ``bench/generate.py``, which writes decisions directly);
``decision_weeks_check`` lists every difference from a recount (the tests run it after each test).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta

from django.db import connection, transaction
from django.db.models import CharField, Count, DateField, Func, Value
from django.db.models.functions import Coalesce

from review.models import Decision, DecisionWeek


class WeekStart(Func):
    """The Monday (UTC) of a datetime's ISO week, as a date, computed by the database itself.

    Django's ``TruncWeek`` is a Python call per row on SQLite; this is SQLite's own ``date()`` there and
    ``date_trunc`` on PostgreSQL (the two databases the project runs on). ``week_of`` is the same in Python.
    """

    output_field = DateField()
    template = "(date_trunc('week', %(expressions)s AT TIME ZONE 'UTC'))::date"

    def as_sqlite(self, compiler, connection, **extra_context):
        # 'weekday 0' moves to the Sunday ending the ISO week (or stays on it); six days back is its Monday
        return self.as_sql(compiler, connection, template="date(%(expressions)s, 'weekday 0', '-6 days')")


def week_of(at: datetime) -> date:
    """The Monday (UTC) of the ISO week holding the aware datetime ``at``."""
    day = at.astimezone(UTC).date()
    return day - timedelta(days=day.weekday())


def decision_weeks_add(decisions: Iterable[Decision]) -> None:
    """Count ``decisions`` (just inserted, in the caller's transaction) into the rollup: one upsert per
    (host, week, code) they touch, ``n = n + added``, sent as one ``executemany``."""
    added = Counter((d.host, week_of(d.at), d.reason_code or "") for d in decisions)
    if not added:
        return
    meta = DecisionWeek._meta
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    host, week, code, n = (quote(meta.get_field(f).column) for f in ("host", "week", "reason_code", "n"))
    week_field = meta.get_field("week")
    with connection.cursor() as cursor:
        cursor.executemany(
            f"INSERT INTO {table} ({host}, {week}, {code}, {n}) VALUES (%s, %s, %s, %s) "
            f"ON CONFLICT ({host}, {week}, {code}) DO UPDATE SET {n} = {table}.{n} + excluded.{n}",
            [
                (h, week_field.get_db_prep_value(w, connection), c, k)
                for (h, w, c), k in sorted(added.items())
            ],
        )


def week_counts(decision_model=Decision) -> dict[tuple[str, date, str], int]:
    """``{(host, week Monday, reason code or "") : decisions}`` of the whole log, by one GROUP BY in the
    database. ``decision_model``: the model to read (a migration passes its historical one)."""
    rows = (
        decision_model.objects.order_by()
        .annotate(week=WeekStart("at"), code=Coalesce("reason_code", Value(""), output_field=CharField()))
        .values("host", "week", "code")
        .annotate(n=Count("*"))
        .values_list("host", "week", "code", "n")
    )
    # SQLite's date() comes back as text
    return {(h, date.fromisoformat(w) if isinstance(w, str) else w, c): n for h, w, c, n in rows.iterator()}


def decision_weeks_rebuild() -> int:
    """Replace the rollup with a recount of the whole log (one GROUP BY); returns the rows written."""
    counts = week_counts()
    with transaction.atomic():
        DecisionWeek.objects.all().delete()
        DecisionWeek.objects.bulk_create(
            (DecisionWeek(host=h, week=w, reason_code=c, n=n) for (h, w, c), n in sorted(counts.items())),
            batch_size=2000,
        )
    return len(counts)


def decision_weeks_check() -> list[str]:
    """Every difference between the stored rollup and a recount of the log, one sentence each, sorted
    (empty when they agree)."""
    stored = {
        (h, w, c): n for h, w, c, n in DecisionWeek.objects.values_list("host", "week", "reason_code", "n")
    }
    counted = week_counts()
    return [
        f"decision weeks {h} {w.isoformat()} {c or '(no code)'}: stored {stored.get(key, 0)}, "
        f"log {counted.get(key, 0)}"
        for key in sorted(stored.keys() | counted.keys())
        if stored.get(key, 0) != counted.get(key, 0)
        for h, w, c in [key]
    ]
