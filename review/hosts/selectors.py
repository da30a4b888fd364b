"""Reads for the hosts pages: every host with its counts, one host, its entities. spec: piles.md rules 2-4."""

from __future__ import annotations

from django.db.models import Case, Count, F, IntegerField, Max, OuterRef, Q, QuerySet, Subquery, Value, When

from lessons.core.piles import pile_target
from lessons.models import Host, Lesson
from lessons.selectors.piles import live_lessons


class SubqueryCount(Subquery):
    """``(SELECT COUNT(*) FROM (<subquery>))``: counts the rows of a grouped or distinct subquery in SQL."""

    template = "(SELECT COUNT(*) FROM (%(subquery)s) _counted)"
    output_field = IntegerField()


def host_get(*, name: str) -> Host | None:
    """The host called ``name``, or ``None``."""
    return Host.objects.filter(name=name).first()


def host_overview(*, name: str) -> Host | None:
    """One host with the counts of ``hosts_overview``, or ``None`` when there is no such host (one query)."""
    return hosts_overview().filter(name=name).first()


def host_entities(*, host: Host) -> QuerySet:
    """Every entity of ``host`` that has a lesson (any status), one dict each, counted in SQL (one query):
    ``namespace``, ``subject``, ``live`` (live lessons: the count against the budget), ``total``
    (lessons of any status), ``overage`` (``live - max_active``; negative within budget).
    Sorted most live lessons first, then namespace and subject (unique per host). spec: piles.md rules 1-4.
    """
    return (
        Lesson.objects.filter(host=host)
        .order_by()
        .values("namespace", "subject")
        .annotate(
            live=Count("id", filter=Q(status=Lesson.Status.LIVE)),
            total=Count("id"),
        )
        .annotate(overage=F("live") - Value(host.max_active))
        .order_by("-live", "namespace", "subject")
    )


def hosts_overview() -> QuerySet[Host]:
    """Every host with ``live_lessons``, ``entity_count`` (entities with a live lesson) and ``pile_count``
    (entities over budget; 0 while the budget is off), counted in SQL in one query. spec: piles.md rules 2-4.
    """
    live_entities = live_lessons().filter(host=OuterRef("pk")).order_by().values("namespace", "subject")
    # The budget is read inside the grouped subquery (Max over one host) rather than as an outer
    # reference in HAVING, which SQLite cannot resolve from a derived table.
    grouped = live_entities.annotate(n=Count("id"), cap=Max("host__max_active"))
    return Host.objects.annotate(
        live_lessons=SubqueryCount(live_lessons().filter(host=OuterRef("pk")).order_by().values("id")),
        entity_count=SubqueryCount(grouped.values("namespace")),
        pile_count=Case(
            When(budget_enabled=True, then=SubqueryCount(grouped.filter(n__gt=F("cap")).values("namespace"))),
            default=Value(0),
            output_field=IntegerField(),
        ),
    ).order_by("name")


def entity_targets(*, host: Host, targets: list[str]) -> dict[str, tuple[str, str]]:
    """``{target: (namespace, subject)}`` of the host's live entities whose target (piles.md rule 7) is
    in ``targets`` (the budget preview's piles, so the page can link them). One query; none when empty."""
    if not targets:
        return {}
    wanted = set(targets)
    entities = live_lessons().filter(host=host).values_list("namespace", "subject").distinct()
    return {t: e for e in entities if (t := pile_target(*e)) in wanted}
