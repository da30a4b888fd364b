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
order, cut into the same chunks (``Spool.chunks``: the cut is no chunk boundary). A child that fails
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
before the first slice, ``precheck`` finds, reading only, every refusal the write phase would make (a
hash naming other content, a reference to no lesson, a draft's ``supersedes``), and a batch it refuses is
answered like one the write phase refused. The write is idempotent (rows are identified by content), so a
job stopped between slices completes when it runs again. ``IngestIncomplete`` says when a failure stopped
it after a slice was committed.
"""

from __future__ import annotations

import contextlib
import copy
import json
import random
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, OperationalError, connection, transaction

from lessons.core.interchange import (
    CorrectionRecord,
    ExposureRecord,
    HostRecord,
    LessonRecord,
    RecordError,
    parse_line,
)
from lessons.ingest import checkpoints
from lessons.ingest import state as spooled
from lessons.ingest.forked import Forked, ForkedFailed, can_fork
from lessons.ingest.lesson_pass import apply_host, apply_lessons
from lessons.ingest.memory import collector_paused, releasing
from lessons.ingest.precheck import precheck
from lessons.ingest.reading import (
    LINE_TOO_LONG,
    MAX_LINE_BYTES,
    Source,
    iter_lines,
    iter_lines_from,
    iter_lines_until,
    line_start_after,
)
from lessons.ingest.reference_pass import Resolver, apply_references
from lessons.ingest.report import ImportReport, LineError
from lessons.ingest.state import Entry, IngestState, SessionEnds, Spool
from lessons.ingest.writer import indexes_built_after
from lessons.models import Correction, Exposure, Host
from lessons.recurrence import first_ingest
from lessons.recurrence.attributing import attribution_worker, recurrence_worker
from lessons.recurrence.first_ingest import FirstIngest, FirstIngestWorker
from lessons.recurrence.refresh import host_attribution_request, recurrence_changes_refresh
from lessons.services.data_version import for_hosts_in
from lessons.services.embeddings import facts_deferred
from lessons.services.entity_counts import (
    entity_counts_recount,
    entity_counts_refresh,
)
from lessons.signals import host_evidence_changed

OUTSIDE_HOST = "host {name} is not {only}: this ingest may only write host {only}"
WRITE_ATTEMPTS = 4  # the write phase runs at most this often when the database reports a deadlock
RETRY_BASE_SECONDS = 0.2  # backoff before attempt n: RETRY_BASE_SECONDS * 2**(n-1), jittered
BUSY = (
    "ingest not written: the database kept reporting {what} after {n} attempts "
    "(other writers hold the same rows); nothing was kept, send the batch again"
)
Progress = Callable[[str, int], None]  # (phase, bytes read so far in this phase's current source)

LINE_TOO_LONG_ERROR = "longer than {limit:,} bytes: no record is that long (is this an interchange file?)"


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
    state = IngestState(
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
        if state.sliced and not skip_invalid and precheck(state):
            return state.report  # refused, as the write phase would have refused it: nothing written
        validated = copy.deepcopy(state.report)
        checkpoints.reached("validated")
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                with for_hosts_in(state.hosts):  # its hosts' data versions (docs/production.md, "Cache")
                    _write_grouping_later(state, progress)
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
        # After the loop, not in it: what the receivers do with the committed batch (the outcomes) is theirs;
        # a lock they meet must not make the batch count as refused and be written again.
        if state.report.written:
            host_evidence_changed.send(sender=ImportReport, hosts=sorted(state.hosts))
        if state.report.error_count and not skip_invalid and not dry_run and not state.report.written:
            state.report.refused_after_writing()  # rolled back: "1 created" of nothing written misled
        return state.report
    finally:
        state.lessons.close()
        state.references.close()


def _write_grouping_later(state: IngestState, progress: Progress | None) -> None:
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


def _write(state: IngestState, progress: Progress | None) -> None:
    """The write phase, in one transaction (rolled back for a dry run or a refused batch), or in slices."""
    report = state.report
    if state.sliced:
        _write_sliced(state, progress)
        return
    first = _first_ingest_worker(state)
    try:
        with (
            recurrence_worker(_attribute_in_worker(state), first=first),
            transaction.atomic(),
            _first_ingest(state, first is not None),
        ):
            # A large batch's exposures and corrections are indexed once they are all in (SQLite), with the
            # page cache back at its size; the larger cache only while rows go in, the recurrence refresh
            # reads with its own memory.
            with _indexes_after_rows(state), _sqlite_page_cache(state.lessons.count + state.references.count):
                for record in state.host_records:
                    apply_host(state, record)
                _pass_lessons(state, progress)
                checkpoints.reached("lessons written")
                _pass_references(state, progress)
                running = first_ingest.running()
                if running is not None:
                    running.written()  # the worker attributes the last sessions while the indexes are made
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


FIRST_INGEST_RECORDS = 20_000  # from this many reference records on, a host's first ingest may be attributed
# while its rows are written (lessons.recurrence.first_ingest)


def _first_ingest_worker(state: IngestState) -> FirstIngestWorker | None:
    """The worker's handler of a host's first ingest (``lessons.recurrence.first_ingest``), for a batch of
    ``FIRST_INGEST_RECORDS`` reference records or more with an attribution worker, whose sessions'
    last records validation noted; else None."""
    if (
        not _attribute_in_worker(state)
        or state.references.count < FIRST_INGEST_RECORDS
        or state.session_ends.hosts is None
    ):
        return None
    return FirstIngestWorker(state.session_ends.hosts, chunk=spooled.CHUNK)


@contextlib.contextmanager
def _first_ingest(state: IngestState, enabled: bool) -> Iterator[None]:
    """Within the block (the write phase, inside ``recurrence_worker``), a host's first ingest is attributed
    in the worker while its rows are written, when ``enabled`` and the worker is alive."""
    worker = attribution_worker() if enabled else None
    if worker is not None:
        # The worker has its own copy (forked): this process frees its own. A write phase run again after
        # a deadlock then takes the general path.
        state.session_ends.hosts = None
    with first_ingest.first_ingest_running(
        None if worker is None else FirstIngest(worker, host_attribution_request)
    ):
        yield


def _attribute_in_worker(state: IngestState) -> bool:
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

    def __init__(self, state: IngestState, progress: Progress | None = None):
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
        checkpoints.reached("slice committed")
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


def _write_sliced(state: IngestState, progress: Progress | None) -> None:
    """The write phase as slices (module docstring, "Slices"): every slice's rows committed with their
    recurrence, then the entity counts. A failure rolls back the open slice; after a commit it is raised
    as ``IngestIncomplete`` (never retried here: the job says so)."""
    report = state.report
    slices = _Slices(state, progress)
    slices.begin()
    try:
        with _sqlite_page_cache(state.lessons.count + state.references.count):
            for record in state.host_records:
                apply_host(state, record)
            _pass_lessons(state, progress, after_chunk=slices.boundary)
            checkpoints.reached("lessons written")
            _pass_references(state, progress, after_chunk=slices.boundary)
        slices.commit()
        checkpoints.reached("rows written")
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


def _indexes_after_rows(state: IngestState) -> contextlib.AbstractContextManager[None]:
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


def _refresh_derived(state: IngestState) -> None:
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


def _pass_validate(state: IngestState, progress: Progress | None) -> None:
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
    lessons: Spool
    references: Spool
    ends: SessionEnds


def _own_part(state: IngestState) -> _Part:
    """The part of this process: the batch's own report, host records and spools."""
    return _Part(state.report, state.host_records, state.lessons, state.references, state.session_ends)


def _split_at(source: Source) -> tuple[int, int] | None:
    """``(start, line number)`` of the second part of a file source worth validating in two processes, or
    None (not a file on disk, too small, no line starts after its middle, or no ``fork``)."""
    if source.path is None or (source.size or 0) < PARALLEL_BYTES or not can_fork():
        return None
    start, number = line_start_after(source.path, source.size // 2)
    return (start, number) if start < source.size else None


def _validate_in_two(
    state: IngestState, index: int, source: Source, start: int, number: int, progress: Progress | None
) -> int:
    """Validate the lines of ``source`` from byte ``start`` (line ``number``) in a forked child while this
    process validates those before it; then take the child's report, host records and spooled records
    after this part's, as if one process had read them all. Returns the bytes read (the whole source).
    Should the child fail, this process validates its part itself."""
    child_part = _Part(ImportReport(), [], Spool(), Spool(), SessionEnds())

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
            child_part.ends.hosts,
        )

    child = Forked(second)
    own = _own_part(state)
    try:
        _validate_lines(state, own, index, iter_lines_until(source, start), 0, progress)
    except BaseException:
        child.cancel()
        raise
    try:
        report, host_records, lessons, references, ends = child.result()
    except ForkedFailed:
        child_part.lessons.close()
        child_part.references.close()
        _validate_lines(state, own, index, rest(), start, progress)
        return source.size
    state.report.merge(report)
    state.host_records.extend(host_records)
    state.lessons.extend(child_part.lessons, lessons)
    state.session_ends.extend(ends, offset=state.references.count)
    state.references.extend(child_part.references, references)
    return source.size


def _validate_lines(
    state: IngestState,
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
        if text is None or text is LINE_TOO_LONG:
            report.lines += 1
            why = "not valid UTF-8" if text is None else LINE_TOO_LONG_ERROR.format(limit=MAX_LINE_BYTES)
            report.add_error(LineError(source.name, number, "line", why), None)
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
            if type(record) in _SESSION_RECORDS:
                part.ends.note(record.host, record.session, part.references.count - 1)
    return done


_SESSION_RECORDS = (ExposureRecord, CorrectionRecord)


def _pass_spooled(
    state: IngestState,
    spool: Spool,
    progress: Progress | None,
    *,
    phase: str,
    apply: Callable[[IngestState, list[Entry]], None],
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
    state: IngestState, progress: Progress | None, after_chunk: Callable[[], None] | None = None
) -> None:
    _pass_spooled(
        state, state.lessons, progress, phase="lessons", apply=apply_lessons, after_chunk=after_chunk
    )


def _pass_references(
    state: IngestState, progress: Progress | None, after_chunk: Callable[[], None] | None = None
) -> None:
    resolver = Resolver(state)
    _pass_spooled(
        state,
        state.references,
        progress,
        phase="references",
        apply=lambda st, chunk: apply_references(st, resolver, chunk),
        after_chunk=after_chunk,
    )
