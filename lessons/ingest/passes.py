"""Ingesting interchange records into the database. docs/interchange.md; README.md, "Commands" (``ingest``).

Two phases:
1. **validate**, outside any transaction (no write lock, no row lock): every line is parsed ONCE into a
   typed record; host records are kept in order, lesson records and reference records (``verdict``,
   ``exposure``, ``correction``, ``draft``) are spooled, in chunks, to two temporary files with
   their source and line. A batch this phase refuses (an invalid line without ``skip_invalid``; with
   ``only_host``, a record of another host) ends here: nothing is written, no write transaction opened,
   and its report has the lines' problems only. A dry run goes on (rolled back), so its report also has
   the unresolved references and what the valid lines would do.
2. **write**, one transaction: the host records, then the lessons (``_pass_lessons``, in chunks of
   ``CHUNK``), then the references (``_pass_references``), resolved against the batch (already written)
   and the database; then one recurrence refresh. The rows go in with one ``executemany`` per chunk and
   table (``lessons.ingest.writer``). Existing lessons are read without locks; a status change is a
   conditional update that a reviewer's decision wins (``lesson_status_set_undecided``). A deadlock or a
   serialization failure rolls the write phase back and runs it again from the spools, up to
   ``WRITE_ATTEMPTS`` times with backoff; if it persists, ``IngestBusy`` says so in one line.
**Validation** in two processes (``workers=2``: ``manage.py ingest`` on a machine with two cores): a file
source of at least ``PARALLEL_BYTES`` is cut at the first line that starts after its middle, and a forked
child validates the lines from there into spools of its own while this process validates those before
(``lessons.ingest.forked``; the child never touches the database). Its report, host records and spooled
records then follow this part's, so that what comes out is what one process reading every line gives:
the same counts, errors in line order (the first ``MAX_ERRORS_IN_FULL``), the same records in the same
order, cut into the same chunks (``_Spool.chunks``: the cut is no chunk boundary). A child that fails
leaves its part to this process. Background jobs and the API validate in one process (a web or worker
process may run threads, which a fork does not take along). With ``workers=2`` a batch of ``WORKER_RECORDS``
reference records or more also gets a worker for its recurrence refresh, forked before the write phase:
a host rebuilt whole is attributed there, chunk by chunk, while this process reads and stores
(``lessons.recurrence.attributing``).

A batch is atomic: an invalid line rolls everything back unless ``skip_invalid``; ``dry_run`` always rolls
back. Memory stays bounded by the chunk size (and the resolver's cache), not the input size.

**Slices** (``sliced=True``: a background job on SQLite, issue 13). SQLite has one writer, so one
transaction for a large batch would make every reviewer's decision wait for the whole write phase. A
sliced write phase commits about every ``settings.INGEST_SLICE_MS`` (at a chunk's end, with that slice's
recurrence refresh, so recurrence is always that of the rows stored) and pauses ``SLICE_PAUSE_SECONDS``
before the next slice, long enough for a waiting writer's busy handler to take the lock. The entity
counts (``EntityCount``) follow once the rows are in, in slices of entities: every entity the batch names
(its lessons' and their keys' other versions', its verdicts' lessons', its drafts', and those whose
members its exposures' and corrections' sessions were shown: those sessions are attributed again, new
rows or not), changed or not, so that a job run again after a stop completes the counts of what the
stopped attempt wrote. Until then the queue's counts of those entities are the ones from before the job
(a decision refreshes its own entity's at once). Nothing is written for a refused batch all the same:
before the first slice, ``_precheck`` finds, reading only, every refusal the write phase would make (a
hash naming other content, a reference to no lesson, a draft's ``supersedes``), and a batch it refuses is
answered like one the write phase refused. The write is idempotent (rows are identified by content), so a
job stopped between slices completes when it runs again. ``IngestIncomplete`` says when a failure stopped
it after a slice was committed.
"""

from __future__ import annotations

import contextlib
import copy
import json
import marshal
import random
import struct
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DatabaseError, OperationalError, connection, transaction

from lessons.core.interchange import (
    LESSON_GIVEN_FIELDS,
    CorrectionRecord,
    DraftRecord,
    ExposureRecord,
    HostRecord,
    LessonRecord,
    LessonRef,
    Record,
    RecordError,
    VerdictRecord,
    parse_line,
)
from lessons.core.piles import entity_label
from lessons.core.recurrence import current_version, lesson_key
from lessons.core.text import from_ms, hash8, sha256_hex, text_hash
from lessons.ingest.forked import Forked, ForkedFailed, can_fork
from lessons.ingest.memory import collector_paused, releasing
from lessons.ingest.reading import Source, iter_lines, iter_lines_from, iter_lines_until, line_start_after
from lessons.ingest.report import ImportReport, LineError
from lessons.ingest.shown_texts import ShownTextItem, shown_texts_keep
from lessons.ingest.writer import RowKind, Table, indexes_built_after, insert_new_rows
from lessons.models import Correction, Draft, Exposure, Host, Lesson, Verdict
from lessons.recurrence.attributing import recurrence_worker
from lessons.recurrence.refresh import RecurrenceChanges, recurrence_changes_refresh
from lessons.recurrence.versions import EpochMs, key_of
from lessons.services.embeddings import facts_deferred
from lessons.services.entity_counts import (
    CountChanges,
    entity_counts_budget_changed,
    entity_counts_recount,
    entity_counts_refresh,
)
from lessons.services.principals import draft_principals
from lessons.services.status import lesson_status_set_undecided
from lessons.services.verdicts import lesson_latest_verdict_refresh
from lessons.signals import host_evidence_changed

