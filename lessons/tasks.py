"""Background tasks of the lessons app (Django's tasks framework; the worker is ``manage.py db_worker``).

``regroup_pending``: after a bulk ingest left piles not grouped yet (their lessons' texts not encoded:
``lessons.services.embeddings.facts_deferred``), or an upgrade left piles of an older facts method
(``regroups_after_migrate``), group them. docs: docs/piles-and-recurrence.md ("Facts").
"""

from __future__ import annotations

from django.db import DEFAULT_DB_ALIAS, DatabaseError
from django_tasks import task

from lessons.core.facts import FACTS_VERSION
from lessons.models import EntityCount, Host
from lessons.services.embeddings import facts_deferred
from lessons.services.entity_counts import entity_counts_budget_changed
from lessons.services.facts import facts_regroup_pending


@task()
def regroup_pending(host_id: int) -> int:
    """Group host ``host_id``'s piles left not grouped yet (``facts_regroup_pending``); returns how many
    piles were written."""
    return facts_regroup_pending(host_id=host_id)


def budget_changed_grouping_later(*, host: Host) -> int:
    """``entity_counts_budget_changed`` for ``host`` (same transaction), with the entities that became
    piles grouped in the background (``regroup_pending``, queued here) when their texts were never
    encoded: a budget change crosses many entities at once, and encoding 5-8 ms a text in the request,
    under the counts lock, took 37 s for 3,000 lessons. Piles whose texts are encoded already are grouped
    at once. Returns the crossings. docs/piles-and-recurrence.md ("Facts")."""
    with facts_deferred() as pending:
        crossings = entity_counts_budget_changed(host=host)
    if pending:
        regroup_pending.enqueue(host.id)
    return crossings


def regroups_after_migrate(*, using: str = DEFAULT_DB_ALIAS, **kwargs: object) -> list[int]:
    """The ``post_migrate`` receiver (``lessons.apps``): queue the background regroup
    (``lessons.tasks.regroup_pending``) for each host that has a pile whose stored facts are of another
    ``FACTS_VERSION``, so an upgrade that changed the facts method regroups without a command (until the
    worker has, a pile's facts are computed when it is read). One query; nothing queued on a fresh
    database, or when the tables are not there yet. Returns the host ids queued, sorted.
    docs/production.md ("Installing and starting")."""
    try:
        hosts = sorted(
            set(
                EntityCount.objects.using(using)
                .filter(over_budget=True)
                .exclude(facts_version=FACTS_VERSION)
                .values_list("host_id", flat=True)
                .distinct()
            )
        )
        for host_id in hosts:
            regroup_pending.enqueue(host_id)
    except DatabaseError:  # migrated partly (an app at a time): the next migrate queues them
        return []
    return hosts
