"""Reads for the hosts pages: every host with its counts, one host, its entities.
docs/piles-and-recurrence.md, "Piles" rules 2-4."""

from __future__ import annotations

from django.db.models import F, QuerySet, Value
from django.db.models.functions import Coalesce

from lessons.core.piles import pile_target
from lessons.models import EntityCount, Host
from lessons.selectors.piles import live_lessons


def host_get(*, name: str) -> Host | None:
    """The host called ``name``, or ``None``."""
    return Host.objects.filter(name=name).first()


def host_overview(*, name: str) -> Host | None:
    """One host with the counts of ``hosts_overview``, or ``None`` when there is no such host (one query)."""
    return hosts_overview().filter(name=name).first()


def host_entities(*, host: Host) -> QuerySet:
    """Every entity of ``host`` that has a lesson (any status), one dict each, read from the stored
    per-entity counts (``EntityCount``, kept by the writers; one query): ``namespace``, ``subject``,
    ``live`` (live lessons: the count against the budget), ``total`` (lessons of any status), ``overage``
    (``live - max_active``; negative within budget). Sorted most live lessons first, then namespace and
    subject (unique per host); each sort the table offers is served by an index (lessons.models).
    docs/piles-and-recurrence.md, "Piles" rules 1-4.
    """
    return (
        EntityCount.objects.filter(host=host)
        .values("namespace", "subject", "live", "total")
        .annotate(overage=F("live") - Value(host.max_active))
        .order_by("-live", "namespace", "subject")
    )


def hosts_overview() -> QuerySet[Host]:
    """Every host with ``live_lessons``, ``entity_count`` (entities with a live lesson) and ``pile_count``
    (entities over budget; 0 while the budget is off), read from the stored totals (``HostCount``, kept
    by the writers; zeros for a host without a row) in one query. docs/piles-and-recurrence.md, "Piles" rules
    2-4.
    """
    return Host.objects.annotate(
        live_lessons=Coalesce(F("counts__live_lessons"), Value(0)),
        entity_count=Coalesce(F("counts__entity_count"), Value(0)),
        pile_count=Coalesce(F("counts__pile_count"), Value(0)),
    ).order_by("name")


def entity_targets(*, host: Host, targets: list[str]) -> dict[str, tuple[str, str]]:
    """``{target: (namespace, subject)}`` of the host's live entities whose target
    (docs/piles-and-recurrence.md, "Piles" rule 7) is
    in ``targets`` (the budget preview's piles, so the page can link them). One query; none when empty."""
    if not targets:
        return {}
    wanted = set(targets)
    entities = live_lessons().filter(host=host).values_list("namespace", "subject").distinct()
    return {t: e for e in entities if (t := pile_target(*e)) in wanted}


HOST_NAMES_LIMIT = 20


def host_names_matching(typed: str, *, limit: int = HOST_NAMES_LIMIT) -> list[str]:
    """At most ``limit`` host names for a search box: those starting with ``typed`` (case-insensitive)
    first, then those containing it, each part by name; the first ``limit`` names for an empty
    ``typed``. Two queries at most, whatever the number of hosts."""
    names = Host.objects.order_by("name").values_list("name", flat=True)
    if not typed:
        return list(names[:limit])
    first = list(names.filter(name__istartswith=typed)[:limit])
    if len(first) < limit:
        first += list(
            names.filter(name__icontains=typed).exclude(name__istartswith=typed)[: limit - len(first)]
        )
    return first
