"""Attributing the sessions of a host chunk by chunk: reading their corrections and exposures, the pure
attribution, the rows to store; for a host rebuilt whole, optionally in a forked worker. spec:
docs/piles-and-recurrence.md, "Attributing one correction".

A correction's attribution depends only on its session's exposures and the texts of the keys it saw, so
the chunks are independent: while a worker attributes one (``lessons.core.recurrence``, pure Python on
the second core), this process stores the rows of the one before and reads the one after. The worker
is forked before the write phase begins (``recurrence_worker``; ``manage.py ingest`` only: module
docstring of ``lessons.ingest.forked``), while this process is small: it inherits no page cache and no
batch, and gets each host's versions and each chunk's rows through a pipe. It answers exactly what
``Attributor`` answers here, chunk by chunk in order, so the rows, their order and their ids are the
same either way; should it fail, the chunk in flight and the rest are attributed here.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator

from django.db import connection
from django.db.models import QuerySet

from lessons.core.recurrence import (
    NOT_ATTRIBUTED,
    UNMATCHED,
    USER_CORRECTION,
    Attribution,
    LessonKey,
    LessonVersion,
    Profiles,
    attribute_profiled,
    current_hashes,
    lesson_profile,
    version_profiles,
)
from lessons.core.recurrence import Correction as CoreCorrection
from lessons.core.recurrence import Exposure as CoreExposure
from lessons.ingest.forked import ForkedFailed, ForkedWorker, can_fork
from lessons.models import Correction, Exposure
from lessons.recurrence.versions import EpochMs, rows_where_any_in

SESSION_CHUNK = 500  # sessions per IN (...) query: well under SQLite's 999 parameters
_WORKER: contextvars.ContextVar[ForkedWorker | None] = contextvars.ContextVar(
    "attribution_worker", default=None
)


class ProfileMemo(dict):
    """``lesson_profile`` remembered per text for one host's rebuild (freed with it). Each distinct word
    is kept once: texts share most of their words, and at 50,000 texts the sets' own copies of them were
    most of the memo's memory (the peak of a large rebuild)."""

    def __init__(self) -> None:
        super().__init__()
        self._words: dict[str, str] = {}

    def __call__(self, text: str) -> tuple[frozenset[str], frozenset[str]]:
        found = self.get(text)
        if found is None:
            one = self._words.setdefault
            content, full = lesson_profile(text)
            found = self[text] = (frozenset(one(w, w) for w in content), frozenset(one(w, w) for w in full))
        return found


def read_signals(host_id: int, sessions: list[str]) -> tuple[list[tuple], list[tuple]]:
    """The user corrections of ``sessions`` (one host) as ``(id, session, text, corrected_at_ms,
    turn_started_at_ms)`` rows and their exposures as ``(session, lesson key, text_hash or None,
    shown_at_ms)`` rows, in no particular order; ``SESSION_CHUNK`` sessions per query."""
    corrections: list[tuple] = []
    exposures: list[tuple] = []
    for start in range(0, len(sessions), SESSION_CHUNK):
        part = sessions[start : start + SESSION_CHUNK]
        # No DISTINCT and no ORDER BY here: either makes SQLite walk another index over the whole host.
        # Times read as epoch milliseconds computed in SQL (EpochMs): no datetime converter per row.
        corrections += rows_where_any_in(
            _user_corrections(host_id)
            .order_by()
            .values_list("id", "session", "text", EpochMs("corrected_at"), EpochMs("turn_started_at")),
            [("session", part)],
        )
        exposures += rows_where_any_in(
            Exposure.objects.filter(host_id=host_id)
            .order_by()
            .values_list("session", "lesson_key", "text_hash", EpochMs("shown_at")),
            [("session", part)],
        )
    return corrections, exposures


def _user_corrections(host_id: int) -> QuerySet:
    """The user corrections of host ``host_id``, for a look-up by session (``read_signals``).

    On SQLite the kind is compared as ``+kind``, which no index may serve: with ``kind`` indexable, SQLite
    (no ``ANALYZE`` statistics) prefers ``correction_newest`` (host, kind, ...: two equalities) to
    ``correction_session`` (host, session) and walks every user correction of the host for each
    ``SESSION_CHUNK`` sessions asked: at 1,000,000 lines, 200 walks of 190,000 rows, 15 of the refresh's 25 s
    (docs/benchmarks.md, "Session of 2026-12-04, fifth: ingest"). PostgreSQL chooses by its statistics.
    """
    rows = Correction.objects.filter(host_id=host_id)
    if connection.vendor != "sqlite":
        return rows.filter(kind=USER_CORRECTION)
    column = f"{connection.ops.quote_name(Correction._meta.db_table)}.{connection.ops.quote_name('kind')}"
    return rows.extra(where=[f"+{column} = %s"], params=[USER_CORRECTION])


