"""Changing lessons' status: the one path every status writer takes (ingest, retire, restore, approving
and rolling back a consolidation).

A status change can move a lesson key's current version (docs/piles-and-recurrence.md, "Recurrence"), so
each change is noted for recurrence. A writer that refreshes recurrence itself inside its transaction
(ingest) passes its ``RecurrenceChanges``; every other writer gets ONE refresh of all the keys its
transaction touched, run once the transaction commits. After the commit, not inside: a decision holds
its entity's lessons FOR UPDATE, and taking the host lock under them could deadlock with an ingest that
holds the host lock and needs a key-share lock on those lessons for its attribution rows.

A large refresh may run in the background instead (issue 13, Build 2): when the changes touch more than
``settings.RECURRENCE_BACKGROUND_KEYS`` lesson keys they are offered (``lessons.signals.recount_offered``;
the review app queues a recount job while it answers a web request) and, when a receiver takes them, the
request returns at once; small changes, and every change outside a web request (management
commands, the task worker itself), are refreshed here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Final

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from lessons.models import Lesson
from lessons.recurrence import refresh
from lessons.recurrence.refresh import RecurrenceChanges
from lessons.services.entity_counts import CountChanges, entity_counts_for_lessons
from lessons.signals import recount_offered


class _Keep:
    def __repr__(self) -> str:
        return "KEEP"


KEEP: Final = _Keep()  # "leave this field as it is"
UPDATE_CHUNK = 500  # ids per UPDATE: well under SQLite's 999 parameters


def lesson_status_set(
    *,
    lessons: Sequence[Lesson],
    status: str,
    decided_at: datetime | None | _Keep = KEEP,
    superseded_by: str | None | _Keep = KEEP,
    changes: RecurrenceChanges | None = None,
    counts: CountChanges | None = None,
) -> None:
    """Set ``status`` (and ``decided_at`` / ``superseded_by`` unless ``KEEP``) of ``lessons``.

    One UPDATE per ``UPDATE_CHUNK`` lessons, ``updated_at`` = now; the instances are updated to match.
    Their keys go to ``changes`` when given (the caller refreshes recurrence in its transaction), else
    to the one recurrence refresh run after the current transaction commits
    (``recurrence_after_commit``). The entities' counts (``EntityCount``) are refreshed at once, in the
    caller's transaction, unless ``counts`` collects them for the caller's one refresh (ingest). Must run
    inside the caller's transaction to be atomic with it.
    """
    if not lessons:
        return
    values: dict[str, object] = {"status": status, "updated_at": timezone.now()}
    if not isinstance(decided_at, _Keep):
        values["decided_at"] = decided_at
    if not isinstance(superseded_by, _Keep):
        values["superseded_by"] = superseded_by
    ids = [lesson.id for lesson in lessons]
    for start in range(0, len(ids), UPDATE_CHUNK):
        Lesson.objects.filter(id__in=ids[start : start + UPDATE_CHUNK]).update(**values)
    for lesson in lessons:
        for name, value in values.items():
            setattr(lesson, name, value)
    if counts is not None:
        counts.add_lessons(lessons)
    else:
        entity_counts_for_lessons(lessons)
    if changes is not None:
        changes.add_lessons(lessons)
    else:
        recurrence_after_commit(lessons=lessons)


def lesson_status_set_undecided(
    *,
    lessons: Sequence[Lesson],
    status: str,
    superseded_by: str | None | _Keep = KEEP,
    changes: RecurrenceChanges,
    counts: CountChanges,
) -> list[Lesson]:
    """Set ``status`` (and ``superseded_by`` unless ``KEEP``) of those ``lessons`` no reviewer has decided
    (``decided_at IS NULL`` when the row is written): an import's status never undoes a decision, even
    one committed after the import read the lesson. Returns the lessons changed; the others are left as
    they are (the caller reports them held). docs/interchange.md, "lesson" (a reviewer's decision wins).

    A conditional write, not lock-then-check: one ``UPDATE ... WHERE decided_at IS NULL RETURNING id`` per
    ``UPDATE_CHUNK`` lessons. On PostgreSQL the rows are locked by a sub-select in (host, hash) order
    ``FOR NO KEY UPDATE`` (so two writers never deadlock on them, and the foreign-key checks of other
    inserts are not blocked), and the condition is re-checked on the row a concurrent decision
    committed. On SQLite the write transaction already excludes every other writer. The keys of the
    changed lessons go to ``changes``, their entities to ``counts`` (the caller's one refresh). Run
    inside a transaction.
    """
    now = timezone.now()
    values: dict[str, object] = {"status": status, "updated_at": now}
    if not isinstance(superseded_by, _Keep):
        values["superseded_by"] = superseded_by
    meta = Lesson._meta
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    sets = ", ".join(f"{quote(meta.get_field(name).column)} = %s" for name in values)
    params = [meta.get_field(name).get_db_prep_save(value, connection) for name, value in values.items()]
    decided, pk = quote(meta.get_field("decided_at").column), quote(meta.pk.column)
    by_id = {lesson.id: lesson for lesson in lessons}
    ids = sorted(by_id)
    changed: list[Lesson] = []
    with connection.cursor() as cursor:
        for start in range(0, len(ids), UPDATE_CHUNK):
            chunk = ids[start : start + UPDATE_CHUNK]
            marks = ", ".join(["%s"] * len(chunk))
            if connection.vendor == "postgresql":
                host, digest = quote(meta.get_field("host").column), quote(meta.get_field("hash").column)
                where = (
                    f"{pk} IN (SELECT {pk} FROM {table} WHERE {pk} IN ({marks}) AND {decided} IS NULL "
                    f"ORDER BY {host}, {digest} FOR NO KEY UPDATE)"
                )
            else:
                where = f"{pk} IN ({marks})"
            cursor.execute(
                f"UPDATE {table} SET {sets} WHERE {where} AND {decided} IS NULL RETURNING {pk}",
                [*params, *chunk],
            )
            changed.extend(by_id[row[0]] for row in cursor.fetchall())
    for lesson in changed:
        for name, value in values.items():
            setattr(lesson, name, value)
    changes.add_lessons(changed)
    counts.add_lessons(changed)
    return changed


def recurrence_after_commit(*, lessons: Iterable[Lesson]) -> None:
    """Note that ``lessons`` were created or changed status: their keys join the ONE recurrence refresh
    (``recurrence_changes_refresh``) that runs when the current transaction commits.

    Outside a transaction the refresh runs at once. A failure of the refresh is logged, not raised: the
    change itself is committed, and ``manage.py recurrence --recompute`` rebuilds the counts.
    """
    connection = transaction.get_connection()
    if not connection.in_atomic_block:
        changes = RecurrenceChanges()
        changes.add_lessons(lessons)
        recurrence_changes_run(changes)
        return
    _pending(connection).changes.add_lessons(lessons)


class _Pending:
    """The refresh one transaction registered with ``on_commit``, and the changes it collects."""

    def __init__(self) -> None:
        self.changes = RecurrenceChanges()
        self.done = False

    def run(self) -> None:
        self.done = True
        recurrence_changes_run(self.changes)


def recurrence_changes_run(changes: RecurrenceChanges) -> None:
    """Refresh ``changes`` now, or, when they touch more than ``settings.RECURRENCE_BACKGROUND_KEYS``
    lesson keys, offer them (``recount_offered``) and leave them to the receiver that takes them."""
    keys = sum(len(host_keys) for host_keys in changes.keys.values())
    if keys > settings.RECURRENCE_BACKGROUND_KEYS:
        answers = recount_offered.send(sender=RecurrenceChanges, changes=changes)
        if any(taken is True for _receiver, taken in answers):
            return
    refresh.recurrence_changes_refresh(changes=changes)


def _pending(connection) -> _Pending:
    # Django keeps a transaction's callbacks in ``run_on_commit`` as (savepoint ids, callback, robust) and
    # drops those of a rolled-back savepoint. A callback registered under savepoints that are all still
    # open belongs to this transaction and has not run: join it rather than register a second refresh.
    open_savepoints = set(connection.savepoint_ids)
    for savepoints, callback, _robust in connection.run_on_commit:
        pending = getattr(callback, "__self__", None)
        if isinstance(pending, _Pending) and not pending.done and savepoints <= open_savepoints:
            return pending
    pending = _Pending()
    transaction.on_commit(pending.run, robust=True)
    return pending
