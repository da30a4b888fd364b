"""The check before a sliced write (SQLite background jobs): every refusal the write phase would make, found
by reading only, so a refused batch writes nothing. lessons/ingest/passes.py, "Slices"."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from lessons.core.interchange import (
    DraftRecord,
    ExposureRecord,
    LessonRecord,
    VerdictRecord,
)
from lessons.ingest.lesson_pass import content_of, refuse_other_content
from lessons.ingest.reference_pass import NO_LESSON, key_digest, supersedes_problem
from lessons.ingest.state import Entry, IngestState, Known, reject
from lessons.models import Host, Lesson


def _content_digest(x: Lesson | LessonRecord) -> str:
    return key_digest(*content_of(x))


class _Precheck:
    """The refusals of the write phase, found by reading only (``precheck``). The rules are the write
    phase's own: ``apply_lessons`` (a hash naming other content, in the batch or stored),
    ``apply_references`` (a verdict or exposure naming no lesson) and ``_apply_draft`` (its
    ``supersedes``); a test holds the two to the same errors on random batches.

    ``new`` remembers the batch's own new lessons (entity and content digest, by host and hash),
    ``ids_of`` the ``(store, lesson_id)`` the last accepted lesson record of each hash gives (new or stored:
    the write phase writes it; a later record of the same hash overwrites it) and ``new_ids`` those as
    ``(host, store, lesson_id)`` once every lesson chunk is read (``lessons_done``): what the references
    pass finds written. Stored lessons are read per chunk."""

    def __init__(self, state: IngestState):
        self.state = state
        self.host_ids: dict[str, int | None] = {}
        self.new: dict[tuple[str, str], Known] = {}
        self.ids_of: dict[tuple[str, str], tuple[str | None, str | None]] = {}
        self.new_ids: set[tuple[str, str | None, str]] = set()

    def host_id(self, name: str) -> int | None:
        if name not in self.host_ids:
            self.host_ids[name] = Host.objects.filter(name=name).values_list("id", flat=True).first()
        return self.host_ids[name]

    def stored(self, host: str, hashes: Iterable[str]) -> dict[str, Known]:
        """The stored lessons of ``host`` among ``hashes``, by hash."""
        wanted = [h for h in set(hashes) if (host, h) not in self.new]
        host_id = self.host_id(host)
        if not wanted or host_id is None:
            return {}
        rows = Lesson.objects.filter(host_id=host_id, hash__in=wanted).values_list(
            "hash", "namespace", "subject", "text"
        )
        return {h: Known(ns, subject, key_digest(ns, subject, text)) for h, ns, subject, text in rows}

    def stored_ids(self, host: str, pairs: set[tuple[str | None, str]]) -> set[tuple[str | None, str]]:
        """The ``(store, lesson_id)`` of ``pairs`` that name a stored lesson of ``host``."""
        host_id = self.host_id(host)
        if not pairs or host_id is None:
            return set()
        rows = Lesson.objects.filter(host_id=host_id, lesson_id__in=sorted({lid for _s, lid in pairs}))
        # a stored lesson the batch gives another store or id is found by those (in new_ids) instead
        return {
            self.ids_of.get((host, h), (store, lid))
            for h, store, lid in rows.values_list("hash", "store", "lesson_id")
        } & pairs

    def lessons(self, chunk: list[Entry]) -> None:
        state = self.state
        by_host: dict[str, dict[str, LessonRecord]] = defaultdict(dict)
        where: dict[tuple[str, str], tuple[int, int]] = {}
        for index, number, _done, record in chunk:
            earlier = by_host[record.host].get(record.hash)
            if earlier is not None and content_of(earlier) != content_of(record):
                refuse_other_content(state, (index, number), record, earlier)
                continue
            by_host[record.host][record.hash] = record
            where[(record.host, record.hash)] = (index, number)
        for host, records in by_host.items():
            stored = self.stored(host, records)
            for h, record in records.items():
                holder = self.new.get((host, h)) or stored.get(h)
                if holder is not None and holder.content != _content_digest(record):
                    refuse_other_content(state, where[(host, h)], record, holder)
                    continue
                if holder is None:
                    self.new[(host, h)] = Known(record.namespace, record.subject, _content_digest(record))
                self.ids_of[(host, h)] = (record.store, record.lesson_id)

    def lessons_done(self) -> None:
        """After the last lesson chunk: ``new_ids`` as the write phase leaves them, each lesson with the ids
        of the last record that gave its hash (a lesson given other ids by a later chunk keeps only
        those)."""
        self.new_ids = {
            (host, store, lid) for (host, _h), (store, lid) in self.ids_of.items() if lid is not None
        }

    def references(self, chunk: list[Entry]) -> None:
        hashes: dict[str, set[str]] = defaultdict(set)
        ids: dict[str, set[tuple[str | None, str]]] = defaultdict(set)
        for *_where, r in chunk:
            ref = getattr(r, "lesson", None)
            if ref is not None and ref.hash:
                hashes[r.host].add(ref.hash)
            elif ref is not None and (r.host, ref.store, ref.lesson_id) not in self.new_ids:
                ids[r.host].add((ref.store, ref.lesson_id))
            if isinstance(r, DraftRecord):
                hashes[r.host].update(r.supersedes)
        known = {host: self.stored(host, wanted) for host, wanted in hashes.items()}
        found_ids = {host: self.stored_ids(host, pairs) for host, pairs in ids.items()}

        def lesson(host: str, h: str) -> Known | None:
            return self.new.get((host, h)) or known.get(host, {}).get(h)

        for index, number, _done, r in chunk:
            if isinstance(r, VerdictRecord | ExposureRecord):
                ref = r.lesson
                if ref.hash:
                    exists = lesson(r.host, ref.hash) is not None
                else:
                    pair = (ref.store, ref.lesson_id)
                    exists = (r.host, *pair) in self.new_ids or pair in found_ids.get(r.host, ())
                if not exists:
                    message = NO_LESSON.format(ref=ref.describe(), host=r.host)
                    reject(self.state, index, number, r.type, f"{r.type}.lesson", message)
            elif isinstance(r, DraftRecord):
                problem = supersedes_problem(r, lambda h, host=r.host: lesson(host, h))
                if problem is not None:
                    reject(self.state, index, number, "draft", *problem)


def precheck(state: IngestState) -> bool:
    """Before a sliced write: add to the report every refusal the write phase would make, reading only
    (no transaction, no lock); True when there is any (then nothing is to be written)."""
    before = state.report.error_count
    check = _Precheck(state)
    for chunk in state.lessons.chunks():
        check.lessons(chunk)
    check.lessons_done()
    for chunk in state.references.chunks():
        check.references(chunk)
    return state.report.error_count > before
