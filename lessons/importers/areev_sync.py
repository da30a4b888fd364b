"""``sync_areev``: an areev memory file read through the binding, translated and ingested.

The records go through ``lessons.importers.run`` (and so through ``ingest_sources``) exactly like
``import_areev`` output; this module adds the database side of the sync: the cursor per (host,
memory file) and the consolidations the dashboard already holds. docs/importers.md, "areev: import_areev".
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from lessons.core.text import hash8, normalize
from lessons.models import AreevCursor, Draft, Host, Lesson

from . import areev
from .areev_engine import Memory, op_mark, read_memory
from .run import ImportResult, areev_finish, areev_member_times, execute, stored_lesson_record

SYNC_ACTOR = "user:lesson-pile-review"  # the sync opens the file read-only: it never writes to it
HELD_CONSOLIDATIONS = "consolidations the dashboard already holds"
FORGOTTEN = "lessons the engine no longer holds"
CHANGES_LINE = "changes since op {after}: {changes}"
REPLACED_LINE = (
    "the memory file is not the one synced up to op {after} (replaced, an older copy, or a cursor "
    "stored before files were told apart): read in full"
)


@dataclass
class SyncResult:
    """The import result and the feed positions: ``after`` (where this read started), ``cursor`` (read
    up to); ``replaced_after`` is the stored cursor when it did not hold for this file (0: it held)."""

    result: ImportResult
    after: int
    cursor: int
    changes: int
    replaced_after: int = 0

    def feed_lines(self) -> list[str]:
        """What the sync says of the feed: the replaced-file line (if any), then ``CHANGES_LINE``."""
        replaced = [REPLACED_LINE.format(after=self.replaced_after)] if self.replaced_after else []
        return [*replaced, CHANGES_LINE.format(after=self.after, changes=self.changes)]

    def lines(self) -> list[str]:
        return [*self.result.lines(), *self.feed_lines()]


def _stored_entities(host: str):
    def entities(hashes: set[str]) -> set[tuple[str, str]]:
        rows = Lesson.objects.filter(host__name=host, hash__in=hashes).values_list("namespace", "subject")
        return set(rows)

    return entities


def _forgotten(host: str, translation, entities: set[tuple[str, str]]) -> None:
    """A live lesson of an entity read whole that the engine no longer holds (forgotten there, e.g. by
    the host itself) is sent again as ``retracted``. A lesson a reviewer decided on is left alone: only
    another decision changes it (and the dashboard's own consolidations have no areev hash)."""
    sent = {item.record["hash"] for item in translation.items if item.record["type"] == "lesson"}
    gone = 0
    for namespace, subject in sorted(entities):
        rows = Lesson.objects.filter(
            host__name=host,
            namespace=namespace,
            subject=subject,
            status=Lesson.Status.LIVE,
            decided_at__isnull=True,
        ).exclude(hash__in=sent)
        for lesson in rows.order_by("id"):
            gone += 1
            record = stored_lesson_record(lesson, status=Lesson.Status.RETRACTED)
            translation.add(f"{namespace}/{subject}: lesson {hash8(lesson.hash)}", record)
    translation.count(FORGOTTEN, gone)


def _held_consolidations(host: str, translation) -> None:
    """A consolidation the dashboard approved is created there under its own content address; once a
    host applies it, areev writes the same lesson under areev's hash. That grain is the dashboard's
    lesson, not a second one: it is dropped, and what names it (a member's ``superseded_by``, a
    verdict) is pointed at the dashboard's lesson instead."""
    drafts = Draft.objects.filter(
        host__name=host, status=Draft.Status.APPROVED, created_lesson__isnull=False
    ).select_related("created_lesson")
    known = {
        (d.namespace, d.subject, normalize(d.text), tuple(sorted(d.supersedes))): d.created_lesson.hash
        for d in drafts
    }
    alias: dict[str, str] = {}
    for item in translation.items:
        r = item.record
        if r["type"] == "lesson" and r.get("kind") == "consolidation":
            key = (
                r["namespace"],
                r["subject"],
                normalize(r["text"]),
                tuple(sorted(r.get("consolidates", ()))),
            )
            if key in known and known[key] != r["hash"]:
                alias[r["hash"]] = known[key]
    if not alias:
        translation.count(HELD_CONSOLIDATIONS, 0)
        return
    kept = []
    for item in translation.items:
        r = item.record
        if r["type"] == "lesson" and r["hash"] in alias:
            continue
        if r.get("superseded_by") in alias:
            r["superseded_by"] = alias[r["superseded_by"]]
        if r["type"] in ("verdict", "exposure") and r.get("lesson") in alias:
            r["lesson"] = alias[r["lesson"]]
        kept.append(item)
    translation.items = kept
    translation.count(HELD_CONSOLIDATIONS, len(alias))


def sync_memory(*, path: Path, host: str, dry_run: bool, triggered_by: str | None = None) -> SyncResult:
    """Read ``path`` after the stored cursor, ingest what changed, and move the cursor (not on a dry run).

    The stored cursor holds only while the file has the op it was read up to (``AreevCursor.op_mark``);
    otherwise the file is another memory at the same path and it is read in full (``replaced_after``).
    Raises ``EngineMissing`` / ``EngineError`` (lessons.importers.areev_engine) before writing anything.
    """
    memory_path = str(Path(path).resolve())
    cursor = AreevCursor.objects.filter(host__name=host, memory_path=memory_path).first()
    after = cursor.op_seq if cursor else 0
    replaced_after = 0
    with Memory(Path(memory_path), actor=SYNC_ACTOR, read_only=True) as mem:
        if after and op_mark(mem, after) != cursor.op_mark:
            replaced_after, after = after, 0
        read = read_memory(
            mem, after=after, stored_entities=_stored_entities(host), triggered_by=triggered_by
        )
        mark = op_mark(mem, read.cursor)
    translation = areev.empty_translation()
    untimed: list[areev.Untimed] = []
    areev.translate_objects(read.objects, translation=translation, mapping=read.mapping, untimed=untimed)
    areev.settle(translation, untimed=untimed, member_times=areev_member_times(host))
    _held_consolidations(host, translation)
    _forgotten(host, translation, read.entities)
    prepared = areev_finish(host, translation, name=f"{Path(memory_path).name} (areev)")
    with transaction.atomic():
        result = execute(prepared, dry_run=dry_run)
        if not dry_run:
            host_row, _ = Host.objects.get_or_create(name=host)
            AreevCursor.objects.update_or_create(
                host=host_row,
                memory_path=memory_path,
                defaults={"op_seq": read.cursor, "op_mark": mark, "synced_at": timezone.now()},
            )
    return SyncResult(
        result=result,
        after=after,
        cursor=read.cursor,
        changes=read.changes,
        replaced_after=replaced_after,
    )
