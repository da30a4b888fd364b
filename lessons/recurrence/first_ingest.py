"""A host's first ingest, attributed in the worker while its rows are written. spec:
docs/piles-and-recurrence.md, "Attributing one correction"; figures: docs/benchmarks.md, "Session of
2026-12-04, seventh: ingest".

A host with no exposures and no corrections stored before the batch is rebuilt whole at the end of the
write phase (``lessons.recurrence.refresh``), and everything that rebuild reads back (each session's user
corrections and exposures, the distinct sessions shown each text) is what the batch itself wrote. So
here the references pass hands the attribution worker (``lessons.recurrence.attributing``) the rows it
has just written, chunk by chunk, and the worker attributes each session once the chunk holding its last
record is written (validation noted where that is: ``lessons.ingest.state.SessionEnds``), on the second
core, while this process goes on writing. It also counts the sessions shown each ``(lesson key,
text_hash)`` and tallies the outcomes of each current version. At the rebuild this process only stores
what the worker answers: the attribution rows in the order, with the values, that the rebuild's own
attribution gives them, and the counts of every current version.

The rebuild takes this path only when it is the same work: the host's versions (and the current version
of each key) are the ones the worker was given when the host's first row was written, no shown text is
stored for the host (``ShownText``: the rebuild would add its versions), and the worker answered every
request. Otherwise, or should the worker fail at any point (the rows stored from it are deleted again),
the rebuild reads and attributes as it always does.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import itertools
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence

from django.db import connection
from django.db.models import Model

from lessons.core.recurrence import (
    AMBIGUOUS,
    COUNT_FIELDS,
    DURING,
    EARLIER_VERSION,
    NOT_ATTRIBUTED,
    RECURRED,
    UNKNOWN,
    UNMATCHED,
    USER_CORRECTION,
)
from lessons.ingest.forked import ForkedFailed, ForkedWorker
from lessons.models import Correction, CorrectionAttribution, Exposure
from lessons.recurrence.attributing import Attributor

IDS_BATCH = 20_000  # correction ids per request to the worker
ROWS_BATCH = 20_000  # attribution rows per answer of the worker

# The tallies of a current version, as ``refresh._OUTCOME_AGGREGATES`` sums them from stored rows.
_TALLIED = {RECURRED: "recurred", DURING: "during", UNKNOWN: "unknown", AMBIGUOUS: "ambiguous"}
_TALLIED[EARLIER_VERSION] = "earlier_version"
_TALLY_FIELDS = (*_TALLIED.values(), "recurred_sessions")

_RUNNING: contextvars.ContextVar[FirstIngest | None] = contextvars.ContextVar("first_ingest", default=None)


def host_digest(host: tuple) -> str:
    """A digest of ``Attributor``'s ``"host"`` request (every version's fields, each key's current id):
    equal digests, the same versions. ``repr`` of tuples and dicts of strings, numbers and bools is the
    same text for the same values (the dict in the same insertion order, as the same reads give); made
    version by version (the whole text at once was 20 MB more at the rebuild of 50,000 versions)."""
    _kind, host_id, versions, current_ids = host
    digest = hashlib.sha256(repr((host_id, len(versions), current_ids)).encode())
    for fields in versions:
        digest.update(repr(tuple(fields)).encode())
    return digest.hexdigest()


class FirstIngest:
    """This process's side (module docstring), for one write phase with an attribution worker.

    ``begin_chunk`` before a references chunk's rows are written, ``feed`` after, with the rows that were
    new; ``stored`` at the rebuild. The first host with a reference row to write decides: when it has no
    exposures and no corrections stored, it is the one (``host_id``); else no host is. ``host_request``
    gives ``Attributor``'s ``"host"`` request of a host (``refresh.host_attribution_request``).
    ``alive`` goes False for good when the worker fails; then the rebuild does it all."""

    def __init__(self, worker: ForkedWorker, host_request: Callable[[int], tuple]):
        self._worker = worker
        self._host_request = host_request
        self._chunk = -1
        self._decided = False
        self._digest = ""
        self._in_flight: str | None = None  # the kind of the request in flight
        self._sessions: int | None = None  # the answer to "first-end", once in
        self.host_id: int | None = None
        self.alive = True

    def begin_chunk(self, exposures: Sequence[tuple], corrections: Sequence[tuple]) -> None:
        """A references chunk is about to be written: ``exposures`` and ``corrections`` as
        ``reference_pass.apply_references`` builds them (before the identities are checked)."""
        self._chunk += 1
        if self._decided or not (exposures or corrections):
            return
        self._decided = True
        if exposures:
            host_id, name = exposures[0][0], exposures[0][-1].host
        else:
            host_id, name = corrections[0][0].id, corrections[0][0].name
        stored = Exposure.objects.filter(host_id=host_id), Correction.objects.filter(host_id=host_id)
        if any(rows.exists() for rows in stored):
            self.alive = False
            return
        request = self._host_request(host_id)
        self._digest = host_digest(request)
        self.host_id = host_id
        self._send(("first-host", name, request))

    def feed(self, exposures: Sequence[tuple], corrections: Sequence[tuple]) -> None:
        """The chunk's new rows, as ``apply_references`` wrote them: of its host, every exposure as
        ``(session, lesson key, text_hash, shown_at_ms)`` and every user correction as ``(key, session,
        text, corrected_at_ms, turn_started_at_ms)`` (in the order written: the order of their ids) go to the
        worker."""
        host_id = self.host_id
        if host_id is None or not self.alive:
            return
        shown = [
            (record.session, lkey, digest, record.shown_at_ms)
            for exposure_host, _shown, lkey, digest, _key, record in exposures
            if exposure_host == host_id
        ]
        corrected = [
            (record.session, record.text, record.corrected_at_ms, record.turn_started_at_ms)
            for host, _key, record in corrections
            if host.id == host_id and record.kind == USER_CORRECTION
        ]
        self._send(("first-feed", self._chunk, shown, corrected))

    def written(self) -> None:
        """Every chunk is written: the worker attributes the sessions still open meanwhile."""
        if self.host_id is not None and self.alive:
            self._send(("first-end",))

    def settle(self) -> None:
        """Wait for the answer in flight, so that the worker may take other requests (a rebuild's)."""
        if self._in_flight is not None and self.alive:
            try:
                answer = self._worker.receive()
            except ForkedFailed:
                self.alive = False
            else:
                if self._in_flight == "first-end":
                    self._sessions = answer
        self._in_flight = None

    def stored(
        self, host: tuple, insert: Callable[[list[tuple]], None]
    ) -> tuple[int, int, list[tuple]] | None:
        """At the rebuild of ``host_id`` (``host``: its ``"host"`` request as the rebuild reads it now),
        hand every attribution row the worker made to ``insert``, in the rebuild's order; returns
        ``(sessions attributed, rows, count rows)``: the count rows as ``refresh._store_counts`` makes
        them, one per current version in id order. None, with nothing stored, when the versions moved or
        the worker failed."""
        if not self.alive or host[1] != self.host_id or host_digest(host) != self._digest:
            return None
        before = _sequence(CorrectionAttribution)
        try:
            self.settle()
            if not self.alive:
                return None
            sessions = self._sessions if self._sessions is not None else self._ask(("first-end",))
            # Every user correction of the host is the batch's, numbered in the order written, as fed.
            ids = Correction.objects.filter(host_id=host[1], kind=USER_CORRECTION).order_by("id")
            with connection.cursor() as cursor:
                sql, params = ids.values_list("id").query.sql_with_params()
                cursor.execute(sql, params)
                while batch := cursor.fetchmany(IDS_BATCH):
                    self._ask(("first-ids", [row[0] for row in batch]))
            written = 0
            while rows := self._ask(("first-rows", ROWS_BATCH)):
                insert(rows)
                written += len(rows)
            counts = self._ask(("first-counts",))
        except ForkedFailed:
            self.alive = False
            CorrectionAttribution.objects.filter(host_id=host[1]).delete()
            _sequence_back(CorrectionAttribution, before)
            return None
        return sessions, written, counts

    def _send(self, request: tuple) -> None:
        """Send ``request`` once the answer in flight is in (one request in flight: ``ForkedWorker``)."""
        self.settle()
        if not self.alive:
            return
        try:
            self._worker.send(request)
        except ForkedFailed:
            self.alive = False
            return
        self._in_flight = request[0]

    def _ask(self, request: tuple) -> object:
        """Send ``request`` and wait for its answer; ``ForkedFailed`` when the worker is gone."""
        self.settle()
        self._worker.send(request)
        return self._worker.receive()


def _sequence(model: type[Model]) -> int | None:
    """SQLite: the largest id ``model``'s table has given (its ``AUTOINCREMENT`` sequence); else None."""
    if connection.vendor != "sqlite":
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = %s), 0)", [model._meta.db_table]
        )
        return cursor.fetchone()[0]