def core_signals(
    correction_rows: Iterable[tuple], exposure_rows: list[tuple]
) -> tuple[list[CoreCorrection], list[CoreExposure], set[LessonKey]]:
    """``read_signals``' rows as core records: the corrections, the exposures of the sessions among them
    (only those can be candidates), and every lesson key the sessions were shown."""
    corrections = [
        CoreCorrection(session, str(pk), USER_CORRECTION, text, corrected_at_ms, turn_started_at_ms)
        for pk, session, text, corrected_at_ms, turn_started_at_ms in correction_rows
    ]
    corrected = {c.session for c in corrections}
    exposures = [
        CoreExposure(session, key, digest or "", shown_at_ms)
        for session, key, digest, shown_at_ms in exposure_rows
        if session in corrected
    ]
    return corrections, exposures, {row[1] for row in exposure_rows}


def shown_pairs(
    correction_rows: Iterable[tuple], exposure_rows: Iterable[tuple]
) -> set[tuple[LessonKey, str]]:
    """The ``(lesson key, text_hash)`` pairs shown in the corrected sessions of ``read_signals``' rows."""
    corrected = {row[1] for row in correction_rows}
    return {(key, digest or "") for session, key, digest, _ms in exposure_rows if session in corrected}


def attribution_rows(
    host_id: int, attributions: Iterable[Attribution], current_id: Callable[[LessonKey], int]
) -> list[tuple]:
    """The rows to store, ``(host_id, session, correction_id, lesson_id or None, outcome)``: one per charged
    key (on its current version, ``current_id``), one without a lesson for an unmatched correction."""
    rows: list[tuple] = []
    for attribution in attributions:
        correction_id = int(attribution.correction_id)
        if attribution.outcome == UNMATCHED:
            rows.append((host_id, attribution.session, correction_id, None, UNMATCHED))
        elif attribution.outcome != NOT_ATTRIBUTED:
            rows.extend(
                (host_id, attribution.session, correction_id, current_id(key), attribution.outcome)
                for key in attribution.keys
            )
    return rows


class Attributor:
    """The pure part of a host rebuilt whole, request by request (here, or in the worker):

    - ``("host", host_id, versions, current_ids)``: the host's core versions (``LessonVersion`` fields as
      tuples) and the id of each key's current version; answers None. Forgets the host before.
    - ``("chunk", correction rows, exposure rows, texts)``: ``read_signals``' rows of a chunk of its
      sessions and the shown texts no version has (``LessonVersion`` fields); answers the chunk's
      ``attribution_rows``.

    What matching reads of the versions (``version_profiles``: each text tokenized once, ``ProfileMemo``)
    and each key's current text are kept for the host: made for a key the first time a chunk shows it,
    where making them for every chunk's keys again was half of the attribution at 1,000,000 lines. A shown
    text is a version of its key no stored version has: kept too (another chunk showing it has it as well).

    Any other request goes to ``first`` (``lessons.recurrence.first_ingest.FirstIngestWorker``: a host's first
    ingest attributed while its rows are written), which keeps its own state."""

    def __init__(self, first: Callable[[tuple], object] | None = None) -> None:
        self.first = first  # the requests of a host's first ingest (``"first-..."``), when given
        self.host_id = 0
        self.core: dict[LessonKey, list[LessonVersion]] = {}
        self.current_ids: dict[LessonKey, int] = {}
        self.current: dict[LessonKey, str] = {}
        self.profile = ProfileMemo()
        self.profiles: Profiles = {}
        self.profiled: set[LessonKey] = set()

    def __call__(self, request: tuple) -> list[tuple] | None:
        if request[0] == "host":
            _kind, self.host_id, versions, self.current_ids = request
            self.core = defaultdict(list)
            for fields in versions:
                version = LessonVersion._make(fields)
                self.core[version.key].append(version)
            self.current = current_hashes(v for group in self.core.values() for v in group)
            self.profile, self.profiles, self.profiled = ProfileMemo(), {}, set()
            return None
        if request[0] != "chunk":  # a host's first ingest (lessons.recurrence.first_ingest)
            if self.first is None:
                raise ValueError(f"Attributor: no handler for {request[0]!r} requests")
            return self.first(request)
        _kind, correction_rows, exposure_rows, texts = request
        attributions = self.attributions(correction_rows, exposure_rows, texts)
        return attribution_rows(self.host_id, attributions, self.current_ids.__getitem__)

    def attributions(
        self, correction_rows: Iterable[tuple], exposure_rows: list[tuple], texts: Iterable[tuple] = ()
    ) -> tuple[Attribution, ...]:
        """The ``Attribution`` of each correction of ``read_signals``' rows (a correction's ``id`` as
        given, made a string) against the host's versions and the shown ``texts`` (``LessonVersion``
        fields), in ``attribute``'s order; the host given first."""
        corrections, exposures, _keys = core_signals(correction_rows, exposure_rows)
        if not corrections:
            return ()
        new = {e.key for e in exposures} - self.profiled
        version_profiles((v for key in new for v in self.core.get(key, ())), self.profile, self.profiles)
        self.profiled |= new
        version_profiles((LessonVersion._make(fields) for fields in texts), self.profile, self.profiles)
        # The attributions alone: the counts are summed from the stored rows in SQL (refresh._store_counts).
        return attribute_profiled(
            profiles=self.profiles, current=self.current, exposures=exposures, corrections=corrections
        )


