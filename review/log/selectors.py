"""Reads for the decision log page, its exports and the decisions API. spec: decisions.md.

Every selector returns a queryset (or rows) with the joins already applied, so the log page runs a fixed
number of queries whatever the number of decisions (the page tests assert it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.db import connection
from django.db.models import Count, DateField, Exists, Func, OuterRef, QuerySet

from lessons.models import Host
from review.log.chart import MAX_HOSTS, MAX_WEEKS
from review.models import Decision

# Host status words of the log page. spec: decisions.md, "Hosts apply decisions".
STATUS_AWAITING = "awaiting host"
STATUS_APPLIED = "applied"
STATUS_FAILED = "failed"


def decisions_log() -> QuerySet[Decision]:
    """Every decision with its host acknowledgement joined (``select_related("ack")``), newest first."""
    return Decision.objects.select_related("ack").order_by("-seq")


def decision_host_status(decision: Decision) -> tuple[str, object | None, str]:
    """``(status, acked_at, detail)``: ``awaiting host`` (no ack yet), ``applied`` or ``failed``.

    Reads the joined ``ack`` (no query when ``decisions_log`` fetched the row).
    """
    try:
        ack = decision.ack
    except Decision.ack.RelatedObjectDoesNotExist:
        return STATUS_AWAITING, None, ""
    return ack.status, ack.acked_at, ack.detail


def log_host_names() -> list[str]:
    """Every host name, sorted (the choices of the log's host filter); one query."""
    return list(Host.objects.order_by("name").values_list("name", flat=True))


def log_actor_names() -> list[str]:
    """Every actor who has decided, sorted (the choices of the log's actor filter); one query.

    A loose index scan over ``decision_actor_seq`` (a recursive query that jumps from one actor to the
    next), so its cost grows with the number of actors, not with the log (a DISTINCT read every row).
    """
    table = connection.ops.quote_name(Decision._meta.db_table)
    actor = connection.ops.quote_name(Decision._meta.get_field("actor").column)
    sql = (
        f"WITH RECURSIVE actors(name) AS ("
        f" SELECT MIN({actor}) FROM {table}"
        f" UNION ALL"
        f" SELECT (SELECT MIN({actor}) FROM {table} WHERE {actor} > actors.name) FROM actors"
        f" WHERE actors.name IS NOT NULL"
        f") SELECT name FROM actors WHERE name IS NOT NULL"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql)
        return [row[0] for row in cursor.fetchall()]


class WeekStart(Func):
    """The Monday (UTC) of a datetime's ISO week, as a date, computed by the database itself.

    Django's ``TruncWeek`` is a Python call per row on SQLite; this is SQLite's own ``date()`` there and
    ``date_trunc`` on PostgreSQL (the two databases the project runs on).
    """

    output_field = DateField()
    template = "(date_trunc('week', %(expressions)s AT TIME ZONE 'UTC'))::date"

    def as_sqlite(self, compiler, connection, **extra_context):
        # 'weekday 0' moves to the Sunday ending the ISO week (or stays on it); six days back is its Monday
        return self.as_sql(compiler, connection, template="date(%(expressions)s, 'weekday 0', '-6 days')")


@dataclass(frozen=True)
class ReasonCodeWindow:
    """What the log's chart draws: ``rows`` ``(host, week_start date, reason_code, count)`` of the
    charted hosts in the window, sorted by host, week, code (``None`` last); ``hosts`` every host with a
    decision in the window, by name; ``earlier`` the charted hosts with decisions before it."""

    rows: list[tuple[str, date, str | None, int]]
    hosts: list[str]
    earlier: frozenset[str]
    start: date | None


def reason_codes_by_week(decisions: QuerySet[Decision], *, max_hosts: int = MAX_HOSTS) -> ReasonCodeWindow:
    """The filtered decisions of the last ``MAX_WEEKS`` ISO weeks of the log, counted per host, week and
    reason code, for the first ``max_hosts`` hosts by name; three queries, none reading outside the window.

    The window ends with the week (Monday, UTC) of the newest decision of ``decisions`` (by ``seq``) and
    starts ``MAX_WEEKS - 1`` weeks before. The hosts come from the host table, each probed with an
    EXISTS on ``decision_host_at`` (in the window; before it); the counts group the window's rows of the
    charted hosts by ``WeekStart``, read from that covering index (no per-row Python call, no whole-log
    aggregate).
    """
    decisions = decisions.order_by()
    newest = decisions.order_by("-seq").values_list("at", flat=True).first()
    if newest is None:
        return ReasonCodeWindow(rows=[], hosts=[], earlier=frozenset(), start=None)
    last_monday = newest.astimezone(UTC).date() - timedelta(days=newest.astimezone(UTC).weekday())
    start_day = last_monday - timedelta(weeks=MAX_WEEKS - 1)
    start = datetime.combine(start_day, time.min, tzinfo=UTC)
    stop = datetime.combine(last_monday + timedelta(weeks=1), time.min, tzinfo=UTC)
    window = decisions.filter(at__gte=start, at__lt=stop)
    hosts = list(
        Host.objects.annotate(
            charted=Exists(window.filter(host=OuterRef("name"))),
            earlier=Exists(decisions.filter(host=OuterRef("name"), at__lt=start)),
        )
        .filter(charted=True)
        .order_by("name")
        .values_list("name", "earlier")
    )
    charted = [name for name, _ in hosts[:max_hosts]]
    rows = (
        window.filter(host__in=charted)
        .annotate(week=WeekStart("at"))
        .values("host", "week", "reason_code")
        .annotate(n=Count("*"))  # not COUNT(id): PostgreSQL can then answer from the index alone
        .values_list("host", "week", "reason_code", "n")
    )
    return ReasonCodeWindow(
        rows=sorted(rows, key=lambda r: (r[0], r[1], r[2] is None, r[2] or "")),
        hosts=[name for name, _ in hosts],
        earlier=frozenset(name for name, before in hosts[:max_hosts] if before),
        start=start_day,
    )


def decisions_since(*, since: int, hosts: Iterable[str] | None, limit: int) -> list[Decision]:
    """Up to ``limit`` decisions with ``seq > since`` in ``seq`` order; ``hosts`` None means every host."""
    qs = Decision.objects.filter(seq__gt=since)
    if hosts is not None:
        qs = qs.filter(host__in=list(hosts))
    return list(qs.order_by("seq")[:limit])