CHUNK = 500  # records per chunk: each chunk's lookups stay under SQLite's 999 parameters
HASH_CONTENT_DIFFERS = (
    "hash {short}… on host {host} already names a lesson on {entity} with other content; "
    "a hash names one namespace, subject and text"
)
OUTSIDE_HOST = "host {name} is not {only}: this ingest may only write host {only}"
WRITE_ATTEMPTS = 4  # the write phase runs at most this often when the database reports a deadlock
RETRY_BASE_SECONDS = 0.2  # backoff before attempt n: RETRY_BASE_SECONDS * 2**(n-1), jittered
BUSY = (
    "ingest not written: the database kept reporting {what} after {n} attempts "
    "(other writers hold the same rows); nothing was kept, send the batch again"
)
Progress = Callable[[str, int], None]  # (phase, bytes read so far in this phase's current source)
# A spooled record: (source index, line number, bytes read in its source up to this line, record).
Entry = tuple[int, int, int, Record]


def checkpoint(name: str) -> None:
    """A named point of the ingest, a no-op: ``"validated"`` (validation done, no transaction open yet),
    ``"lessons read"`` (a chunk's stored lessons read, nothing of the chunk written yet), ``"lessons
    written"`` (the lessons pass done, the references pass not started). Concurrency tests replace it to
    run another connection at exactly that point instead of sleeping."""


class IngestBusy(OperationalError):
    """The write phase kept failing on a deadlock, a serialization failure or a locked SQLite file
    (``WRITE_ATTEMPTS`` times): nothing was written. ``str()`` is the one line to show. An
    ``OperationalError``, so the API answers it as a busy database (503 with ``Retry-After``)."""


class IngestIncomplete(Exception):
    """A sliced write phase failed after committing ``slices`` of its slices (``__cause__``: the failure):
    part of the batch is stored. The batch is idempotent, so sending or running it again completes it."""

    def __init__(self, slices: int):
        super().__init__(f"{slices} slice(s) committed")
        self.slices = slices


class _Rollback(Exception):
    """Raised inside the transaction to undo a refused batch or a dry run."""


# The spool's form of a record: its class's position in _SPOOLED and its fields as a plain tuple (a
# LessonRef field as a plain tuple too), written with ``marshal``. Pickling the named tuples themselves
# (one Python-level reduce per record and per LessonRef) cost about 3 ms per 500 records written and
# read back; plain tuples through marshal about 1.3 ms, rebuilding the records included.
_SPOOLED: tuple[type, ...] = (
    HostRecord,
    LessonRecord,
    VerdictRecord,
    ExposureRecord,
    CorrectionRecord,
    DraftRecord,
)
_CODE = {cls: code for code, cls in enumerate(_SPOOLED)}
_REF_AT = {code: cls._fields.index("lesson") for code, cls in enumerate(_SPOOLED) if "lesson" in cls._fields}
_LENGTH = struct.Struct("<I")
_new = tuple.__new__


def _spooled(entry: Entry) -> tuple:
    index, number, done, record = entry
    code = _CODE[type(record)]
    at = _REF_AT.get(code)
    if at is None:
        return (index, number, done, code, tuple(record))
    ref = record[at]
    return (index, number, done, code, (*record[:at], None if ref is None else tuple(ref), *record[at + 1 :]))


def _unspooled(row: tuple) -> Entry:
    index, number, done, code, fields = row
    at = _REF_AT.get(code)
    if at is not None:
        ref = fields[at]
        fields = (*fields[:at], None if ref is None else _new(LessonRef, ref), *fields[at + 1 :])
    return (index, number, done, _new(_SPOOLED[code], fields))