def _sequence_back(model: type[Model], before: int | None) -> None:
    """SQLite: put ``model``'s sequence back to ``before`` (``_sequence``), once the rows written since are
    deleted, so that the rebuild numbers its rows as if none had been written (as ``writer`` does)."""
    if before is None:
        return
    with connection.cursor() as cursor:
        cursor.execute("UPDATE sqlite_sequence SET seq = %s WHERE name = %s", [before, model._meta.db_table])


@contextlib.contextmanager
def first_ingest_running(first: FirstIngest | None) -> Iterator[None]:
    """Within the block, ``running()`` is ``first``."""
    token = _RUNNING.set(first)
    try:
        yield
    finally:
        _RUNNING.reset(token)


def running() -> FirstIngest | None:
    """The ``FirstIngest`` of the write phase this runs in, while its worker is alive; else None."""
    first = _RUNNING.get()
    return first if first is not None and first.alive else None


class FirstIngestWorker:
    """The worker's side (module docstring): ``Attributor``'s ``first``. ``ends``: ``SessionEnds.hosts``
    as validation left it (inherited by the fork), ``chunk``: the references spool's chunk size.

    Requests: ``("first-host", host name, host request)`` (``Attributor``'s ``"host"``); ``("first-feed",
    chunk index, exposures, corrections)`` (``FirstIngest.feed``'s), after which every session whose last
    record is in that chunk or an earlier one is attributed and counted; ``("first-end",)``: every session
    still open, answers the number of sessions with a user correction; ``("first-ids", [(key, id), ...])``:
    the stored ids of the corrections; ``("first-rows", n)``: the next ``n`` attribution rows, ``(host_id,
    session, correction_id, lesson_id or None, outcome)`` in the rebuild's order (by session, then as
    ``lessons.core.recurrence.attribute`` orders a session's corrections, ids compared as text), an empty
    list at the end; ``("first-counts",)``: ``(tallies, shown)`` as ``FirstIngest.stored`` returns them."""

    def __init__(self, ends: dict[str, dict[str, int]] | None, chunk: int):
        self.ends = ends or {}
        self.chunk = chunk

    def __call__(self, request: tuple) -> object:
        kind = request[0]
        if kind == "first-host":
            _kind, name, host = request
            self._host(name, host)
            return None
        if kind == "first-feed":
            _kind, chunk, exposures, corrections = request
            for row in exposures:
                self._open(row[0])[0].append(row)
            for session, text, corrected_at_ms, started_ms in corrections:
                self._open(session)[1].append((self._fed, session, text, corrected_at_ms, started_ms))
                self._fed += 1
            if not self._closed.isdisjoint(self._sessions_open):  # never: validation noted the last records
                raise RuntimeError("FirstIngestWorker: a row of a session after the chunk of its last record")
            ended: list[str] = []
            for done in range(self._through + 1, chunk + 1):
                ended += self._ends_in.pop(done, ())
            self._through = max(self._through, chunk)
            self._attribute(ended)
            return None
        if kind == "first-end":
            self._attribute(list(self._sessions_open))
            self._ends_in.clear()
            return self._corrected
        if kind == "first-ids":
            self._ids += request[1]
            return None
        if kind == "first-rows":
            if self._rows is None:
                self._rows = self._row_order()
            return list(itertools.islice(self._rows, request[1]))
        if kind == "first-counts":
            return self._count_rows()
        raise ValueError(f"FirstIngestWorker: unknown request {kind!r}")

    def _host(self, name: str, host: tuple) -> None:
        self._attributor = Attributor()
        self._attributor(host)
        self._host_id: int = host[1]
        # Every version's LessonVersion fields: key, hash, text, text_hash, is_current.
        self._host_versions: list[tuple] = host[2]
        self._current_ids: dict[str, int] = host[3]
        self._ends_in: dict[int, list[str]] = defaultdict(list)
        for session, position in self.ends.pop(name, {}).items():
            self._ends_in[position // self.chunk].append(session)
        self.ends = {}  # the other hosts' are not needed
        self._through = -1
        self._sessions_open: dict[str, tuple[list[tuple], list[tuple]]] = {}
        self._closed: set[str] = set()  # the sessions attributed (none may have a row after)
        # Per session: (corrected_at_ms, number, outcome, lesson keys) of each of its user corrections.
        self._done: dict[str, list[tuple]] = {}
        self._corrected = 0
        self._tallies: dict[int, dict[str, int]] = {}
        self._shown: dict[tuple[str, str], int] = defaultdict(int)
        self._fed = 0  # user corrections fed: the n-th has the n-th smallest id of them
        self._ids: list[int] = []
        self._rows: Iterator[tuple] | None = None

    def _open(self, session: str) -> tuple[list[tuple], list[tuple]]:
        found = self._sessions_open.get(session)
        if found is None:
            found = self._sessions_open[session] = ([], [])
        return found

    def _attribute(self, sessions: list[str]) -> None:
        """Attribute and count ``sessions`` (complete now); a session with no row written is skipped."""
        correction_rows: list[tuple] = []
        exposure_rows: list[tuple] = []
        shown = self._shown
        for session in sessions:
            found = self._sessions_open.pop(session, None)
            if found is None:
                continue
            self._closed.add(session)
            exposures, corrections = found
            for pair in {(key, digest) for _session, key, digest, _ms in exposures}:
                shown[pair] += 1
            if corrections:
                self._corrected += 1
                correction_rows += corrections
                exposure_rows += exposures
        if not correction_rows:
            return
        corrected_at = {row[0]: row[3] for row in correction_rows}
        recurred: dict[str, set[int]] = defaultdict(set)
        for attribution in self._attributor.attributions(correction_rows, exposure_rows):
            number, session, outcome = (
                int(attribution.correction_id),
                attribution.session,
                attribution.outcome,
            )
            done = (corrected_at[number], number, outcome, attribution.keys)
            self._done.setdefault(session, []).append(done)
            field = _TALLIED.get(outcome)
            if field is None:  # unmatched: a row without a lesson, in no version's tallies
                continue
            for lesson_key in attribution.keys:
                lesson_id = self._current_ids[lesson_key]
                tally = self._tallies.get(lesson_id)
                if tally is None:
                    tally = self._tallies[lesson_id] = dict.fromkeys(_TALLY_FIELDS, 0)
                tally[field] += 1
                if outcome == RECURRED:
                    recurred[session].add(lesson_id)
        for lesson_ids in recurred.values():
            for lesson_id in lesson_ids:
                self._tallies[lesson_id]["recurred_sessions"] += 1

    def _row_order(self) -> Iterator[tuple]:
        host_id, ids, current_ids = self._host_id, self._ids, self._current_ids
        if len(ids) != self._fed:  # never: the same rows, read back
            raise RuntimeError(f"FirstIngestWorker: {len(ids)} ids for {self._fed} user corrections")
        for session in sorted(self._done):
            attributed = self._done.pop(session)
            attributed.sort(key=lambda item: (item[0], str(ids[item[1]])))
            for _at, number, outcome, lesson_keys in attributed:
                correction_id = ids[number]
                if outcome == UNMATCHED:
                    yield (host_id, session, correction_id, None, UNMATCHED)
                elif outcome != NOT_ATTRIBUTED:
                    for lesson_key in lesson_keys:
                        yield (host_id, session, correction_id, current_ids[lesson_key], outcome)

    def _count_rows(self) -> list[tuple]:
        """One row per current version, in id order, as ``refresh._store_counts`` makes them: ``(id,
        sessions shown its text, *the tallies in COUNT_FIELDS' order)``."""
        current_hash = {fields[0]: fields[3] for fields in self._host_versions if fields[4]}
        tallied = [f for f in COUNT_FIELDS if f != "sessions_shown"]
        zeros = dict.fromkeys(tallied, 0)
        rows = []
        for key, lesson_id in sorted(self._current_ids.items(), key=lambda item: item[1]):
            tally = self._tallies.get(lesson_id, zeros)
            shown = self._shown.get((key, current_hash[key]), 0)
            rows.append((lesson_id, shown, *(tally[f] for f in tallied)))
        return rows
