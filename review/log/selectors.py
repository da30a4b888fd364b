"""Reads for the decision log page, its exports and the decisions API. spec: decisions.md.

Every selector returns a queryset (or rows) with the joins already applied, so the log page runs a fixed
number of queries whatever the number of decisions (the page tests assert it).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count, QuerySet
from django.db.models.functions import TruncWeek

from lessons.models import Host
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
    """Every actor who has decided, sorted (the choices of the log's actor filter); one query."""
    return list(Decision.objects.order_by("actor").values_list("actor", flat=True).distinct())


def reason_codes_by_week(decisions: QuerySet[Decision]) -> list[tuple[str, object, str | None, int]]:
    """``(host, week_start, reason_code, count)`` rows of the filtered decisions, one aggregate query.

    ``week_start`` is the Monday (UTC) of the ISO week, as a datetime or date depending on the backend.
    Sorted by host, week, reason code (``None`` last).
    """
    rows = (
        decisions.order_by()
        .annotate(week=TruncWeek("at"))
        .values("host", "week", "reason_code")
        .annotate(n=Count("id"))
        .values_list("host", "week", "reason_code", "n")
    )
    return sorted(rows, key=lambda r: (r[0], r[1], r[2] is None, r[2] or ""))


def decisions_since(*, since: int, hosts: Iterable[str] | None, limit: int) -> list[Decision]:
    """Up to ``limit`` decisions with ``seq > since`` in ``seq`` order; ``hosts`` None means every host."""
    qs = Decision.objects.filter(seq__gt=since)
    if hosts is not None:
        qs = qs.filter(host__in=list(hosts))
    return list(qs.order_by("seq")[:limit])
