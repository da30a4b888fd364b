"""The references of an ingest's write phase: verdicts, exposures, corrections and drafts, resolved
against the batch and the database. lessons/ingest/passes.py; docs/interchange.md."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from lessons.core.interchange import (
    CorrectionRecord,
    DraftRecord,
    ExposureRecord,
    Record,
    VerdictRecord,
)
from lessons.core.recurrence import current_version, lesson_key
from lessons.core.text import from_ms, hash8, sha256_hex, text_hash
from lessons.ingest.lesson_pass import host_row
from lessons.ingest.shown_texts import ShownTextItem, shown_texts_keep
from lessons.ingest.state import Entry, IngestState, reject
from lessons.ingest.writer import RowKind, Table, insert_new_rows
from lessons.models import Correction, Draft, Exposure, Host, Lesson, Verdict
from lessons.recurrence import first_ingest
from lessons.recurrence.versions import EpochMs
from lessons.services.principals import draft_principals
from lessons.services.verdicts import lesson_latest_verdict_refresh


@dataclass(frozen=True, slots=True)
class _Stored:
    """What reference resolution needs of a stored lesson version (not a whole ``Lesson`` row)."""

    id: int
    host_id: int
    hash: str
    namespace: str
    subject: str
    text_hash: str
    status: str
    created_at_ms: int  # epoch milliseconds, UTC
    store: str | None
    lesson_id: str | None
    key: str  # its recurrence key (``key_of``), made once: every exposure of the version needs it

    @property
    def is_live(self) -> bool:
        return self.status == Lesson.Status.LIVE

    @classmethod
    def of(cls, row: tuple) -> _Stored:
        """A row of ``_STORED_FIELDS``."""
        digest, store, lesson_id = row[2], row[8], row[9]
        return cls(*row, lesson_key(hash=digest, store=store, lesson_id=lesson_id))


_STORED_FIELDS = (
    "id",
    "host_id",
    "hash",
    "namespace",
    "subject",
    "text_hash",
    "status",
    EpochMs("created_at"),
    "store",
    "lesson_id",
)
RESOLVER_CACHE = 200_000  # lessons remembered across chunks before the cache starts afresh


class Resolver:
    """Looks up the lessons the reference records refer to: per chunk, one query per host and reference
    kind for what earlier chunks did not already find. The references pass writes no lesson, so what was
    found, or found missing, is remembered across chunks (between a sliced write's slices only a
    reviewer's status change can commit; a reference then still names the version it named when read)."""

    def __init__(self, state: IngestState):
        self.state = state
        self.by_hash: dict[tuple[str, str], _Stored | None] = {}
        self.versions: dict[tuple[str, str, str], list[_Stored]] = {}

    def load(self, records: Iterable[Record]) -> None:
        """Fetch what ``records`` refer to that is not known yet."""
        if len(self.by_hash) + len(self.versions) > RESOLVER_CACHE:
            self.by_hash.clear()
            self.versions.clear()
        hashes: dict[str, set[str]] = defaultdict(set)
        ids: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for r in records:
            ref = getattr(r, "lesson", None)
            if ref is not None:
                if ref.hash:
                    if (r.host, ref.hash) not in self.by_hash:
                        hashes[r.host].add(ref.hash)
                elif (r.host, ref.store, ref.lesson_id) not in self.versions:
                    ids[r.host].add((ref.store, ref.lesson_id))
            if isinstance(r, DraftRecord):
                hashes[r.host].update(h for h in r.supersedes if (r.host, h) not in self.by_hash)
        state = self.state
        for host_name in set(hashes) | set(ids):
            host = state.hosts.get(host_name) or Host.objects.filter(name=host_name).first()
            if host is None:
                self.by_hash.update(dict.fromkeys(((host_name, h) for h in hashes[host_name]), None))
                self.versions.update({(host_name, *pair): [] for pair in ids[host_name]})
                continue
            state.hosts[host_name] = host
            wanted = hashes[host_name]
            if wanted:
                self.by_hash.update(dict.fromkeys(((host_name, h) for h in wanted), None))
                for row in Lesson.objects.filter(host=host, hash__in=list(wanted)).values_list(
                    *_STORED_FIELDS
                ):
                    self.by_hash[(host_name, row[2])] = _Stored.of(row)
            pairs = ids[host_name]
            if pairs:
                found: dict[tuple[str, str, str], list[_Stored]] = {(host_name, *pair): [] for pair in pairs}
                # By store too, so that SQLite searches lesson_store_id (host, store, lesson_id): by host and
                # lesson_id alone it walked every lesson of the host for each chunk (a reference's store is
                # never empty; versions of other stores are found by their own references).
                rows = Lesson.objects.filter(
                    host=host,
                    store__in=sorted({store for store, _lid in pairs}),
                    lesson_id__in=sorted({lid for _store, lid in pairs}),
                ).values_list(*_STORED_FIELDS)
                for row in rows:
                    stored = _Stored.of(row)
                    found.setdefault((host_name, stored.store, stored.lesson_id), []).append(stored)
                for versions in found.values():
                    versions.sort(key=lambda v: (v.created_at_ms, v.hash))
                self.versions.update(found)

    def lesson(self, host: str, ref) -> _Stored | None:
        """The version a verdict names: by hash; by store + id the live version, else the newest."""
        if ref.hash:
            return self.by_hash.get((host, ref.hash))
        versions = self.versions.get((host, ref.store, ref.lesson_id))
        if not versions:
            return None
        return current_version(versions, live=lambda v: v.is_live, newest=lambda v: (v.created_at_ms, v.hash))

    def version_at(self, host: str, ref, shown_at_ms: int) -> _Stored | None:
        """The version current at ``shown_at``: the newest created at or before it, else the current one."""
        if ref.hash:
            return self.by_hash.get((host, ref.hash))
        versions = self.versions.get((host, ref.store, ref.lesson_id)) or []
        earlier = [v for v in versions if v.created_at_ms <= shown_at_ms]
        return earlier[-1] if earlier else self.lesson(host, ref)

    def same_key_with_text(self, host: str, anchor: _Stored, digest: str) -> _Stored | None:
        if anchor.lesson_id is None:
            return anchor if anchor.text_hash == digest else None
        for v in self.versions.get((host, anchor.store, anchor.lesson_id), []):
            if v.text_hash == digest:
                return v
        return anchor if anchor.text_hash == digest else None


def key_digest(*parts: object) -> str:
    return sha256_hex("\u001f".join("" if p is None else str(p) for p in parts))


def _exposure_key(session: str, lkey: str, digest: str, shown_at_ms: int) -> str:
    """``key_digest(session, lkey, digest, shown_at_ms)`` (none of them None), without the generic join."""
    return sha256_hex(f"{session}\u001f{lkey}\u001f{digest}\u001f{shown_at_ms}")


NO_LESSON = "no {ref} on host {host} in this batch or the database"


def apply_references(state: IngestState, resolver: Resolver, chunk: list[Entry]) -> None:
    resolver.load(r for *_rest, r in chunk)
    verdicts, exposures, corrections = [], [], []
    texts: list[ShownTextItem] = []
    for index, number, _done, record in chunk:
        if isinstance(record, VerdictRecord):
            lesson = resolver.lesson(record.host, record.lesson)
            if lesson is None:
                message = NO_LESSON.format(ref=record.lesson.describe(), host=record.host)
                reject(state, index, number, "verdict", "verdict.lesson", message)
                continue
            key = key_digest(record.metric, record.horizon_ms, record.measured_at_ms)
            verdicts.append((lesson, key, record))
            if state.sliced:  # every entity the batch names (module docstring, "Slices")
                state.counts.add(lesson.host_id, lesson.namespace, lesson.subject)
        elif isinstance(record, ExposureRecord):
            lesson = resolver.version_at(record.host, record.lesson, record.shown_at_ms)
            if lesson is None:
                message = NO_LESSON.format(ref=record.lesson.describe(), host=record.host)
                reject(state, index, number, "exposure", "exposure.lesson", message)
                continue
            digest = record.text_hash or lesson.text_hash
            shown = resolver.same_key_with_text(record.host, lesson, digest)
            lkey = lesson.key
            key = _exposure_key(record.session, lkey, digest, record.shown_at_ms)
            exposures.append((lesson.host_id, shown, lkey, digest, key, record))
            if shown is None and record.text is not None:
                texts.append(ShownTextItem(lesson.host_id, lkey, digest, record.text, record.session))
        elif isinstance(record, CorrectionRecord):
            corrections.append((host_row(state, record.host), key_digest(record.identity), record))
        elif isinstance(record, DraftRecord):
            _apply_draft(state, resolver, index, number, record)
    first = first_ingest.running()  # a host's first ingest: attributed while its rows are written
    if first is not None:
        first.begin_chunk(exposures, corrections)
    _write_verdicts(state, verdicts)
    new_exposures = _write_exposures(state, exposures)
    state.changes.sessions.update(shown_texts_keep(texts))
    new_corrections = _write_corrections(state, corrections)
    if first is not None:
        first.feed(new_exposures, new_corrections)


def _verdict_row(item: tuple[_Stored, str, VerdictRecord]) -> tuple:
    lesson, key, record = item
    return (
        lesson.host_id,
        lesson.id,
        key,
        record.verdict,
        record.metric,
        record.baseline,
        record.current,
        record.horizon_ms,
        record.measured_at_ms,
    )


def _exposure_row(item: tuple) -> tuple:
    host_id, shown, lkey, digest, key, record = item
    return (
        host_id,
        record.session,
        lkey,
        shown.id if shown is not None else None,
        digest,
        record.shown_at_ms,
        record.tier,
        key,
    )


def _correction_row(item: tuple[Host, str, CorrectionRecord]) -> tuple:
    host, key, record = item
    return (
        host.id,
        record.session,
        record.id,
        key,
        record.kind,
        record.text,
        text_hash(record.text),
        record.corrected_at_ms,
        record.turn_started_at_ms,
    )


VERDICT_TABLE = Table(
    model=Verdict,
    fields=(
        "host_id",
        "lesson_id",
        "key",
        "verdict",
        "metric",
        "baseline",
        "current",
        "horizon_ms",
        "measured_at",
    ),
)
EXPOSURE_TABLE = Table(
    model=Exposure,
    fields=("host_id", "session", "lesson_key", "lesson_id", "text_hash", "shown_at", "tier", "key"),
)
CORRECTION_TABLE = Table(
    model=Correction,
    fields=(
        "host_id",
        "session",
        "ext_id",
        "key",
        "kind",
        "text",
        "text_hash",
        "corrected_at",
        "turn_started_at",
    ),
)
# Verdicts are identified per lesson, exposures and corrections per host (by their ``key`` digest).
VERDICT_ROWS = RowKind(rtype="verdict", table=VERDICT_TABLE, scope="lesson_id", build=_verdict_row)
EXPOSURE_ROWS = RowKind(rtype="exposure", table=EXPOSURE_TABLE, scope="host_id", build=_exposure_row)
CORRECTION_ROWS = RowKind(rtype="correction", table=CORRECTION_TABLE, scope="host_id", build=_correction_row)


def _write_verdicts(state: IngestState, items: list[tuple[_Stored, str, VerdictRecord]]) -> None:
    rows = [(lesson.id, key, (lesson, key, record)) for lesson, key, record in items]
    new = insert_new_rows(report=state.report, kind=VERDICT_ROWS, items=rows)
    lesson_latest_verdict_refresh(lesson_ids=[lesson.id for lesson, _k, _r in new], counts=state.counts)


def _write_exposures(state: IngestState, items: list) -> list:
    """Insert the exposures of ``items`` not stored yet; returns those items (``insert_new_rows``)."""
    rows = [(item[0], item[4], item) for item in items]  # (host_id, key, item)
    new = insert_new_rows(report=state.report, kind=EXPOSURE_ROWS, items=rows)
    # Sliced: every session the batch names, new rows or not, so that a run after a stop refreshes the
    # entity counts its attributions move (module docstring, "Slices").
    noted = items if state.sliced else new
    state.changes.sessions.update((host_id, record.session) for host_id, *_rest, record in noted)
    return new


def _write_corrections(
    state: IngestState, items: list[tuple[Host, str, CorrectionRecord]]
) -> list[tuple[Host, str, CorrectionRecord]]:
    """Insert the corrections of ``items`` not stored yet; returns those items (``insert_new_rows``)."""
    rows = [(host.id, key, (host, key, record)) for host, key, record in items]
    new = insert_new_rows(report=state.report, kind=CORRECTION_ROWS, items=rows)
    noted = items if state.sliced else new  # sliced: every session the batch names (_write_exposures)
    state.changes.sessions.update((host.id, record.session) for host, _k, record in noted)
    return new


def supersedes_problem(record: DraftRecord, lesson: Callable[[str], object | None]) -> tuple[str, str] | None:
    """The first of the draft's ``supersedes`` that names no lesson (``lesson(hash)`` gives None) or a
    lesson of another entity, as ``(field, message)``; None when all are fine."""
    for position, h in enumerate(record.supersedes):
        found = lesson(h)
        if found is None:
            problem = f"no lesson {h} on host {record.host} in this batch or the database"
        elif (found.namespace, found.subject) != (record.namespace, record.subject):
            problem = (
                f"lesson {hash8(h)} is on entity {found.namespace}/{found.subject}, "
                f"not the draft's {record.namespace}/{record.subject}"
            )
        else:
            continue
        return f"draft.supersedes[{position}]", problem
    return None


def _apply_draft(
    state: IngestState, resolver: Resolver, index: int, number: int, record: DraftRecord
) -> None:
    problem = supersedes_problem(record, lambda h: resolver.by_hash.get((record.host, h)))
    if problem is not None:
        reject(state, index, number, "draft", *problem)
        return
    host = host_row(state, record.host)
    values = {
        "namespace": record.namespace,
        "subject": record.subject,
        "text": record.text,
        "supersedes": list(record.supersedes),
        "drafted_by": record.drafted_by,
        "triggered_by": record.triggered_by,
        "gate_ground": record.gate_ground,
        "gate_verify": record.gate_verify,
        "confidence": record.confidence,
        "created_at": from_ms(record.created_at_ms),
    }
    draft = Draft.objects.filter(host=host, ext_id=record.identity).first()
    state.counts.add(host.id, record.namespace, record.subject)
    if draft is None:
        Draft.objects.create(host=host, ext_id=record.identity, **values, **draft_principals(record=record))
        state.report.count("draft", "created")
        return
    changed = [f for f, v in values.items() if getattr(draft, f) != v]
    if not changed:
        state.report.count("draft", "unchanged")
    elif draft.status != Draft.Status.PENDING:
        state.report.count("draft", "held")
        state.report.add_held(
            f"draft {draft.ext_id} on {record.host}: kept as {draft.status} by a reviewer's decision"
        )
    else:
        state.counts.add(host.id, draft.namespace, draft.subject)  # its entity before the update
        for f in changed:
            setattr(draft, f, values[f])
        draft.save(update_fields=changed)
        state.report.count("draft", "updated")