class HostAttribution:
    """The chunks of one host rebuilt whole, through ``Attributor``: in the worker when there is one (one
    chunk in flight while this process goes on), else here.

    ``chunk(request, sessions)`` takes a chunk's request and returns the chunks whose rows are ready, as
    ``(rows, sessions)`` in the order given (with a worker, the one before); ``finish()`` returns the
    last. A worker that fails (``ForkedFailed``) leaves the chunk in flight and every later one to an
    ``Attributor`` here, which is given the host first."""

    def __init__(self, host: tuple, worker: ForkedWorker | None):
        self._host = host
        self._worker: ForkedWorker | None = None
        self._here: Attributor | None = None
        self._in_flight: tuple[tuple, int] | None = None  # (request, sessions) the worker is answering
        if worker is not None and worker.alive:
            self._worker = worker
            self._in_flight = (host, 0)
            self._ask()

    def chunk(self, request: tuple, sessions: int) -> list[tuple[list[tuple], int]]:
        """Attribute a chunk (``Attributor``'s ``"chunk"`` request) of ``sessions`` sessions."""
        return self._ready((request, sessions))

    def finish(self) -> list[tuple[list[tuple], int]]:
        """The chunks not returned yet (the last one's, with a worker)."""
        return self._ready(None)

    def _ready(self, queued: tuple[tuple, int] | None) -> list[tuple[list[tuple], int]]:
        done: list[tuple[list[tuple], int]] = []
        if self._worker is not None:
            try:
                rows = self._worker.receive()
            except ForkedFailed:
                self._worker = None
            else:
                (request, sessions), self._in_flight = self._in_flight, None
                if request[0] == "chunk":
                    done.append((rows, sessions))
                if queued is not None:
                    self._in_flight, queued = queued, None
                    self._ask()
                return done
        # No worker (any more): what it was answering, then ``queued``, here.
        for item in (self._in_flight, queued):
            if item is not None and item[0][0] == "chunk":
                done.append((self._attributor()(item[0]), item[1]))
        self._in_flight = None
        return done

    def _ask(self) -> None:
        """Send the request in flight; a worker that is gone is dropped, the request stays in flight (the
        next call does it here)."""
        try:
            self._worker.send(self._in_flight[0])
        except ForkedFailed:
            self._worker = None

    def _attributor(self) -> Attributor:
        if self._here is None:
            self._here = Attributor()
            self._here(self._host)
        return self._here


def attribution_worker() -> ForkedWorker | None:
    """The worker of the ``recurrence_worker`` block this runs in, while it is alive; else None."""
    worker = _WORKER.get()
    return worker if worker is not None and worker.alive else None


@contextlib.contextmanager
def recurrence_worker(enabled: bool = True, first: Callable[[tuple], object] | None = None) -> Iterator[None]:
    """Within the block, a host rebuilt whole is attributed in a forked worker (module docstring), when
    ``enabled`` (a process of its own, with no other thread: ``lessons.ingest.forked``) and the platform
    forks; else the block runs without one. Forks at once: enter it while this process is small and has
    no transaction open. The worker ends with the block. ``first``: the handler of a host's first ingest
    in the worker (``Attributor``'s ``first``)."""
    if not enabled or not can_fork():
        yield
        return
    with ForkedWorker(Attributor(first)) as worker:
        token = _WORKER.set(worker)
        try:
            yield
        finally:
            _WORKER.reset(token)
