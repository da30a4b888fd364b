"""What every pass of an ingest shares: the spooled records, the batch's state and the report's refusals.
lessons/ingest/passes.py (module docstring) tells how the passes use them."""

from __future__ import annotations

import copy
import marshal
import struct
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field

from lessons.core.interchange import (
    CorrectionRecord,
    DraftRecord,
    ExposureRecord,
    HostRecord,
    LessonRecord,
    LessonRef,
    Record,
    VerdictRecord,
)
from lessons.ingest.reading import Source
from lessons.ingest.report import ImportReport, LineError
from lessons.models import Host
from lessons.recurrence.refresh import RecurrenceChanges
from lessons.services.entity_counts import (
    CountChanges,
)

CHUNK = 500  # records per chunk: each chunk's lookups stay under SQLite's 999 parameters
# A spooled record: (source index, line number, bytes read in its source up to this line, record).
Entry = tuple[int, int, int, Record]


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


class Spool:
    """Records of one kind, written to a temporary file in chunks of ``CHUNK`` (as plain tuples, see
    ``_SPOOLED``): read back by ``chunks()`` as the same records, without parsing their lines again and
    without holding the batch in memory."""

    def __init__(self) -> None:
        self._file = tempfile.TemporaryFile()
        self._before: list[Spool] = []  # spools whose chunks come first (``extend``)
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

    def extend(self, other: Spool, count: int) -> None:
        """Take ``other``'s ``count`` entries (written to its file by another process) after this spool's:
        this spool's chunks so far, then ``other``'s, then what is added after."""
        self._flush()
        head = Spool.__new__(Spool)
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


SESSIONS_TRACKED = 250_000  # sessions whose last record ``SessionEnds`` notes, at most (then it stops)


class SessionEnds:
    """Where each session's last reference record is in the references spool: ``hosts[host name][session]``
    is its position (0 for the spool's first entry; its chunk is ``position // CHUNK``), noted during
    validation. A host's first ingest attributes a session as soon as the chunk holding its last record is
    written (``lessons.recurrence.first_ingest``). Bounded: past ``SESSIONS_TRACKED`` sessions it stops and
    ``hosts`` is None (that ingest takes the general path)."""

    __slots__ = ("hosts", "_notes")

    def __init__(self) -> None:
        self.hosts: dict[str, dict[str, int]] | None = {}
        self._notes = 0

    def note(self, host: str, session: str, position: int) -> None:
        """A record of ``session`` on ``host`` at ``position`` of the spool (positions only grow)."""
        hosts = self.hosts
        if hosts is None:
            return
        sessions = hosts.get(host)
        if sessions is None:
            sessions = hosts[host] = {}
        sessions[session] = position
        self._notes += 1
        if not self._notes % 4096 and sum(map(len, hosts.values())) > SESSIONS_TRACKED:
            self.hosts = None

    def extend(self, other: dict[str, dict[str, int]] | None, offset: int) -> None:
        """Take another part's ``hosts`` (another process validated the lines after this part's), whose
        positions start at ``offset`` of this spool."""
        if self.hosts is None or other is None:
            self.hosts = None
            return
        for host, sessions in other.items():
            mine = self.hosts.setdefault(host, {})
            for session, position in sessions.items():
                mine[session] = position + offset
        if sum(map(len, self.hosts.values())) > SESSIONS_TRACKED:
            self.hosts = None


@dataclass(frozen=True, slots=True)
class Known:
    """What the check needs of a lesson (stored, or new in the batch): its entity and a digest of its
    content (namespace, subject, text)."""

    namespace: str
    subject: str
    content: str


@dataclass
class IngestState:
    report: ImportReport
    default_host: str | None
    sources: list[Source]
    only_host: str | None = None
    sliced: bool = False  # commit the write phase in slices (SQLite background jobs: module docstring)
    workers: int = 1  # processes validating a large file source (module docstring, "Validation")
    host_records: list[HostRecord] = field(default_factory=list)
    lessons: Spool = field(default_factory=Spool)
    references: Spool = field(default_factory=Spool)
    # Where each session's last reference record is (validation notes it; a first ingest's worker reads it).
    session_ends: SessionEnds = field(default_factory=SessionEnds)
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


def reject(state: IngestState, index: int, number: int, rtype: str, fld: str, message: str) -> None:
    state.report.add_error(LineError(state.sources[index].name, number, fld, message), rtype)