class _Spool:
    """Records of one kind, written to a temporary file in chunks of ``CHUNK`` (as plain tuples, see
    ``_SPOOLED``): read back by ``chunks()`` as the same records, without parsing their lines again and
    without holding the batch in memory."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()
        self._before: list[_Spool] = []  # spools whose chunks come first (``extend``)
        self._chunk: list[tuple] = []
        self.count = 0

    def add(self, entry: Entry) -> None:
        self._chunk.append(_spooled(entry))
        self.count += 1
        if len(self._chunk) >= CHUNK:
            self._flush()

    def flush(self) -> None:
        """Write the chunk in hand to the file (a forked validation's spool, before its process ends)."""
        self._flush()
        self._file.flush()

    def _flush(self) -> None:
        if self._chunk:
            data = marshal.dumps(self._chunk)
            self._file.write(_LENGTH.pack(len(data)))
            self._file.write(data)
            self._chunk = []

    def extend(self, other: _Spool, count: int) -> None:
        """Take ``other``'s ``count`` entries (written to its file by another process) after this spool's:
        this spool's chunks so far, then ``other``'s, then what is added after."""
        self._flush()
        head = _Spool.__new__(_Spool)
        head._file, head._before, head._chunk, head.count = self._file, self._before, [], self.count
        other.count = count
        self._file, self._before = tempfile.TemporaryFile(), [head, other]
        self.count += count

    def chunks(self) -> Iterator[list[Entry]]:
        """Every chunk in the order added (each ``CHUNK`` entries but the last); may be read again.

        After ``extend`` the entries are cut into chunks as if they had all been added here: the write
        phase's outcome can depend on which records share a chunk (a lesson repeated within one chunk and
        across two are counted differently), so the cut between two processes' parts must not be one."""
        if not self._before:
            yield from self._own_chunks()
            return
        held: list[Entry] = []
        for chunk in self._segments():
            held.extend(chunk)
            while len(held) >= CHUNK:
                yield held[:CHUNK]
                held = held[CHUNK:]
        if held:
            yield held

    def _segments(self) -> Iterator[list[Entry]]:
        for spool in self._before:
            yield from spool._segments()
        yield from self._own_chunks()

    def _own_chunks(self) -> Iterator[list[Entry]]:
        self._flush()
        self._file.seek(0)
        while True:
            head = self._file.read(_LENGTH.size)
            if not head:
                return
            (size,) = _LENGTH.unpack(head)
            yield [_unspooled(row) for row in marshal.loads(self._file.read(size))]

    def close(self) -> None:
        for spool in self._before:
            spool.close()
        self._file.close()


@dataclass
class _State:
    report: ImportReport
    default_host: str | None
    sources: list[Source]
    only_host: str | None = None
    sliced: bool = False  # commit the write phase in slices (SQLite background jobs: module docstring)
    workers: int = 1  # processes validating a large file source (module docstring, "Validation")
    host_records: list[HostRecord] = field(default_factory=list)
    lessons: _Spool = field(default_factory=_Spool)
    references: _Spool = field(default_factory=_Spool)
    hosts: dict[str, Host] = field(default_factory=dict)
    created_in_batch: set[str] = field(default_factory=set)
    # Sliced: the last (phase, bytes) of the write phase, reported between slices (``_Slices.boundary``).
    progressed: tuple[str, int] | None = None
    # Sessions that gained exposures or corrections, and the lesson keys (docs/piles-and-recurrence.md,
    # "Recurrence") whose versions
    # were created or changed: only those need attributing again, not the whole host.
    changes: RecurrenceChanges = field(default_factory=RecurrenceChanges)
    # The entities whose counts (EntityCount) the batch may have moved: refreshed once, at its end.
    counts: CountChanges = field(default_factory=CountChanges)

    def reset_writes(self, validated: ImportReport) -> None:
        """Forget what a rolled-back write phase did: the report as validation left it, no cached rows."""
        self.report = copy.deepcopy(validated)
        self.hosts.clear()
        self.created_in_batch.clear()
        self.changes.clear()
        self.counts.clear()


# No reference cycles to collect in an ingest, millions of objects to walk (lessons.ingest.memory).
@collector_paused()
def ingest_sources(
    *,
    sources: list[Source],
    default_host: str | None = None,
    only_host: str | None = None,
    skip_invalid: bool = False,
    dry_run: bool = False,
    progress: Progress | None = None,
    sliced: bool = False,
    workers: int = 1,
) -> ImportReport:
    """Ingest interchange JSON Lines from ``sources``; returns the ``ImportReport``.

    Never raises for bad input: every invalid line is in ``report.errors`` (source, line, field,
    message), and with any error and no ``skip_invalid`` nothing is written. With ``only_host`` (a
    host-scoped API token), a valid record naming another host is an error of its line, listed in
    ``report.outside_host`` as ``"line N: host NAME"``, and nothing is written whatever
    ``skip_invalid`` says. A batch refused by validation never opens a write transaction (unless
    ``dry_run``, whose report says what the valid lines would do). Recurrence is
    refreshed once, inside the transaction. Raises ``IngestBusy`` (nothing written) when the database
    keeps reporting a deadlock or a locked file. docs/interchange.md.

    ``sliced`` (background jobs): on SQLite, and unless ``dry_run``, the write phase commits in slices
    (module docstring, "Slices"); elsewhere it is ignored. Raises ``IngestIncomplete`` when a sliced write
    fails after its first commit.

    ``workers`` (``manage.py ingest``: 2 on a machine with two cores or more): a large file source is
    validated in that many processes (module docstring, "Validation"); 1 everywhere else.
    """
    state = _State(
        report=ImportReport(dry_run=dry_run, skip_invalid=skip_invalid),
        default_host=default_host,
        only_host=only_host,
        sources=sources,
        sliced=sliced and connection.vendor == "sqlite" and not dry_run,
        workers=workers,
    )
    try:
        _pass_validate(state, progress)
        # Refused by validation: no write transaction (a dry run still resolves, to report it all).
        if state.report.outside_host_count or (state.report.error_count and not skip_invalid and not dry_run):
            return state.report
        if state.sliced and not skip_invalid and _precheck(state):
            return state.report  # refused, as the write phase would have refused it: nothing written
        validated = copy.deepcopy(state.report)
        checkpoint("validated")
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                _write_grouping_later(state, progress)
                if state.report.written:
                    host_evidence_changed.send(sender=ImportReport, hosts=sorted(state.hosts))
                break
            except DatabaseError as exc:
                what = _retryable(exc)
                if what is None:
                    raise
                state.reset_writes(validated)
                if attempt == WRITE_ATTEMPTS:
                    raise IngestBusy(BUSY.format(what=what, n=attempt)) from None
                delay = RETRY_BASE_SECONDS * 2 ** (attempt - 1)
                time.sleep(delay * (0.5 + random.random()))
        return state.report
    finally:
        state.lessons.close()
        state.references.close()


def _write_grouping_later(state: _State, progress: Progress | None) -> None:
    """``_write``; for a batch of ``settings.FACTS_DEFER_LESSONS`` lessons or more, with the piles whose
    texts are not encoded yet left not grouped (``facts_deferred``: 5-8 ms a text would make a bulk
    ingest several times slower) and a background regroup queued for each of their hosts once written
    (``lessons.tasks.regroup_pending``; ``manage.py piles --regroup`` does the same at once)."""
    if state.report.dry_run or state.lessons.count < settings.FACTS_DEFER_LESSONS:
        _write(state, progress)
        return
    with facts_deferred() as pending:
        _write(state, progress)
    if pending and state.report.written:
        from lessons.tasks import regroup_pending

        for host_id in sorted({host_id for host_id, _ns, _subj in pending}):
            regroup_pending.enqueue(host_id)
        state.report.notes.append(FACTS_LATER.format(piles=len(pending)))


def _write(state: _State, progress: Progress | None) -> None:
    """The write phase, in one transaction (rolled back for a dry run or a refused batch), or in slices."""
    report = state.report
    if state.sliced:
        _write_sliced(state, progress)
        return
    try:
        with recurrence_worker(_attribute_in_worker(state)), transaction.atomic():
            # A large batch's exposures and corrections are indexed once they are all in (SQLite), with the
            # page cache back at its size; the larger cache only while rows go in, the recurrence refresh
            # reads with its own memory.
            with _indexes_after_rows(state), _sqlite_page_cache(state.lessons.count + state.references.count):
                for record in state.host_records:
                    _apply_host(state, record)
                _pass_lessons(state, progress)
                checkpoint("lessons written")
                _pass_references(state, progress)
            if (report.error_count and not report.skip_invalid) or report.dry_run:
                raise _Rollback
            with releasing(_large_cache(state.lessons.count + state.references.count)):
                _refresh_derived(state)
            report.written = True
    except _Rollback:
        state.changes.clear()
        state.counts.clear()


FACTS_LATER = (
    "{piles} piles are grouped into facts by the background worker (manage.py db_worker); "
    "until then their pages work the facts out when shown"
)
WORKER_RECORDS = 20_000  # from this many reference records on, the refresh may attribute in a worker


def _attribute_in_worker(state: _State) -> bool:
    """Whether the write phase's recurrence refresh gets a forked worker for the attribution of a host
    rebuilt whole (``lessons.recurrence.attributing``): where validation may fork (``workers``, module
    docstring), for a batch of ``WORKER_RECORDS`` reference records or more that is to be written."""
    return state.workers > 1 and not state.report.dry_run and state.references.count >= WORKER_RECORDS


SLICE_PAUSE_SECONDS = 0.15  # between slices: longer than SQLite's longest busy-handler sleep (100 ms)


ENTITIES_PER_STEP = 10  # entity counts refreshed per step of a sliced write's last part


class _Slices:
    """The open transaction of a sliced write phase: ``boundary()`` (at a chunk's end) commits it once it
    has run ``settings.INGEST_SLICE_MS``, with the slice's recurrence refresh, pauses, and opens the next;
    ``counts()`` refreshes the noted entity counts the same way, ``ENTITIES_PER_STEP`` at a time.

    Progress (and with it a job's heartbeat) is reported after each commit, with no transaction open: a
    job's progress is written through a connection of its own that never waits for the lock, so inside a
    slice it could never be written, and a long write phase would look like a dead worker."""

    def __init__(self, state: _State, progress: Progress | None = None):
        self.state = state
        self.progress = progress
        self.seconds = settings.INGEST_SLICE_MS / 1000
        self.committed = 0
        # seconds of recurrence refresh per second of writing rows, as the last slice took: a slice writes
        # for seconds / (1 + ratio), so that with its refresh it holds the lock about ``seconds``
        self.ratio = 1.0
        self._atomic: transaction.Atomic | None = None
        self._started = 0.0

    def begin(self, *, wait: bool = False) -> None:
        """Open the next slice's transaction. With ``wait`` (every slice after the first; the first is
        retried by ``ingest_sources`` itself), another writer holding the lock past the busy timeout (a
        command's one-transaction ingest, a recount) is waited for as ``ingest_sources`` waits: up to
        ``WRITE_ATTEMPTS`` tries with backoff. Nothing is open between slices, so nothing is lost
        meanwhile; only then does the failure stop the job (``IngestIncomplete``)."""
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            atomic = transaction.atomic()
            try:
                atomic.__enter__()  # SQLite: BEGIN IMMEDIATE, which waits for the lock (busy timeout)
            except DatabaseError as exc:
                if not wait or _retryable(exc) is None or attempt == WRITE_ATTEMPTS:
                    raise
                time.sleep(RETRY_BASE_SECONDS * 2 ** (attempt - 1) * (0.5 + random.random()))
                continue
            break
        self._atomic = atomic
        self._started = time.monotonic()

    def commit(self) -> None:
        """The slice's recurrence refresh (the entities it moves go to ``state.counts``), then its commit."""
        written = time.monotonic()
        recurrence_changes_refresh(changes=self.state.changes, counts=self.state.counts)
        self.state.changes.clear()
        self.ratio = (time.monotonic() - written) / max(written - self._started, 0.001)
        atomic, self._atomic = self._atomic, None
        atomic.__exit__(None, None, None)
        self.committed += 1
        if self.progress is not None and self.state.progressed is not None:
            self.progress(*self.state.progressed)

    def rollback(self, exc: BaseException) -> None:
        if self._atomic is not None:
            atomic, self._atomic = self._atomic, None
            atomic.__exit__(type(exc), exc, exc.__traceback__)

    def boundary(self) -> None:
        if time.monotonic() - self._started < self.seconds / (1 + self.ratio):
            return
        self.commit()
        checkpoint("slice committed")
        time.sleep(SLICE_PAUSE_SECONDS)
        self.begin(wait=True)

    def counts(self) -> None:
        """The entity counts of ``state.counts`` in slices (a host to recount whole: one step), then clear."""
        counts = self.state.counts
        for host_id in sorted(counts.hosts | set(counts.entities)):
            if host_id in counts.hosts:
                entity_counts_recount(host=Host.objects.get(id=host_id))
                self.boundary()
                continue
            keys = sorted(counts.entities[host_id])
            for start in range(0, len(keys), ENTITIES_PER_STEP):
                entity_counts_refresh(host=host_id, keys=keys[start : start + ENTITIES_PER_STEP])
                self.boundary()
        counts.clear()


def _write_sliced(state: _State, progress: Progress | None) -> None:
    """The write phase as slices (module docstring, "Slices"): every slice's rows committed with their
    recurrence, then the entity counts. A failure rolls back the open slice; after a commit it is raised
    as ``IngestIncomplete`` (never retried here: the job says so)."""
    report = state.report
    slices = _Slices(state, progress)
    slices.begin()
    try:
        with _sqlite_page_cache(state.lessons.count + state.references.count):
            for record in state.host_records:
                _apply_host(state, record)
            _pass_lessons(state, progress, after_chunk=slices.boundary)
            checkpoint("lessons written")
            _pass_references(state, progress, after_chunk=slices.boundary)
        slices.commit()
        checkpoint("rows written")
        slices.begin(wait=True)
        slices.counts()
        slices.commit()
    except BaseException as exc:
        slices.rollback(exc)
        if slices.committed and isinstance(exc, Exception):
            raise IngestIncomplete(slices.committed) from exc
        raise
    report.written = True
    if report.error_count and not report.skip_invalid:
        # Refusals the check before the first slice did not see: another writer added a lesson meanwhile.
        report.notes.append(
            f"{report.error_count} line(s) were refused while the batch was being written (another writer "
            "changed the lessons they name meanwhile); the rest of the batch was written"
        )


INDEX_AFTER_ROWS = 50_000  # from this many reference records on, indexes may be made after the rows


def _indexes_after_rows(state: _State) -> contextlib.AbstractContextManager[None]:
    """``indexes_built_after`` for the exposures and corrections of a batch that is to be written (one
    transaction, never sliced: ``_write``); the reference records bound the rows either table gains."""
    if state.report.dry_run:  # rolled back whatever it finds: no index worth dropping
        return contextlib.nullcontext()
    return indexes_built_after((Exposure, Correction), rows=state.references.count, minimum=INDEX_AFTER_ROWS)


SQLITE_CACHE_KIB = 98_304  # SQLite's page cache during a large write phase (its default is 2,000 KiB)
SQLITE_CACHE_RECORDS = 10_000  # from this many records on


def _large_cache(records: int) -> bool:
    """Whether a write phase of ``records`` records runs with the larger page cache (SQLite)."""
    return connection.vendor == "sqlite" and records >= SQLITE_CACHE_RECORDS


@contextlib.contextmanager
def _sqlite_page_cache(records: int) -> Iterator[None]:
    """On SQLite, a larger page cache while the write phase of ``records`` records runs: the new rows land
    at random places of each index (the identity keys are digests), and with the default 2 MiB cache most
    of those index pages are read again from the file for every few rows. At 1,000,000 lines the
    exposures' indexes are about 100 MiB: 96 MiB took a fifth off the references pass against 32 MiB.
    The size is restored after; the recurrence refresh hands the pages back as SQLite writes them out
    (``lessons.ingest.memory``, within ``releasing``)."""
    if not _large_cache(records):
        yield
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA cache_size")
        before = cursor.fetchone()[0]
        cursor.execute(f"PRAGMA cache_size = -{SQLITE_CACHE_KIB}")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA cache_size = {int(before)}")


def _retryable(exc: DatabaseError) -> str | None:
    """What a failure worth retrying was ("a deadlock", ...), or None for any other database error."""
    code = getattr(exc.__cause__, "sqlstate", None) or getattr(exc.__cause__, "pgcode", None)
    if code == "40P01":
        return "a deadlock"
    if code == "40001":
        return "a serialization failure"
    if isinstance(exc, OperationalError) and "database is locked" in str(exc):
        return '"database is locked"'
    return None


def _refresh_derived(state: _State) -> None:
    """The one refresh of what the batch's rows derive: recurrence, then the entity counts of every
    entity the batch touched (lessons, statuses, verdicts, drafts) or whose recurring members moved.
    Last in the transaction, after every row lock the batch takes."""
    recurrence_changes_refresh(changes=state.changes, counts=state.counts)
    state.counts.apply()


def _peek_type(text: str) -> str | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value.get("type") if isinstance(value, dict) and isinstance(value.get("type"), str) else None


def _pass_validate(state: _State, progress: Progress | None) -> None:
    """Parse every line once: count it, report its errors, keep its record (host records in memory, the
    rest spooled). Reads no table and writes none. A large file source is validated in two processes
    when ``state.workers`` allows (module docstring, "Validation")."""
    for index, source in enumerate(state.sources):
        split = _split_at(source) if state.workers > 1 else None
        if split is None:
            done = _validate_lines(state, _own_part(state), index, iter_lines(source), 0, progress)
        else:
            done = _validate_in_two(state, index, source, *split, progress)
        if progress:
            progress("validate", done)


PARALLEL_BYTES = 8 << 20  # a file source from this size on is validated in two processes (workers > 1)


@dataclass
class _Part:
    """Where the validation of a part of the input goes: its report, host records and two spools."""

    report: ImportReport
    host_records: list[HostRecord]
    lessons: _Spool
    references: _Spool


def _own_part(state: _State) -> _Part:
    """The part of this process: the batch's own report, host records and spools."""
    return _Part(state.report, state.host_records, state.lessons, state.references)


def _split_at(source: Source) -> tuple[int, int] | None:
    """``(start, line number)`` of the second part of a file source worth validating in two processes, or
    None (not a file on disk, too small, no line starts after its middle, or no ``fork``)."""
    if source.path is None or (source.size or 0) < PARALLEL_BYTES or not can_fork():
        return None
    start, number = line_start_after(source.path, source.size // 2)
    return (start, number) if start < source.size else None


def _validate_in_two(
    state: _State, index: int, source: Source, start: int, number: int, progress: Progress | None
) -> int:
    """Validate the lines of ``source`` from byte ``start`` (line ``number``) in a forked child while this
    process validates those before it; then take the child's report, host records and spooled records
    after this part's, as if one process had read them all. Returns the bytes read (the whole source).
    Should the child fail, this process validates its part itself."""
    child_part = _Part(ImportReport(), [], _Spool(), _Spool())

    def rest() -> Iterator[tuple[int, str | None, int]]:
        return iter_lines_from(source.path, start=start, first=number)

    def second() -> tuple:
        _validate_lines(state, child_part, index, rest(), start, None)
        child_part.lessons.flush()
        child_part.references.flush()
        return (
            child_part.report,
            child_part.host_records,
            child_part.lessons.count,
            child_part.references.count,
        )

    child = Forked(second)
    own = _own_part(state)
    try:
        _validate_lines(state, own, index, iter_lines_until(source, start), 0, progress)
    except BaseException:
        child.cancel()
        raise
    try:
        report, host_records, lessons, references = child.result()
    except ForkedFailed:
        child_part.lessons.close()
        child_part.references.close()
        _validate_lines(state, own, index, rest(), start, progress)
        return source.size
    state.report.merge(report)
    state.host_records.extend(host_records)
    state.lessons.extend(child_part.lessons, lessons)
    state.references.extend(child_part.references, references)
    return source.size


def _validate_lines(
    state: _State,
    part: _Part,
    index: int,
    lines: Iterable[tuple[int, str | None, int]],
    done: int,
    progress: Progress | None,
) -> int:
    """Validate ``lines`` (``iter_lines``) of source ``index`` into ``part``, ``done`` bytes of the source
    read before them; returns the bytes read after them."""
    report = part.report
    source = state.sources[index]
    for number, text, size in lines:
        done += size
        if progress and number % 1000 == 0:
            progress("validate", done)
        if text is None:
            report.lines += 1
            report.add_error(LineError(source.name, number, "line", "not valid UTF-8"), None)
            continue
        try:
            record = parse_line(text, default_host=state.default_host)
        except RecordError as exc:
            report.lines += 1
            rtype = _peek_type(text)
            for position, fe in enumerate(exc.errors):
                line_error = LineError(source.name, number, fe.field, fe.message)
                if position == 0:
                    report.add_error(line_error, rtype)
                else:  # one rejected line with several problems: each listed, the line counted once
                    report.add_detail(line_error)
            continue
        if record is None:  # a blank line
            continue
        report.lines += 1
        name = record.name if isinstance(record, HostRecord) else record.host
        if state.only_host is not None and name != state.only_host:
            field_name = "host.name" if isinstance(record, HostRecord) else f"{record.type}.host"
            message = OUTSIDE_HOST.format(name=name, only=state.only_host)
            report.add_error(LineError(source.name, number, field_name, message), record.type)
            report.add_outside_host(f"line {number}: host {name}")
            continue
        if isinstance(record, HostRecord):
            part.host_records.append(record)
        elif isinstance(record, LessonRecord):
            part.lessons.add((index, number, done, record))
        else:
            part.references.add((index, number, done, record))
    return done


def _pass_spooled(
    state: _State,
    spool: _Spool,
    progress: Progress | None,
    *,
    phase: str,
    apply: Callable[[_State, list[Entry]], None],
    after_chunk: Callable[[], None] | None = None,
) -> None:
    """Apply the spooled records of one kind, chunk by chunk, reporting progress as bytes of the sources;
    ``after_chunk`` runs after each chunk (a sliced write's boundary)."""
    for chunk in spool.chunks():
        apply(state, chunk)
        if progress and state.sliced:
            state.progressed = (phase, chunk[-1][2])  # reported once the slice is committed
        elif progress:
            progress(phase, chunk[-1][2])
        if after_chunk is not None:
            after_chunk()


def _pass_lessons(
    state: _State, progress: Progress | None, after_chunk: Callable[[], None] | None = None
) -> None:
    _pass_spooled(
        state, state.lessons, progress, phase="lessons", apply=_apply_lessons, after_chunk=after_chunk
    )


def _pass_references(
    state: _State, progress: Progress | None, after_chunk: Callable[[], None] | None = None
) -> None:
    resolver = _Resolver(state)
    _pass_spooled(
        state,
        state.references,
        progress,
        phase="references",
        apply=lambda st, chunk: _apply_references(st, resolver, chunk),
        after_chunk=after_chunk,
    )


def _reject(state: _State, index: int, number: int, rtype: str, fld: str, message: str) -> None:
    state.report.add_error(LineError(state.sources[index].name, number, fld, message), rtype)


# --- the check before a sliced write ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Known:
    """What the check needs of a lesson (stored, or new in the batch): its entity and a digest of its
    content (namespace, subject, text)."""

    namespace: str
    subject: str
    content: str


def _content_digest(x: Lesson | LessonRecord) -> str:
    return _digest(*_content(x))


class _Precheck:
    """The refusals of the write phase, found by reading only (``_precheck``). The rules are the write
    phase's own: ``_apply_lessons`` (a hash naming other content, in the batch or stored),
    ``_apply_references`` (a verdict or exposure naming no lesson) and ``_apply_draft`` (its
    ``supersedes``); a test holds the two to the same errors on random batches.

    ``new`` remembers the batch's own new lessons (entity and content digest, by host and hash),
    ``ids_of`` the ``(store, lesson_id)`` the last accepted lesson record of each hash gives (new or stored:
    the write phase writes it; a later record of the same hash overwrites it) and ``new_ids`` those as
    ``(host, store, lesson_id)`` once every lesson chunk is read (``lessons_done``): what the references
    pass finds written. Stored lessons are read per chunk."""

    def __init__(self, state: _State):
        self.state = state
        self.host_ids: dict[str, int | None] = {}
        self.new: dict[tuple[str, str], _Known] = {}
        self.ids_of: dict[tuple[str, str], tuple[str | None, str | None]] = {}
        self.new_ids: set[tuple[str, str | None, str]] = set()

    def host_id(self, name: str) -> int | None:
        if name not in self.host_ids:
            self.host_ids[name] = Host.objects.filter(name=name).values_list("id", flat=True).first()
        return self.host_ids[name]

    def stored(self, host: str, hashes: Iterable[str]) -> dict[str, _Known]:
        """The stored lessons of ``host`` among ``hashes``, by hash."""
        wanted = [h for h in set(hashes) if (host, h) not in self.new]
        host_id = self.host_id(host)
        if not wanted or host_id is None:
            return {}
        rows = Lesson.objects.filter(host_id=host_id, hash__in=wanted).values_list(
            "hash", "namespace", "subject", "text"
        )
        return {h: _Known(ns, subject, _digest(ns, subject, text)) for h, ns, subject, text in rows}

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
            if earlier is not None and _content(earlier) != _content(record):
                _refuse_other_content(state, (index, number), record, earlier)
                continue
            by_host[record.host][record.hash] = record
            where[(record.host, record.hash)] = (index, number)
        for host, records in by_host.items():
            stored = self.stored(host, records)
            for h, record in records.items():
                holder = self.new.get((host, h)) or stored.get(h)
                if holder is not None and holder.content != _content_digest(record):
                    _refuse_other_content(state, where[(host, h)], record, holder)
                    continue
                if holder is None:
                    self.new[(host, h)] = _Known(record.namespace, record.subject, _content_digest(record))
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

        def lesson(host: str, h: str) -> _Known | None:
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
                    _reject(self.state, index, number, r.type, f"{r.type}.lesson", message)
            elif isinstance(r, DraftRecord):
                problem = _supersedes_problem(r, lambda h, host=r.host: lesson(host, h))
                if problem is not None:
                    _reject(self.state, index, number, "draft", *problem)


def _precheck(state: _State) -> bool:
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


# --- hosts -------------------------------------------------------------------------------------


def _host(state: _State, name: str) -> Host:
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


def _apply_host(state: _State, record: HostRecord) -> None:
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
            entity_counts_budget_changed(host=host)
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


def _content(x: Lesson | LessonRecord) -> tuple[str, str, str]:
    return (x.namespace, x.subject, x.text)


def _refuse_other_content(
    state: _State, where: tuple[int, int], record: LessonRecord, holder: Lesson | LessonRecord | _Known
) -> None:
    """A record whose given hash already names other content: refused, the first content kept (a hash is
    a content address, docs/interchange.md "Text normalization and hashes"; a silent last-wins would lose
    it)."""
    index, number = where
    entity = entity_label(holder.namespace, holder.subject)
    _reject(
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


def _apply_lessons(state: _State, chunk: list[Entry]) -> None:
    report = state.report
    by_host: dict[str, dict[str, LessonRecord]] = defaultdict(dict)
    where: dict[tuple[str, str], tuple[int, int]] = {}
    for index, number, _done, record in chunk:
        assert isinstance(record, LessonRecord)
        earlier = by_host[record.host].get(record.hash)
        if earlier is not None:
            if _content(earlier) != _content(record):
                _refuse_other_content(state, (index, number), record, earlier)
                continue
            report.count("lesson", "unchanged")  # the same lesson twice in one chunk: the last wins
        by_host[record.host][record.hash] = record
        where[(record.host, record.hash)] = (index, number)
    for host_name, records in by_host.items():
        host = _host(state, host_name)
        # Read, not locked: a reviewer's decision committing meanwhile still wins, through the conditional
        # status update below; rows this chunk does not change are never locked.
        existing = {
            lesson.hash: lesson for lesson in Lesson.objects.filter(host=host, hash__in=list(records))
        }
        checkpoint("lessons read")
        new = []
        status_changed: dict[tuple[str, str | None], list[tuple[Lesson, str]]] = defaultdict(list)
        for h, record in records.items():
            lesson = existing.get(h)
            if lesson is not None and _content(lesson) != _content(record):
                _refuse_other_content(state, where[(host_name, h)], record, lesson)
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


def _name_key_versions(state: _State, host_id: int, records: Iterable[LessonRecord]) -> None:
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


def _held_after_all(state: _State, pairs: list[tuple[Lesson, str]], status: str) -> None:
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


def _update_lesson(state: _State, lesson: Lesson, record: LessonRecord) -> bool:
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


# --- verdicts, exposures, corrections, drafts --------------------------------------------------


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


class _Resolver:
    """Looks up the lessons the reference records refer to: per chunk, one query per host and reference
    kind for what earlier chunks did not already find. The references pass writes no lesson, so what was
    found, or found missing, is remembered across chunks (between a sliced write's slices only a
    reviewer's status change can commit; a reference then still names the version it named when read)."""

    def __init__(self, state: _State):
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


def _digest(*parts: object) -> str:
    return sha256_hex("\u001f".join("" if p is None else str(p) for p in parts))


def _exposure_key(session: str, lkey: str, digest: str, shown_at_ms: int) -> str:
    """``_digest(session, lkey, digest, shown_at_ms)`` (none of them None), without the generic join."""
    return sha256_hex(f"{session}\u001f{lkey}\u001f{digest}\u001f{shown_at_ms}")


NO_LESSON = "no {ref} on host {host} in this batch or the database"


def _apply_references(state: _State, resolver: _Resolver, chunk: list[Entry]) -> None:
    resolver.load(r for *_rest, r in chunk)
    verdicts, exposures, corrections = [], [], []
    texts: list[ShownTextItem] = []
    for index, number, _done, record in chunk:
        if isinstance(record, VerdictRecord):
            lesson = resolver.lesson(record.host, record.lesson)
            if lesson is None:
                message = NO_LESSON.format(ref=record.lesson.describe(), host=record.host)
                _reject(state, index, number, "verdict", "verdict.lesson", message)
                continue
            key = _digest(record.metric, record.horizon_ms, record.measured_at_ms)
            verdicts.append((lesson, key, record))
            if state.sliced:  # every entity the batch names (module docstring, "Slices")
                state.counts.add(lesson.host_id, lesson.namespace, lesson.subject)
        elif isinstance(record, ExposureRecord):
            lesson = resolver.version_at(record.host, record.lesson, record.shown_at_ms)
            if lesson is None:
                message = NO_LESSON.format(ref=record.lesson.describe(), host=record.host)
                _reject(state, index, number, "exposure", "exposure.lesson", message)
                continue
            digest = record.text_hash or lesson.text_hash
            shown = resolver.same_key_with_text(record.host, lesson, digest)
            lkey = lesson.key
            key = _exposure_key(record.session, lkey, digest, record.shown_at_ms)
            exposures.append((lesson.host_id, shown, lkey, digest, key, record))
            if shown is None and record.text is not None:
                texts.append(ShownTextItem(lesson.host_id, lkey, digest, record.text, record.session))
        elif isinstance(record, CorrectionRecord):
            corrections.append((_host(state, record.host), _digest(record.identity), record))
        elif isinstance(record, DraftRecord):
            _apply_draft(state, resolver, index, number, record)
    _write_verdicts(state, verdicts)
    _write_exposures(state, exposures)
    state.changes.sessions.update(shown_texts_keep(texts))
    _write_corrections(state, corrections)


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


def _write_verdicts(state: _State, items: list[tuple[_Stored, str, VerdictRecord]]) -> None:
    rows = [(lesson.id, key, (lesson, key, record)) for lesson, key, record in items]
    new = insert_new_rows(report=state.report, kind=VERDICT_ROWS, items=rows)
    lesson_latest_verdict_refresh(lesson_ids=[lesson.id for lesson, _k, _r in new], counts=state.counts)


def _write_exposures(state: _State, items: list) -> None:
    rows = [(item[0], item[4], item) for item in items]  # (host_id, key, item)
    new = insert_new_rows(report=state.report, kind=EXPOSURE_ROWS, items=rows)
    # Sliced: every session the batch names, new rows or not, so that a run after a stop refreshes the
    # entity counts its attributions move (module docstring, "Slices").
    noted = items if state.sliced else new
    state.changes.sessions.update((host_id, record.session) for host_id, *_rest, record in noted)


def _write_corrections(state: _State, items: list[tuple[Host, str, CorrectionRecord]]) -> None:
    rows = [(host.id, key, (host, key, record)) for host, key, record in items]
    new = insert_new_rows(report=state.report, kind=CORRECTION_ROWS, items=rows)
    noted = items if state.sliced else new  # sliced: every session the batch names (_write_exposures)
    state.changes.sessions.update((host.id, record.session) for host, _k, record in noted)


def _supersedes_problem(
    record: DraftRecord, lesson: Callable[[str], object | None]
) -> tuple[str, str] | None:
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


def _apply_draft(state: _State, resolver: _Resolver, index: int, number: int, record: DraftRecord) -> None:
    problem = _supersedes_problem(record, lambda h: resolver.by_hash.get((record.host, h)))
    if problem is not None:
        _reject(state, index, number, "draft", *problem)
        return
    host = _host(state, record.host)
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
