"""The corrections each outcome rule counts, kept per lesson, so that a refresh reads what a batch changed.

A retire of lesson L is judged by the user corrections after it that count against L (on L's topic, and
unmatched or charged ``recurred`` to a lesson that keeps L's fact); an approve, restore or roll back by the
corrections charged ``recurred`` to the lessons it made live (docs/decisions.md, "Outcomes"). Finding the
first kind means matching every correction's words against L's topic: read from the host's whole history
at every refresh, that grew with the history (docs/benchmarks.md, "Outcomes recomputed after an ingest").
So each such lesson's counted corrections are kept (``OutcomeKey``: one row per lesson and rule, the
corrections packed as arrays, after which time and as of which text and keeping lessons), and a refresh
(``KeptCharges``) brings them up to date from what changed since the last one:

- **attributions**: a session attributed again gets new attribution rows (new ids), always under the
  host's lock (``lessons.recurrence.refresh``); ``OutcomeMark`` holds the greatest id read. The kept
  corrections of every session with newer ids are dropped and counted again from that session's charges,
  for every kept lesson at once (one word index over those corrections: ``lessons.core.outcomes.TopicIndex``).
- **lessons a decision asks for the first time**, or further back than they are kept, or whose text or
  keeping lessons changed (``basis``): counted afresh from the host's corrections after their oldest
  decision.
- **sessions**: their ends are kept by the recurrence refresh (``lessons.recurrence.session_ends``).

``affected`` names the lessons whose counted corrections changed: only their retires need judging again
(with the decisions not judged yet, too early, or of another rules' version, and every approve, restore
and roll back, whose verdicts are read by lesson). A host's first refresh, a new rules' version and
``manage.py outcomes`` build everything afresh.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import reduce
from operator import itemgetter, or_
from typing import NamedTuple

import numpy as np
from django.conf import settings
from django.db.models import Max, Q

from lessons.core.outcomes import (
    CONTRADICTED_SESSIONS,
    EVIDENCE_CORRECTIONS,
    OUTCOMES_VERSION,
    Counted,
    Later,
    TopicIndex,
)
from lessons.core.recurrence import RECURRED, UNMATCHED, USER_CORRECTION, lesson_profile
from lessons.core.text import from_ms
from lessons.core.tokens import correction_tokens, tokens_match
from lessons.models import CorrectionAttribution, Draft, Host, Lesson, SessionEnd, SessionEndsKept
from lessons.recurrence.session_ends import session_ends_rebuild, session_ends_update
from lessons.recurrence.versions import EpochMs, plain_rows, rows_where_any_in
from review.models import Action, OutcomeKey, OutcomeMark

AGAINST, RECURRED_TO = OutcomeKey.AGAINST, OutcomeKey.RECURRED
# the kept rows' own rules; with the outcome rules' version, another pair rebuilds a host's rows
CHARGES_VERSION = 1
VERSION = OUTCOMES_VERSION * 1000 + CHARGES_VERSION
CHUNK = 500  # sessions or lessons per statement
CUT_CHUNK = 100  # keys whose last parts one statement deletes
# a judged decision as ``review.services.outcomes`` reads it: (id, at_ms, action, lesson_hash, created_hash,
# draft_id, ...)
AT_MS, ACTION, LESSON_HASH, CREATED_HASH, DRAFT_ID = 1, 2, 3, 4, 5
Key = tuple[int, str]  # (kind, lesson hash)

_INT64 = np.dtype("<i8")  # the packed arrays' stored form


def charges_after(host: Host, since_ms: int, *, attributed_after: int | None = None) -> list[tuple]:
    """The ``unmatched`` and ``recurred`` charges (the outcome rules read no other) of the host's user
    corrections after ``since_ms`` (or, with ``attributed_after``, those of attribution ids above it: the
    charges of the sessions attributed since), as ``TopicIndex.from_rows`` reads them: ``(correction id,
    session, at_ms, text, outcome, lesson hash or None)`` in time order (``(at_ms, id)``), a correction's
    rows together (one query)."""
    charges = CorrectionAttribution.objects.filter(
        host=host, outcome__in=(UNMATCHED, RECURRED), correction__kind=USER_CORRECTION
    )
    if attributed_after is None:
        charges = charges.filter(correction__corrected_at__gt=from_ms(since_ms))
    else:
        charges = charges.filter(id__gt=attributed_after)
    read = charges.order_by().values_list(
        "correction_id",
        "correction__session",
        EpochMs("correction__corrected_at"),
        "correction__text",
        "outcome",
        "lesson__hash",
    )
    rows = plain_rows(read)
    # time order is (at_ms, id), as ``TopicIndex`` sorts: corrections stored within one millisecond by
    # their id, not their microseconds (a stable sort of rows that come nearly in that order already)
    rows.sort(key=itemgetter(2, 0))
    return rows


def made_live(decision: Sequence, drafts: dict[str, list[str]]) -> list[str]:
    """The lessons (hashes) a judged decision (a tuple as ``review.services.outcomes`` reads it) made live:
    the consolidation an approve created, the lesson a restore brought back, the members a roll back
    brought back (``drafts``: a draft's id -> the hashes it superseded)."""
    if decision[ACTION] == Action.APPROVE:
        return [decision[CREATED_HASH]] if decision[CREATED_HASH] else []
    if decision[ACTION] == Action.RESTORE:
        return [decision[LESSON_HASH]] if decision[LESSON_HASH] else []
    return list(drafts.get(decision[DRAFT_ID] or "", []))


def rolled_back_drafts(host: Host, decisions: Iterable[Sequence]) -> dict[str, list[str]]:
    """The drafts the roll backs among ``decisions`` name: draft id -> the hashes it superseded (one
    query)."""
    ids = {d[DRAFT_ID] for d in decisions if d[ACTION] == Action.ROLLBACK and d[DRAFT_ID]}
    rows = Draft.objects.filter(host=host, ext_id__in=ids).values_list("ext_id", "supersedes")
    return {ext_id: list(supersedes) for ext_id, supersedes in rows}


class Lessons:
    """The lessons a host's judged decisions name, and for each retired one the lessons of its entity
    (live or not) that keep its fact (on its topic): read once for a refresh (a query for the named
    lessons, one for their entities' members)."""

    def __init__(self, host: Host, hashes: set[str], retired: set[str]) -> None:
        """``hashes``: every lesson named; ``retired``: those retired (a subset)."""
        named = sorted(h for h in hashes if h)
        self.text: dict[str, tuple[str, str, str, str]] = {}  # hash -> (namespace, subject, text, text_hash)
        for start in range(0, len(named), CHUNK):
            rows = Lesson.objects.filter(host=host, hash__in=named[start : start + CHUNK]).values_list(
                "hash", "namespace", "subject", "text", "text_hash"
            )
            self.text.update((h, (ns, subj, text, th)) for h, ns, subj, text, th in rows)
        entities = {self.text[h][:2] for h in retired if h in self.text}
        members: dict[tuple[str, str], list[tuple[str, frozenset[str]]]] = defaultdict(list)
        subjects = sorted({subj for _ns, subj in entities})
        for start in range(0, len(subjects), CHUNK):
            rows = Lesson.objects.filter(host=host, subject__in=subjects[start : start + CHUNK]).values_list(
                "namespace", "subject", "hash", "text"
            )
            for ns, subj, h, text in rows:
                if (ns, subj) in entities:
                    members[(ns, subj)].append((h, correction_tokens(text)))
        self.kept: dict[str, list[str]] = {}
        for h in retired:
            ns, subj, text, _th = self.text.get(h, ("", "", "", ""))
            content, anchors = lesson_profile(text)
            self.kept[h] = sorted(
                m
                for m, words in members.get((ns, subj), [])
                if m != h and tokens_match(content=content, full_anchors=anchors, tokens=words)
            )

    def topic(self, lesson_hash: str) -> str:
        """The text of a lesson (``""``: not stored)."""
        return self.text.get(lesson_hash, ("", "", "", ""))[2]

    def basis(self, key: Key) -> str:
        """What a key's counted corrections depend on besides the attributions, as 16 hex digits: the
        lesson's text and, for ``AGAINST``, the lessons that keep its fact."""
        kind, lesson_hash = key
        parts = [str(kind), self.text.get(lesson_hash, ("", "", "", ""))[3]]
        if kind == AGAINST:
            parts += self.kept.get(lesson_hash, [])
        return hashlib.blake2b("\n".join(parts).encode(), digest_size=8).hexdigest()


def keys_asked(decisions: Sequence[Sequence], drafts: dict[str, list[str]]) -> dict[Key, int]:
    """The kept lessons ``decisions`` ask for: ``(AGAINST, retired lesson)`` and ``(RECURRED_TO, lesson made
    live)``, each with the time (epoch ms) of the oldest decision that asks for it."""
    floors: dict[Key, int] = {}
    for d in decisions:
        if d[ACTION] == Action.RETIRE:
            keys = [(AGAINST, d[LESSON_HASH] or "")]
        else:
            keys = [(RECURRED_TO, h) for h in made_live(d, drafts)]
        for key in keys:
            floors[key] = min(floors.get(key, d[AT_MS]), d[AT_MS])
    return floors


class Packed(NamedTuple):
    """One kept lesson's counted corrections as int64 arrays in time order (``(at_ms, id)``): their ids, times
    (epoch ms, UTC) and sessions (``SessionEnd`` ids)."""

    ids: np.ndarray
    times: np.ndarray
    sessions: np.ndarray

    @classmethod
    def empty(cls) -> Packed:
        return cls(*(np.empty(0, dtype=np.int64) for _ in range(3)))

    @classmethod
    def decode(cls, *columns: bytes | memoryview) -> Packed:
        """From the stored ``OutcomeKey`` columns (bytes on SQLite, a memoryview on PostgreSQL): read-only
        arrays over them (little-endian int64 is the native int64 here: no copy)."""
        return cls(*(np.frombuffer(column, dtype=_INT64).astype(np.int64, copy=False) for column in columns))

    @classmethod
    def joined(cls, parts: Sequence[Packed]) -> Packed:
        """``parts`` (each in time order, each after the one before it) as one."""
        if len(parts) == 1:
            return parts[0]
        return cls(*(np.concatenate(column) for column in zip(*parts, strict=True)))

    def encoded(self) -> tuple[bytes, bytes, bytes]:
        return tuple(column.astype(_INT64).tobytes() for column in self)

    def where(self, keep: np.ndarray | slice) -> Packed:
        return Packed(*(column[keep] for column in self))

    def merged(self, other: Packed) -> Packed:
        """Both, in time order (``(at_ms, id)``), each correction once."""
        ids, times, sessions = (np.concatenate(pair) for pair in zip(self, other, strict=True))
        order = np.lexsort((ids, times))
        ids, times, sessions = ids[order], times[order], sessions[order]
        first = np.ones(len(ids), dtype=bool)
        first[1:] = ids[1:] != ids[:-1]  # one correction has one time: its copies are neighbours
        return Packed(ids[first], times[first], sessions[first])


class Kept(NamedTuple):
    """One key's kept rows as read: its floor (epoch ms) and basis, its corrections (every part, in order)
    and how many each part holds."""

    floor: int
    basis: str
    packed: Packed
    parts: tuple[int, ...]


def parts_kept(host: Host) -> dict[Key, Kept]:
    """The host's kept rows, each key's parts joined (one query)."""
    rows = (
        OutcomeKey.objects.filter(host=host)
        .order_by("kind", "lesson_hash", "part")
        .values_list("kind", "lesson_hash", "floor_ms", "basis", "corrections", "times", "sessions")
    )
    found: dict[Key, tuple[int, str, list[Packed]]] = {}
    for kind, h, floor, basis, *columns in rows:
        found.setdefault((kind, h), (floor, basis, []))[2].append(Packed.decode(*columns))
    return {
        key: Kept(floor, basis, Packed.joined(parts), tuple(len(p.ids) for p in parts))
        for key, (floor, basis, parts) in found.items()
    }


def first_part_written(parts: Sequence[int], times: np.ndarray, changed_from: int, total: int) -> int:
    """Which part a refresh rewrites for a key whose kept corrections were cut in ``parts`` (their
    lengths; ``times``: those corrections' times, epoch ms) and now number ``total``, all of them at or after
    ``changed_from`` (epoch ms) being new or dropped: the parts before it hold only corrections before
    ``changed_from``, unchanged (the new corrections begin the same), and it takes every correction from
    its start on. A part is also rewritten, with those after it, when it holds no more than what follows
    it: part sizes then fall geometrically, so a correction is rewritten a few times over a history, not
    at every refresh, and a key has few parts."""
    if not len(times):
        return 0
    ends = np.cumsum(parts)
    k = int(np.searchsorted(times[ends - 1], changed_from, side="left")) if len(parts) else 0
    while k and parts[k - 1] <= total - int(ends[k - 1]):
        k -= 1
    return k


def kept_since(host: Host) -> int | None:
    """The log's seq up to which the last refresh read ``host``'s decisions (``OutcomeMark.decision_seq``),
    when its kept counted corrections can be brought up to date from what changed (kept under these rules
    and ``OUTCOME_SUPPORT_SESSIONS``, and the host's session ends kept); None when they are to be built
    afresh and every decision judged again (two queries)."""
    mark = (
        OutcomeMark.objects.filter(host=host)
        .values_list("version", "support_sessions", "decision_seq")
        .first()
    )
    if mark is None or mark[:2] != (VERSION, settings.OUTCOME_SUPPORT_SESSIONS):
        return None  # never kept, other rules, or another count of sessions to support a retire
    return mark[2] if SessionEndsKept.objects.filter(host=host).exists() else None


class KeptCharges:
    """Bring a host's kept counted corrections up to date (module docstring) for ``decisions``, in the
    caller's transaction, under the host's lock (``lock_host``), and mark them read up to the log's seq
    ``decision_seq``: with ``full`` (the caller's choice, when ``kept_since`` is None or asked for),
    ``decisions`` are every judged decision of the host and the rows are built afresh (``rebuilt``);
    otherwise they are the host's decisions judged anew (every one after ``kept_since``, and every approve,
    restore and roll back) and the keys the others ask for, with their floors, are the kept ones. After
    it, ``packed`` holds every asked key's corrections, and ``affected`` the keys whose corrections changed
    (every key when ``rebuilt``)."""

    def __init__(
        self, host: Host, decisions: Sequence[Sequence], *, decision_seq: int, full: bool = False
    ) -> None:
        self.host = host
        self.drafts = rolled_back_drafts(host, decisions)
        mark = OutcomeMark.objects.filter(host=host).first()
        top = CorrectionAttribution.objects.filter(host=host).aggregate(top=Max("id"))["top"] or 0
        self.rebuilt = full
        stored: dict[Key, Kept] = {}
        floors = keys_asked(decisions, self.drafts)
        if self.rebuilt:
            OutcomeKey.objects.filter(host=host).delete()
            session_ends_rebuild(host.id)
        else:
            stored = parts_kept(host)
            for (kind, h), kept in stored.items():
                if kind == AGAINST:  # a retire's lesson is asked for as long as the retire stands: always
                    floors[(kind, h)] = min(floors.get((kind, h), kept.floor), kept.floor)
        retired = {h for kind, h in floors if kind == AGAINST}
        self.lessons = Lessons(host, {h for _kind, h in floors}, retired)
        for kind in (AGAINST, RECURRED_TO):  # no decision asks for these now (a draft changed)
            self._drop(kind, [h for k, h in stored.keys() - floors.keys() if k == kind])
        bases = {key: self.lessons.basis(key) for key in floors}
        fresh = {
            key: floor
            for key, floor in floors.items()
            if key not in stored or stored[key].floor > floor or stored[key].basis != bases[key]
        }
        self.fresh = set(fresh)
        self.changed_from: dict[Key, int] = {}  # key -> the time (epoch ms) of its first correction changed
        self.packed: dict[Key, Packed] = {key: stored[key].packed for key in floors if key not in fresh}
        changed: dict[Key, Packed] = {}
        if not self.rebuilt and top > mark.attribution:
            changed = self._recount_sessions(
                mark.attribution, {key: stored[key].floor for key in self.packed}
            )
        changed.update(self._count_afresh(fresh))
        self.packed.update(changed)
        self.affected: set[Key] = set(changed)
        self._write(
            changed,
            stored,
            {key: floors[key] if key in fresh else stored[key].floor for key in changed},
            bases,
        )
        OutcomeMark.objects.update_or_create(
            host=host,
            defaults={
                "attribution": top,
                "version": VERSION,
                "decision_seq": decision_seq,
                "support_sessions": settings.OUTCOME_SUPPORT_SESSIONS,
            },
        )

    def _write(
        self,
        changed: dict[Key, Packed],
        stored: dict[Key, Kept],
        floors: dict[Key, int],
        bases: dict[Key, str],
    ) -> None:
        """Store the ``changed`` keys' corrections (``floors``: each key's floor, epoch ms; ``bases``: its
        basis): for a key counted again from some sessions, the part ``first_part_written`` names (every
        correction from its start on) and no part after it; for a key counted afresh, one part 0, written
        even when empty (a key without a row is counted afresh at every refresh)."""
        write, cut = [], []  # cut: (kind, lesson hash, the first part deleted)
        for key, packed in sorted(changed.items(), key=itemgetter(0)):
            kind, h = key
            old = stored.get(key)
            k = start = 0
            if key in self.changed_from and old is not None:
                k = first_part_written(old.parts, old.packed.times, self.changed_from[key], len(packed.ids))
                start = sum(old.parts[:k])
            tail = packed.where(slice(start, None))
            written = bool(len(tail.ids)) or k == 0
            if written:
                columns = dict(zip(("corrections", "times", "sessions"), tail.encoded(), strict=True))
                write.append(
                    OutcomeKey(
                        host=self.host,
                        kind=kind,
                        lesson_hash=h,
                        part=k,
                        floor_ms=floors[key],
                        basis=bases[key],
                        **columns,
                    )
                )
            if old is not None and len(old.parts) > k + written:
                cut.append((kind, h, k + written))
        for start in range(0, len(cut), CUT_CHUNK):  # an OR of a few conditions each: SQLite nests ORs
            some = (
                Q(kind=kind, lesson_hash=h, part__gte=part)
                for kind, h, part in cut[start : start + CUT_CHUNK]
            )
            OutcomeKey.objects.filter(reduce(or_, some), host=self.host).delete()
        OutcomeKey.objects.bulk_create(
            write,
            batch_size=CHUNK,
            update_conflicts=True,
            unique_fields=["host", "kind", "lesson_hash", "part"],
            update_fields=["floor_ms", "basis", "corrections", "times", "sessions"],
        )

    def _recount_sessions(self, after_id: int, held: dict[Key, int]) -> dict[Key, Packed]:
        """Count again, for the ``held`` keys (key -> floor), the sessions with attributions newer than
        ``after_id``: each key's corrections of those sessions dropped and counted from their charges as
        they are now. Returns the keys whose corrections changed, with them."""
        codes = self._attributed_since(after_id)
        rows = charges_after(self.host, 0, attributed_after=after_id)
        missing = {row[1] for row in rows} - codes.keys()
        if missing:  # ends not kept yet (``session_ends``): written now, as a count needs them
            codes.update(self._codes(missing))
        again = np.array(sorted(codes.values()), dtype=np.int64)
        counted = self._count(rows, held, codes)
        changed: dict[Key, Packed] = {}
        for key in held:
            old = self.packed[key]
            keep = ~np.isin(old.sessions, again)
            if key in counted or not keep.all():
                added = counted.get(key, Packed.empty())
                changed[key] = old.where(keep).merged(added)
                self.changed_from[key] = int(np.concatenate((old.times[~keep], added.times)).min())
        return changed

    def settled(self, key: Key, at_ms: np.ndarray) -> np.ndarray:
        """For contradicted outcomes of decisions at ``at_ms`` (an int64 array, epoch ms) asking for ``key``
        (stored by the last refresh), whether each can only stay as it is (a bool array): the key's
        corrections changed only after the ``EVIDENCE_CORRECTIONS`` it lists (so those are the same), which
        hold two sessions or more (so it stays contradicted), and what it rests on did not change (not a key
        counted afresh)."""
        if key not in self.changed_from:
            return np.full(len(at_ms), key not in self.fresh)
        if CONTRADICTED_SESSIONS != 2:  # what follows counts changes of session: the right test for two only
            return np.zeros(len(at_ms), dtype=bool)
        times, sessions = self.packed[key].times, self.packed[key].sessions
        start = np.searchsorted(times, at_ms, side="right")
        last = start + EVIDENCE_CORRECTIONS - 1  # the position of the last one listed
        listed = last < len(times)
        listed[listed] &= times[last[listed]] < self.changed_from[key]
        # CONTRADICTED_SESSIONS (2) sessions among those listed: a change of session between two neighbours
        turns = np.flatnonzero(sessions[1:] != sessions[:-1])  # j: sessions[j] != sessions[j + 1]
        k = np.searchsorted(turns, start)
        two = k < len(turns)
        two[two] &= turns[k[two]] < last[two]
        return listed & two

    def unsettled(self, key: Key) -> list[tuple[int | None, int | None]] | None:
        """Where the contradicted outcomes of retires asking for ``key`` (one of ``affected``) may not be
        ``settled``: ranges ``[low, high)`` of the retires' times (epoch ms; None: unbounded) that hold every
        such retire, so the database reads those only; None: every retire (the key was counted afresh). A
        retire is not settled when fewer than ``EVIDENCE_CORRECTIONS`` corrections before the first one
        changed come after it (one range, from the time of the ``EVIDENCE_CORRECTIONS``-th before it on), or
        when the ones it lists are of one session (a range for each run of such first corrections)."""
        if key not in self.changed_from:
            return None
        if CONTRADICTED_SESSIONS != 2:  # as ``settled``: every contradicted retire judged again
            return [(None, None)]
        times, sessions = self.packed[key].times, self.packed[key].sessions
        before = int(np.searchsorted(times, self.changed_from[key], side="left"))  # corrections before it
        if before < EVIDENCE_CORRECTIONS:
            return [(None, None)]
        ranges: list[tuple[int | None, int | None]] = [(int(times[before - EVIDENCE_CORRECTIONS]), None)]
        # a retire's first listed correction is the s-th when times[s - 1] <= at < times[s]; its list
        # sessions[s : s + EVIDENCE_CORRECTIONS] is of one session when no neighbours in it differ
        turns = np.concatenate(([0], np.cumsum(sessions[1:] != sessions[:-1])))
        starts = np.arange(before - EVIDENCE_CORRECTIONS + 1)
        alone = starts[turns[starts + EVIDENCE_CORRECTIONS - 1] == turns[starts]]
        for run in np.split(alone, np.flatnonzero(np.diff(alone) != 1) + 1) if len(alone) else []:
            first, last = int(run[0]), int(run[-1])
            ranges.append((int(times[first - 1]) if first else None, int(times[last])))
        return ranges

    def _count_afresh(self, fresh: dict[Key, int]) -> dict[Key, Packed]:
        """The corrections of the ``fresh`` keys (key -> floor), counted from the host's corrections after the
        oldest of their floors."""
        if not fresh:
            return {}
        counted = self._count(charges_after(self.host, min(fresh.values())), fresh)
        return {key: counted.get(key, Packed.empty()) for key in fresh}

    def _count(
        self, rows: list[tuple], keys: dict[Key, int], codes: dict[str, int] | None = None
    ) -> dict[Key, Packed]:
        """For each of ``keys`` (key -> floor), the corrections of ``rows`` (``charges_after``'s) it counts
        after its floor; keys with none are left out. ``codes``: the ``SessionEnd`` ids of the rows'
        sessions, when the caller has them."""
        against = {h for kind, h in keys if kind == AGAINST}
        index = TopicIndex.from_rows(rows, topics={"", *(self.lessons.topic(h) for h in against)})
        codes = self._codes(index.session_names) if codes is None else codes
        ends = np.array([codes[name] for name in index.session_names], dtype=np.int64)  # by session code
        found: dict[Key, Packed] = {}
        for (kind, h), floor in keys.items():
            if kind == AGAINST:
                later = index.against(self.lessons.topic(h), self.lessons.kept.get(h, []))
            else:
                later = index.recurred([h])
            ids, times, sessions = index.columns(later, later.start(floor))
            if len(ids):
                found[(kind, h)] = Packed(ids, times, ends[sessions])
        return found

    def _attributed_since(self, after_id: int) -> dict[str, int]:
        """The ``SessionEnd`` id of each session with attributions newer than ``after_id`` (attributed
        again since), found by one query from the kept ends (a session whose end is not kept has no
        corrections kept either: ``_count`` writes its end when it counts one, ``_codes``)."""
        attributed = CorrectionAttribution.objects.filter(host=self.host, id__gt=after_id).values("session")
        ends = SessionEnd.objects.filter(host=self.host, session__in=attributed).order_by()
        return dict(plain_rows(ends.values_list("session", "id")))

    def _codes(self, sessions: Iterable[str]) -> dict[str, int]:
        """The ``SessionEnd`` id of each of ``sessions`` (names), the ends of any not kept yet written first
        (a session's end is kept from the first refresh on: ``lessons.recurrence.session_ends``)."""
        names = sorted(set(sessions))
        codes: dict[str, int] = {}
        read = SessionEnd.objects.filter(host=self.host).order_by().values_list("session", "id")
        for start in range(0, len(names), CHUNK):
            codes.update(rows_where_any_in(read, [("session", names[start : start + CHUNK])]))
        missing = [name for name in names if name not in codes]
        if missing:
            session_ends_update(self.host.id, missing)
            codes.update(rows_where_any_in(read, [("session", missing)]))
        return codes

    def _drop(self, kind: int, hashes: list[str]) -> None:
        names = sorted(hashes)
        for start in range(0, len(names), CHUNK):
            OutcomeKey.objects.filter(
                host=self.host, kind=kind, lesson_hash__in=names[start : start + CHUNK]
            ).delete()


class _Named(Sequence):
    """A ``Packed``'s corrections as ``Counted``, each made when asked for, its session named from
    ``names`` (``SessionEnd`` id -> session)."""

    def __init__(self, packed: Packed, names: dict[int, str]) -> None:
        self._packed, self._names = packed, names

    def __len__(self) -> int:
        return len(self._packed.ids)

    def __getitem__(self, i):  # an int (Later reads positions one by one)
        ids, times, sessions = self._packed
        return Counted(int(ids[i]), self._names[int(sessions[i])], int(times[i]))


def kept_later(packed: Packed, names: dict[int, str]) -> Later:
    """``packed``'s corrections as a ``Later`` (``names``: the sessions it may list, by ``SessionEnd`` id)."""
    return Later.of(_Named(packed, names), np.arange(len(packed.ids)), packed.times, packed.sessions)


def session_names(host: Host, codes: Iterable[int]) -> dict[int, str]:
    """``SessionEnd`` id -> session, for ``codes`` (a query a ``CHUNK``)."""
    wanted = sorted(set(codes))
    names: dict[int, str] = {}
    for start in range(0, len(wanted), CHUNK):
        names.update(
            SessionEnd.objects.filter(host=host, id__in=wanted[start : start + CHUNK]).values_list(
                "id", "session"
            )
        )
    return names
