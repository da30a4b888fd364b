"""The hosts and lessons of an ingest's write phase: a host record, a chunk of lesson records (new rows in
one write, changed ones updated, a reviewer's newer decision kept). lessons/ingest/passes.py;
docs/interchange.md."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from lessons.core.interchange import (
    LESSON_GIVEN_FIELDS,
    HostRecord,
    LessonRecord,
)
from lessons.core.piles import entity_label
from lessons.core.recurrence import lesson_key
from lessons.core.text import hash8, text_hash
from lessons.ingest import checkpoints
from lessons.ingest.state import Entry, IngestState, Known, reject
from lessons.ingest.writer import Table
from lessons.models import Host, Lesson
from lessons.recurrence.versions import key_of
from lessons.services.status import lesson_status_set_undecided
from lessons.tasks import budget_changed_grouping_later

HASH_CONTENT_DIFFERS = (
    "hash {short}… on host {host} already names a lesson on {entity} with other content; "
    "a hash names one namespace, subject and text"
)


# --- hosts -------------------------------------------------------------------------------------


def host_row(state: IngestState, name: str) -> Host:
    """The host named ``name``, created with the defaults (budget off) when missing."""
    host = state.hosts.get(name)
    if host is None:
        host = Host.objects.filter(name=name).first()
        if host is None:
            host = Host.objects.create(name=name)
            state.created_in_batch.add(name)
            verb = "would be created" if state.report.dry_run else "created"
            state.report.notes.append(f"host {name} {verb} with the defaults (budget off)")
        state.hosts[name] = host
    return host


def apply_host(state: IngestState, record: HostRecord) -> None:
    report = state.report
    existing = state.hosts.get(record.name) or Host.objects.filter(name=record.name).first()
    if existing is None or record.name in state.created_in_batch:
        host = existing or Host(name=record.name)
        budget_before = (host.max_active, host.budget_enabled)
        if record.max_active is not None:
            host.max_active = record.max_active
        if record.budget_enabled is not None:
            host.budget_enabled = record.budget_enabled
        if record.description is not None:
            host.description = record.description
        host.save()
        if existing is not None and (host.max_active, host.budget_enabled) != budget_before:
            budget_changed_grouping_later(host=host)
        state.hosts[record.name] = host
        if existing is None:
            state.created_in_batch.add(record.name)
            report.count("host", "created")
        else:
            report.count("host", "unchanged")
        return
    state.hosts[record.name] = existing
    budget_differs = (record.max_active is not None and record.max_active != existing.max_active) or (
        record.budget_enabled is not None and record.budget_enabled != existing.budget_enabled
    )
    if budget_differs:
        report.notes.append(
            f"host {record.name} exists: its budget (max_active {existing.max_active}, "
            f"{'enabled' if existing.budget_enabled else 'disabled'}) was kept; "
            "budgets belong to the dashboard's admins"
        )
    if record.description is not None and record.description != existing.description:
        existing.description = record.description
        existing.save(update_fields=["description"])
        report.count("host", "updated")
    else:
        report.count("host", "unchanged")


# --- lessons -----------------------------------------------------------------------------------


def _lesson_values(record: LessonRecord) -> dict:
    """The record's fields stored as given (``LESSON_GIVEN_FIELDS``), arrays as lists."""
    values = {name: getattr(record, name) for name in LESSON_GIVEN_FIELDS}
    return {name: list(v) if isinstance(v, tuple) else v for name, v in values.items()}


def content_of(x: Lesson | LessonRecord) -> tuple[str, str, str]:
    return (x.namespace, x.subject, x.text)


def refuse_other_content(
    state: IngestState, where: tuple[int, int], record: LessonRecord, holder: Lesson | LessonRecord | Known
) -> None:
    """A record whose given hash already names other content: refused, the first content kept (a hash is
    a content address, docs/interchange.md "Text normalization and hashes"; a silent last-wins would lose
    it)."""
    index, number = where
    entity = entity_label(holder.namespace, holder.subject)
    reject(
        state,
        index,
        number,
        "lesson",
        "lesson.hash",
        HASH_CONTENT_DIFFERS.format(short=hash8(record.hash), host=record.host, entity=entity),
    )


LESSON_ROWS = Table(
    model=Lesson,
    fields=(
        "host_id",
        "hash",
        "namespace",
        "subject",
        "text",
        "text_hash",
        "created_at",
        "status",
        *LESSON_GIVEN_FIELDS,
    ),
)


def _lesson_row(host_id: int, record: LessonRecord) -> tuple:
    """A new lesson's row in ``LESSON_ROWS.fields`` order (written out, not looped: it runs per lesson of
    a bulk ingest; a test holds it to the fields)."""
    return (
        host_id,
        record.hash,
        record.namespace,
        record.subject,
        record.text,
        text_hash(record.text),
        record.created_at_ms,
        record.status,
        record.kind,
        record.lesson_id,
        record.store,
        record.origin,
        record.superseded_by,
        list(record.consolidates),
        record.confidence,
        record.helpful,
        record.harmful,
        record.applied,
        list(record.tags),
    )


