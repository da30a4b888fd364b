"""Background tasks of the lessons app (Django's tasks framework; the worker is ``manage.py db_worker``).

``regroup_pending``: after a bulk ingest left piles not grouped yet (their lessons' texts not encoded:
``lessons.services.embeddings.facts_deferred``), group them. docs: docs/piles-and-recurrence.md ("Facts").
"""

from __future__ import annotations

from django_tasks import task

from lessons.services.facts import facts_regroup_pending


@task()
def regroup_pending(host_id: int) -> int:
    """Group host ``host_id``'s piles left not grouped yet (``facts_regroup_pending``); returns how many
    piles were written."""
    return facts_regroup_pending(host_id=host_id)
