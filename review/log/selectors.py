"""Reads for the decision log page, its exports and the decisions API. docs/decisions.md.

Every selector returns a queryset (or rows) with the joins already applied, so the log page runs a fixed
number of queries whatever the number of decisions (the page tests assert it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.db import connection
from django.db.models import Count, Exists, OuterRef, QuerySet

from lessons.models import Host
from review.log.chart import MAX_HOSTS, MAX_WEEKS
from review.models import Decision, DecisionWeek
from review.services.decision_weeks import WeekStart, week_of

# Host status words of the log page. docs/decisions.md, "Hosts apply decisions".
STATUS_AWAITING = "awaiting the host"
STATUS_APPLIED = "applied"
STATUS_FAILED = "failed"


def decisions_log() -> QuerySet[Decision]:
    """Every decision with its host acknowledgement and its outcome joined (``select_related``), newest
    first."""
    return Decision.objects.select_related("ack", "outcome").order_by("-seq")


def decision_host_status(decision: Decision) -> tuple[str, object | None, str]:
    """``(status, acked_at, detail)``: ``awaiting the host`` (no ack yet), ``applied`` or ``failed``.

    Reads the joined ``ack`` (no query when ``decisions_log`` fetched the row).
    """
    try:
        ack = decision.ack
    except Decision.ack.RelatedObjectDoesNotExist:
        return STATUS_AWAITING, None, ""
    return ack.status, ack.acked_at, ack.detail


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
    start_day, last_monday = _window(newest)
    start = datetime.combine(start_day, time.min, tzinfo=UTC)
    stop = datetime.combine(last_monday + timedelta(weeks=1), time.min, tzinfo=UTC)
    window = decisions.filter(at__gte=start, at__lt=stop)
    hosts = _hosts(Host.objects.all(), window, decisions.filter(at__lt=start))
    charted = [name for name, _ in hosts[:max_hosts]]
    rows = (
        window.filter(host__in=charted)
        .annotate(week=WeekStart("at"))
        .values("host", "week", "reason_code")
        .annotate(n=Count("*"))  # not COUNT(id): PostgreSQL can then answer from the index alone
        .values_list("host", "week", "reason_code", "n")
    )
    return _result(rows, hosts, max_hosts=max_hosts, start=start_day)


def _hosts(candidates: QuerySet[Host], window: QuerySet, before: QuerySet) -> list[tuple[str, bool]]:
    """``(name, has rows before the window)`` of each of ``candidates`` with a row in ``window``, by
    name: one query, an EXISTS probe per host on the host-first index of ``window``'s table."""
    return list(
        candidates.annotate(
            charted=Exists(window.filter(host=OuterRef("name"))),
            earlier=Exists(before.filter(host=OuterRef("name"))),
        )
        .filter(charted=True)
        .order_by("name")
        .values_list("name", "earlier")
    )


def _result(rows, hosts: list[tuple[str, bool]], *, max_hosts: int, start: date) -> ReasonCodeWindow:
    return ReasonCodeWindow(
        rows=sorted(rows, key=lambda r: (r[0], r[1], r[2] is None, r[2] or "")),
        hosts=[name for name, _ in hosts],
        earlier=frozenset(name for name, before in hosts[:max_hosts] if before),
        start=start,
    )


def _window(newest: datetime) -> tuple[date, date]:
    """The Mondays of the first and last of the ``MAX_WEEKS`` weeks that end with ``newest``'s week."""
    last_monday = week_of(newest)
    return last_monday - timedelta(weeks=MAX_WEEKS - 1), last_monday


def reason_codes_by_week_rollup(*, host: str | None = None, max_hosts: int = MAX_HOSTS) -> ReasonCodeWindow:
    """``reason_codes_by_week`` of the whole log (``host`` None) or of one host's decisions, read from the
    rollup ``DecisionWeek`` instead of the decisions: the same window, rows, hosts and ``earlier``, in
    four queries that read at most ``MAX_WEEKS`` x codes rows a charted host, whatever the log's size.

    The window ends with the week of the newest decision by ``seq`` (one index seek), as there.
    """
    newest_qs = Decision.objects.order_by("-seq")
    if host is not None:
        newest_qs = newest_qs.filter(host=host)
    newest = newest_qs.values_list("at", flat=True).first()
    if newest is None:
        return ReasonCodeWindow(rows=[], hosts=[], earlier=frozenset(), start=None)
    start_day, last_monday = _window(newest)
    weeks = DecisionWeek.objects.order_by()
    window = weeks.filter(week__gte=start_day, week__lte=last_monday)
    candidates = Host.objects.all() if host is None else Host.objects.filter(name=host)
    hosts = _hosts(candidates, window, weeks.filter(week__lt=start_day))
    charted = [name for name, _ in hosts[:max_hosts]]
    rows = [
        (h, w, code or None, n)
        for h, w, code, n in window.filter(host__in=charted).values_list("host", "week", "reason_code", "n")
    ]
    return _result(rows, hosts, max_hosts=max_hosts, start=start_day)


def decisions_since(*, since: int, hosts: Iterable[str] | None, limit: int) -> list[Decision]:
    """Up to ``limit`` decisions with ``seq > since`` in ``seq`` order; ``hosts`` None means every host."""
    qs = Decision.objects.filter(seq__gt=since)
    if hosts is not None:
        qs = qs.filter(host__in=list(hosts))
    return list(qs.order_by("seq")[:limit])