def apply_lessons(state: IngestState, chunk: list[Entry]) -> None:
    report = state.report
    by_host: dict[str, dict[str, LessonRecord]] = defaultdict(dict)
    where: dict[tuple[str, str], tuple[int, int]] = {}
    for index, number, _done, record in chunk:
        assert isinstance(record, LessonRecord)
        earlier = by_host[record.host].get(record.hash)
        if earlier is not None:
            if content_of(earlier) != content_of(record):
                refuse_other_content(state, (index, number), record, earlier)
                continue
            report.count("lesson", "unchanged")  # the same lesson twice in one chunk: the last wins
        by_host[record.host][record.hash] = record
        where[(record.host, record.hash)] = (index, number)
    for host_name, records in by_host.items():
        host = host_row(state, host_name)
        # Read, not locked: a reviewer's decision committing meanwhile still wins, through the conditional
        # status update below; rows this chunk does not change are never locked.
        existing = {
            lesson.hash: lesson for lesson in Lesson.objects.filter(host=host, hash__in=list(records))
        }
        checkpoints.reached("lessons read")
        new = []
        status_changed: dict[tuple[str, str | None], list[tuple[Lesson, str]]] = defaultdict(list)
        for h, record in records.items():
            lesson = existing.get(h)
            if lesson is not None and content_of(lesson) != content_of(record):
                refuse_other_content(state, where[(host_name, h)], record, lesson)
                continue
            if state.sliced:  # every entity the batch names (module docstring, "Slices")
                state.counts.add(host.id, record.namespace, record.subject)
            if lesson is None:
                new.append(_lesson_row(host.id, record))
                state.changes.keys[host.id].add(
                    lesson_key(hash=h, store=record.store, lesson_id=record.lesson_id)
                )
                state.counts.add(host.id, record.namespace, record.subject)
                continue
            if _update_lesson(state, lesson, record):
                status_changed[(record.status, record.superseded_by)].append((lesson, host_name))
        LESSON_ROWS.insert(new)
        report.count("lesson", "created", len(new))
        if state.sliced:
            _name_key_versions(state, host.id, records.values())
        for (status, superseded_by), pairs in status_changed.items():
            lessons = [lesson for lesson, _name in pairs]
            written = lesson_status_set_undecided(
                lessons=lessons,
                status=status,
                superseded_by=superseded_by,
                changes=state.changes,
                counts=state.counts,
            )
            written_ids = {lesson.id for lesson in written}
            _held_after_all(state, [p for p in pairs if p[0].id not in written_ids], status)


def _name_key_versions(state: IngestState, host_id: int, records: Iterable[LessonRecord]) -> None:
    """Sliced: note the entity of every stored version of the records' lesson keys (``store`` +
    ``lesson_id``), whatever entity each is on. A version of a key, new or not, may move which of its
    versions is current, and with it the recurring counts of the entities of the others; a run after a
    stop sees that version unchanged, so it names them here (module docstring, "Slices"). One query."""
    keys = {(r.store, r.lesson_id) for r in records if r.lesson_id is not None}
    if not keys:
        return
    rows = Lesson.objects.filter(host_id=host_id, lesson_id__in=sorted({lid for _s, lid in keys}))
    for store, lesson_id, namespace, subject in rows.values_list(
        "store", "lesson_id", "namespace", "subject"
    ):
        if (store, lesson_id) in keys:
            state.counts.add(host_id, namespace, subject)


def _held_after_all(state: IngestState, pairs: list[tuple[Lesson, str]], status: str) -> None:
    """Lessons a reviewer decided after this chunk read them: counted held, not updated, with the status the
    decision set."""
    if not pairs:
        return
    now = dict(Lesson.objects.filter(id__in=[lesson.id for lesson, _n in pairs]).values_list("id", "status"))
    for lesson, host_name in pairs:
        lesson.status = now[lesson.id]
        state.report.count("lesson", "updated", -1)
        state.report.count("lesson", "held")
        state.report.add_held(_held_text(lesson, host_name, status))


def _held_text(lesson: Lesson, host_name: str, status: str) -> str:
    return (
        f"lesson {hash8(lesson.hash)} on {host_name}: stays {lesson.status} "
        f"(the source says {status}; a reviewer's decision is newer)"
    )


def _update_lesson(state: IngestState, lesson: Lesson, record: LessonRecord) -> bool:
    """Write the record's changed fields to ``lesson``, except its status and, with a status change, its
    ``superseded_by``: True when the status is to change (the caller sets the statuses of a chunk through
    the status service's conditional update, which a reviewer's decision wins)."""
    report = state.report
    changed = [f for f, v in _lesson_values(record).items() if getattr(lesson, f) != v]
    old_key = key_of(lesson)
    held = False
    if record.status != lesson.status:
        # superseded_by belongs to the status: written with it (record's) or kept with a decision's.
        changed = [f for f in changed if f != "superseded_by"]
        # A reviewer's decision newer than the record wins (docs/interchange.md, "lesson"). A record carries
        # no
        # time of its status change (created_at is when the lesson was written, and a host could send
        # any value), so every decision counts as newer: only another decision changes the status.
        if lesson.decided_at is not None:
            held = True
            report.add_held(_held_text(lesson, record.host, record.status))
        else:
            changed.append("status")
    fields = [f for f in changed if f != "status"]
    values = _lesson_values(record)
    for f in fields:
        setattr(lesson, f, values[f])
    if fields:
        lesson.save(update_fields=[*fields, "updated_at"])
    if changed:
        state.changes.keys[lesson.host_id].update({old_key, key_of(lesson)})
    report.count("lesson", "held" if held else "updated" if changed else "unchanged")
    return "status" in changed
