"""Keeping recurrence current: per-correction attributions and per-lesson counts in the database.

The attribution itself is the pure ``lessons.core.recurrence.attribute``; this module feeds it one
chunk of sessions at a time and stores what it returns:

- ``CorrectionAttribution``: one row per ``user_correction`` and charged lesson (unmatched ones get a
  row without a lesson). A correction's attribution depends only on its own session's exposures and
  the texts of the lesson keys that session saw, so a session's rows can be rebuilt on their own.
- ``RecurrenceCount``: one row per current lesson version, the seven counts summed in SQL from the
  attribution rows (``recurred_sessions`` as distinct sessions) and from the exposures
  (``sessions_shown``: distinct sessions shown the current text).

``recurrence_changes_refresh`` is the one refresh of a transaction's ``RecurrenceChanges``: ingest runs it
at the end of its own transaction; ``lessons.services.status`` runs it once a decision's status changes
are committed. ``recurrence_recompute`` rebuilds everything (``manage.py recurrence --recompute``).
Every writer locks the host row first.
Memory stays bounded by ``ATTRIBUTE_CHUNK`` sessions plus one host's lesson texts. Within
``recurrence_worker`` (``manage.py ingest``) a host rebuilt whole is attributed in a forked worker
(``lessons.recurrence.attributing``), with the same rows in the same order.
docs/piles-and-recurrence.md, "Recurrence".
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter

from django.db import transaction
from django.db.models import Count, Q

from lessons.core.recurrence import (
    AMBIGUOUS,
    COUNT_FIELDS,
    DURING,
    EARLIER_VERSION,
    RECURRED,
    UNKNOWN,
    USER_CORRECTION,
    LessonKey,
    LessonVersion,
    attribute_corrections,
)
from lessons.ingest.memory import release_freed_memory
from lessons.ingest.writer import Table
from lessons.models import (
    Correction,
    CorrectionAttribution,
    Exposure,
    Host,
    Lesson,
    RecurrenceCount,
    ShownText,
)
from lessons.recurrence import first_ingest
from lessons.recurrence.attributing import (
    SESSION_CHUNK,
    HostAttribution,
    ProfileMemo,
    attribution_rows,
    attribution_worker,
    core_signals,
    read_signals,
    shown_pairs,
)
from lessons.recurrence.session_ends import session_ends_update
from lessons.recurrence.versions import (
    KEY_CHUNK,
    Version,
    current_versions,
    host_versions,
    key_of,
    key_versions,
    shown_texts,
    shown_versions,
)
from lessons.services.entity_counts import CountChanges

# Sessions per call of the pure attribute(): it rebuilds the token profiles of every version it is
# given, so larger chunks build each profile fewer times; memory grows with the chunk's signals.
ATTRIBUTE_CHUNK = 5000
# A host rebuilt whole with the worker (lessons.recurrence.attributing): smaller chunks, so that less of
# the work waits at either end (the first chunk's reading, the last one's attribution); the memo is the
# host's whatever the chunks.
WORKER_CHUNK = 1000
WRITE_BATCH = 500
# Beyond this many changed sessions on one host, rebuilding the host reads less than the lookups would.
FULL_REFRESH_SESSIONS = 20_000
# From this many changed sessions on, a host is rebuilt whole too when they are at least 1/REBUILD_SHARE
# of its sessions shown (a first ingest of a host's history): the rebuild reads each row once, where the
# per-session refresh reads and deletes by session and sums the counts key by key (20% more at 10,000
# sessions of a fresh host).
REBUILD_FLOOR = 1_000
REBUILD_SHARE = 2


@dataclass
class RecurrenceStats:
    """What a refresh or recompute did: hosts rebuilt, sessions attributed, rows written; ``counts``: the
    entities whose recurring members may have moved (``EntityCount``), refreshed by whoever made the
    stats once its work is done (or handed to the caller's own refresh)."""

    hosts: int = 0
    sessions: int = 0
    attributions: int = 0
    lessons: int = 0
    counts: CountChanges = field(default_factory=CountChanges)


@dataclass
class RecurrenceChanges:
    """What a transaction changed that recurrence depends on.

    ``sessions``: ``(host_id, session)`` pairs that gained exposures or corrections; ``keys``: per host id,
    the lesson keys (docs/piles-and-recurrence.md, "Recurrence") whose versions were created or changed (text,
    identity or status).
    """

    sessions: set[tuple[int, str]] = field(default_factory=set)
    keys: dict[int, set[LessonKey]] = field(default_factory=lambda: defaultdict(set))

    def add_lessons(self, lessons: Iterable[Lesson]) -> None:
        """Note the keys of ``lessons`` (rows created or whose status changed)."""
        for lesson in lessons:
            self.keys[lesson.host_id].add(key_of(lesson))

    def clear(self) -> None:
        self.sessions.clear()
        self.keys.clear()


def recurrence_changes_refresh(
    *, changes: RecurrenceChanges, counts: CountChanges | None = None
) -> RecurrenceStats:
    """The one refresh of a transaction's ``changes``: the changed sessions are attributed again
    (``recurrence_refresh``), then each changed key's counts follow its current version
    (``recurrence_keys_changed``). Host locks are taken in id order. Returns ``RecurrenceStats``.

    Which keys are off their current version is read before the sessions are refreshed: refreshing a
    session moves the counts of every key it saw onto that key's current version, after which such a
    key would look unchanged, and the sessions outside the batch that saw it would keep attributions
    made against its old current text. The batch's own sessions are not attributed twice.

    The entities whose counts moved go to ``counts`` when given (ingest's one refresh at its end), else
    their ``EntityCount`` rows are refreshed here, after the host locks.
    """
    stats = RecurrenceStats()
    sessions: dict[int, set[str]] = defaultdict(set)
    for host_id, session in changes.sessions:
        sessions[host_id].add(session)
    keyed = sorted(host_id for host_id, keys in changes.keys.items() if keys)
    if not changes.sessions:  # each call takes its host lock, in id order
        for host_id in keyed:
            recurrence_keys_changed(host_id=host_id, keys=changes.keys[host_id], stats=stats)
        return _counts_done(stats, counts)
    # A host with this many changed sessions is rebuilt whole (recurrence_refresh): every session
    # attributed, every key's counts on its current version; its keys need no check of their own.
    rebuilt = {host_id for host_id, names in sessions.items() if _rebuild_whole(host_id, len(names))}
    keyed = [host_id for host_id in keyed if host_id not in rebuilt]
    versions = _Versions()  # no lesson changes while this runs: each key's versions are read once
    with transaction.atomic():
        for host_id in sorted(set(keyed) | set(sessions)):
            _lock_host(host_id)
        stale = {host_id: _stale_keys(host_id, changes.keys[host_id], versions) for host_id in keyed}
        recurrence_refresh(sessions=changes.sessions, stats=stats, versions=versions, rebuild=rebuilt)
        for host_id in keyed:
            recurrence_keys_changed(
                host_id=host_id,
                keys=changes.keys[host_id],
                stats=stats,
                stale=stale[host_id],
                skip_sessions=sessions[host_id],
                versions=versions,
            )
        return _counts_done(stats, counts)


def _counts_done(stats: RecurrenceStats, counts: CountChanges | None) -> RecurrenceStats:
    """Hand the entities ``stats`` noted to ``counts``, or refresh them now when there is none."""
    if counts is not None:
        counts.update(stats.counts)
        stats.counts.clear()
    else:
        stats.counts.apply()
    return stats


def recurrence_recompute(*, host: Host | None = None) -> RecurrenceStats:
    """Rebuild every attribution and count, of one host or of all hosts, in one transaction.

    Attributes ``ATTRIBUTE_CHUNK`` sessions at a time, reading ``SESSION_CHUNK`` per query, so memory is
    bounded by a chunk plus the host's lesson texts. Locks each host row while it works (see
    ``_lock_host``). Returns ``RecurrenceStats``. docs/piles-and-recurrence.md ("Recurrence").
    """
    stats = RecurrenceStats()
    hosts = [host.id] if host is not None else list(Host.objects.order_by("id").values_list("id", flat=True))
    with transaction.atomic():
        for host_id in hosts:
            _lock_host(host_id)
            _recompute_host(host_id, stats)
        stats.counts.apply()
    return stats


def recurrence_refresh(
    *,
    sessions: Iterable[tuple[int, str]] = (),
    host_ids: Iterable[int] = (),
    stats: RecurrenceStats | None = None,
    versions: _Versions | None = None,
    rebuild: Collection[int] | None = None,
) -> RecurrenceStats:
    """Bring attributions and counts up to date after new exposures, corrections or lessons.

    ``sessions``: ``(host_id, session)`` pairs that gained exposures or corrections; only their
    attributions are rebuilt, then the counts of the lessons they touch. ``host_ids``: hosts whose
    lessons were created or changed (a new version can change a key's current text, which changes
    attributions in every session that saw the key), rebuilt in full. Runs in the caller's
    transaction when there is one (ingest calls it inside its own). Returns ``RecurrenceStats``; with
    ``stats`` given, adds to it and leaves the entity counts to its owner. ``versions``: the caller's
    ``_Versions`` when its own refresh reads the same keys (no lesson may change meanwhile). A host with
    many changed sessions is rebuilt in full too (``_rebuild_whole``), or, with ``rebuild`` given, the
    hosts of ``sessions`` it names (the caller decided).
    """
    owner = stats is None
    versions = _Versions() if versions is None else versions
    stats = stats or RecurrenceStats()
    full = set(host_ids)
    by_host: dict[int, set[str]] = defaultdict(set)
    for host_id, session in sessions:
        by_host[host_id].add(session)
    with transaction.atomic():
        # One pass in host id order, so two refreshes always take the host locks in the same order.
        for host_id in sorted(full | set(by_host)):
            _lock_host(host_id)
            session_ends_update(host_id, by_host[host_id])  # under the lock (lessons.recurrence.session_ends)
            whole = _rebuild_whole(host_id, len(by_host[host_id])) if rebuild is None else host_id in rebuild
            if host_id in full or whole:
                _recompute_host(host_id, stats)
            else:
                _refresh_sessions(
                    host_id, sorted(by_host[host_id]), changed_keys=set(), stats=stats, versions=versions
                )
        if owner:
            stats.counts.apply()
    return stats


def recurrence_lessons_changed(*, lessons: Iterable[Lesson]) -> RecurrenceStats:
    """Reassign counts when lessons were created or changed status (retire, restore, consolidation).

    A status change can move a key's current version (live, else newest) to another text, which
    changes attributions (``recurred`` versus ``earlier_version``) in every session that saw the key.
    For each key whose count row is no longer exactly on its current version, the sessions exposed
    to the key are re-attributed and the key's counts moved; a key whose current version is
    unchanged is only read. docs/piles-and-recurrence.md, "Recurrence".
    """
    changes = RecurrenceChanges()
    changes.add_lessons(lessons)
    return recurrence_changes_refresh(changes=changes)


def recurrence_keys_changed(
    *,
    host_id: int,
    keys: Iterable[LessonKey],
    stats: RecurrenceStats | None = None,
    stale: Collection[LessonKey] = (),
    skip_sessions: Collection[str] = (),
    versions: _Versions | None = None,
) -> RecurrenceStats:
    """``recurrence_lessons_changed`` for lesson keys of one host (see there), under the host lock.

    ``stale``: keys found off their current version before the caller refreshed ``skip_sessions``
    (those sessions are up to date): the other sessions that saw them are attributed again too.
    ``versions``: as ``recurrence_refresh``'s.
    """
    owner = stats is None
    versions = _Versions() if versions is None else versions
    stats = stats or RecurrenceStats()
    with transaction.atomic():
        _lock_host(host_id)
        changed = _stale_keys(host_id, keys, versions)
        exposed = _sessions_shown(host_id, changed | set(stale)) - set(skip_sessions)
        if exposed:
            changed |= set(stale)
        if changed:
            _refresh_sessions(host_id, sorted(exposed), changed_keys=changed, stats=stats, versions=versions)
        if owner:
            stats.counts.apply()
    return stats


def recurrence_stale_keys(*, host_id: int, keys: Iterable[LessonKey]) -> set[LessonKey]:
    """The ``keys`` of host ``host_id`` whose stored count rows are not exactly one row on their current
    version (read only; a background recount notes them when it is queued, review/services/recount.py)."""
    return _stale_keys(host_id, keys)


def _stale_keys(host_id: int, keys: Iterable[LessonKey], found: _Versions | None = None) -> set[LessonKey]:
    """The ``keys`` whose stored count rows are not exactly one row on their current version."""
    versions = (_Versions() if found is None else found)(host_id, keys)
    current = current_versions(versions)
    with_rows = set(
        RecurrenceCount.objects.filter(lesson_id__in=[v.id for v in versions]).values_list(
            "lesson_id", flat=True
        )
    )
    ids_of: dict[LessonKey, set[int]] = defaultdict(set)
    for v in versions:
        ids_of[v.key].add(v.id)
    return {key for key, version in current.items() if (with_rows & ids_of[key]) != {version.id}}


def _sessions_shown(host_id: int, keys: set[LessonKey]) -> set[str]:
    if not keys:
        return set()
    # Deduplicated here: a DISTINCT would make SQLite walk the session index of the whole host.
    # KEY_CHUNK keys per query: after a fresh ingest every new key is stale, thousands of them.
    found: set[str] = set()
    for chunk in _chunks(sorted(keys), KEY_CHUNK):
        rows = Exposure.objects.filter(host_id=host_id, lesson_key__in=chunk)
        found.update(rows.values_list("session", flat=True))
    return found


def _rebuild_whole(host_id: int, changed: int) -> bool:
    """Whether a refresh of ``changed`` sessions of host ``host_id`` rebuilds the host whole: more than
    ``FULL_REFRESH_SESSIONS``, or from ``REBUILD_FLOOR`` on when they are at least 1/``REBUILD_SHARE`` of
    the host's sessions shown (counted up to that share only: the read grows with ``changed``, not with
    the host). The same result either way; only the cost differs."""
    if changed > FULL_REFRESH_SESSIONS:
        return True
    if changed < REBUILD_FLOOR:
        return False
    limit = changed * REBUILD_SHARE
    shown = Exposure.objects.filter(host_id=host_id).order_by().values("session").distinct()[: limit + 1]
    return shown.count() <= limit


def lock_host(host_id: int) -> None:
    """Lock host ``host_id``'s row until the transaction ends, as every writer of its attributions and
    counts does first (``review.services.outcomes`` reads them under it)."""
    _lock_host(host_id)


def _lock_host(host_id: int) -> None:
    # Counts are sums read back from the stored rows: two writers recomputing the same lesson's
    # counts at once (PostgreSQL, READ COMMITTED) would each miss the other's rows. The host row
    # serializes them; SQLite already serializes every write transaction.
    Host.objects.select_for_update().filter(id=host_id).values_list("id", flat=True).first()


# --- internals ---------------------------------------------------------------------------------


def _chunks(items: list, size: int) -> Iterable[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _recompute_host(host_id: int, stats: RecurrenceStats) -> None:
    stats.hosts += 1
    stats.counts.hosts.add(host_id)
    host, current, candidates = _host_request(host_id)
    CorrectionAttribution.objects.filter(host_id=host_id).delete()
    first = first_ingest.running()
    if first is not None:
        first.settle()  # its answer in flight first: the worker takes one request at a time
    found = None
    if first is not None and first.host_id == host_id and not candidates.any_texts:
        release_freed_memory()  # as the rebuild does (_attribute_host): the write phase's page cache
        found = first.stored(host, _insert_released)  # attributed while the rows were written
    if found is None:
        _attribute_host(host_id, host, candidates, stats)
        _store_counts(host_id, current, full=True, stats=stats)
    else:
        sessions, written, counts = found
        stats.sessions += sessions
        stats.attributions += written
        _upsert_count_rows(counts, stats)
    stale = set(RecurrenceCount.objects.filter(lesson__host_id=host_id).values_list("lesson_id", flat=True))
    stale -= {v.id for v in current.values()}
    for chunk in _chunks(sorted(stale), KEY_CHUNK):
        RecurrenceCount.objects.filter(lesson_id__in=chunk).delete()


def _insert_released(rows: list[tuple]) -> None:
    """``_insert_attributions`` after handing back the page cache SQLite wrote out meanwhile."""
    release_freed_memory()
    _insert_attributions(rows)


def host_attribution_request(host_id: int) -> tuple:
    """``Attributor``'s ``"host"`` request of host ``host_id`` as its rebuild reads it now: ``("host",
    host_id, every version's ``LessonVersion`` fields, {key: id of its current version})``
    (``lessons.recurrence.first_ingest`` gives it to the worker when the host's first row is written)."""
    return _host_request(host_id)[0]


def _host_request(host_id: int) -> tuple[tuple, dict[LessonKey, Version], _HostCandidates]:
    """``host_attribution_request``'s request, the current version of each key, the rebuild's candidates."""
    versions = list(host_versions(host_id=host_id))
    current = current_versions(versions)
    candidates = _HostCandidates(host_id, versions, current)
    del versions  # the candidates hold what the chunks need (the peak memory of a large rebuild is here)
    request = ("host", host_id, candidates.versions(), {key: v.id for key, v in current.items()})
    return request, current, candidates


def _attribute_host(host_id: int, host: tuple, candidates: _HostCandidates, stats: RecurrenceStats) -> None:
    """Attribute every session of the host with a user correction, chunk by chunk (in the worker when
    there is one), and store the rows."""
    # Only sessions with a user correction can produce attributions; sessions_shown is counted in SQL.
    sessions = sorted(
        set(
            Correction.objects.filter(host_id=host_id, kind=USER_CORRECTION)
            .values_list("session", flat=True)
            .distinct()
        )
    )
    # Right after ingest's write phase, reading the versions and sessions made SQLite write out most of
    # its page cache (a dirty page for each page read past the cache's size): hand the freed pages back
    # before the versions' copy for the attributor is made (lessons.ingest.memory).
    release_freed_memory()
    worker = attribution_worker()
    # Every chunk may see most of the host's versions: the attributor keeps each text's tokens (ProfileMemo).
    attribution = HostAttribution(host, worker)
    for chunk in _chunks(sessions, ATTRIBUTE_CHUNK if worker is None else WORKER_CHUNK):
        release_freed_memory()  # the write phase's page cache, written out by now (lessons.ingest.memory)
        correction_rows, exposure_rows = read_signals(host_id, chunk)
        texts = candidates.texts(correction_rows, exposure_rows)
        request = ("chunk", correction_rows, exposure_rows, [tuple(t) for t in texts])
        _store_attributions(attribution.chunk(request, len(chunk)), stats)
    _store_attributions(attribution.finish(), stats)


class _Versions:
    """The versions of lesson keys (``key_versions``), each key read once: for one refresh, during which
    no lesson changes. Called as ``versions(host_id, keys)``: the versions of ``keys``, in id order."""

    def __init__(self) -> None:
        self._of: dict[int, dict[LessonKey, list[Version]]] = defaultdict(dict)

    def __call__(self, host_id: int, keys: Iterable[LessonKey]) -> list[Version]:
        known = self._of[host_id]
        wanted = set(keys)
        missing = [key for key in wanted if key not in known]
        if missing:
            known.update((key, []) for key in missing)
            for version in key_versions(host_id=host_id, keys=missing):
                known[version.key].append(version)
        return sorted((v for key in wanted for v in known[key]), key=attrgetter("id"))


def _refresh_sessions(
    host_id: int,
    sessions: list[str],
    *,
    changed_keys: set[LessonKey],
    stats: RecurrenceStats,
    versions: _Versions,
) -> None:
    touched: set[LessonKey] = set(changed_keys)
    profile = ProfileMemo()  # chunks of one host share most of their keys: each text tokenized once
    for chunk in _chunks(sessions, ATTRIBUTE_CHUNK):
        for part in _chunks(chunk, SESSION_CHUNK):
            CorrectionAttribution.objects.filter(host_id=host_id, session__in=part).delete()
        rows, keys = _attribute_chunk(host_id, chunk, _KeyCandidates(host_id, versions), profile)
        # Every key these sessions saw may have gained a session shown, whether or not it was corrected.
        touched |= keys
        _insert_attributions(rows)
        stats.sessions += len(chunk)
        stats.attributions += len(rows)
    found = versions(host_id, touched)
    current = current_versions(found)
    _store_counts(host_id, current, full=False, stats=stats)
    # Versions of these keys that are no longer current keep no counts (one row per current version).
    current_ids = {v.id for v in current.values()}
    stale = [v.id for v in found if v.id not in current_ids]
    for chunk in _chunks(stale, KEY_CHUNK):
        RecurrenceCount.objects.filter(lesson_id__in=chunk).delete()
    # Every version of these keys may have gained or lost a recurring count: their entities' counts move.
    for chunk in _chunks(sorted(v.id for v in found), KEY_CHUNK):
        for namespace, subject in Lesson.objects.filter(id__in=chunk).values_list("namespace", "subject"):
            stats.counts.add(host_id, namespace, subject)


Candidates = Callable[
    [set[LessonKey], set[tuple[LessonKey, str]]], tuple[list[LessonVersion], Mapping[LessonKey, Version]]
]


class _KeyCandidates:
    """``_attribute_chunk``'s candidates read per chunk: the versions of the keys shown (``_Versions``),
    the current one of each, and the shown texts no version has (``shown_versions``)."""

    def __init__(self, host_id: int, versions: _Versions):
        self.host_id = host_id
        self.versions = versions

    def __call__(
        self, keys: set[LessonKey], shown: set[tuple[LessonKey, str]]
    ) -> tuple[list[LessonVersion], Mapping[LessonKey, Version]]:
        found = self.versions(self.host_id, keys)
        current = current_versions(found)
        core = [v.as_core(is_current=current[v.key].id == v.id) for v in found]
        return core + shown_versions(host_id=self.host_id, versions=found, shown=shown), current


class _HostCandidates:
    """The candidates of a host rebuilt whole: every version made a core version once, not once per
    chunk that shows its key (at 100,000 sessions, 20 chunks over most keys), for ``Attributor``."""

    def __init__(self, host_id: int, versions: list[Version], current: Mapping[LessonKey, Version]):
        self.host_id = host_id
        # Most hosts keep no shown text: then no chunk has one, and no pair is made (760,000 at 1M lines).
        self.any_texts = ShownText.objects.filter(host_id=host_id).exists()
        self.keys: set[LessonKey] = set()
        self.stored: set[tuple[LessonKey, str]] = set()
        self._core: list[tuple] = []
        for v in versions:
            self._core.append(tuple(v.as_core(is_current=current[v.key].id == v.id)))
            self.keys.add(v.key)
            self.stored.add((v.key, v.text_hash))

    def versions(self) -> list[tuple]:
        """Every version of the host, ``LessonVersion`` fields as a plain tuple (``Attributor``'s host)."""
        return self._core

    def texts(self, correction_rows: list[tuple], exposure_rows: list[tuple]) -> list[LessonVersion]:
        """The texts shown in the corrected sessions of ``read_signals``' rows that no version of a key with
        versions has, as ``shown_texts`` reads them (no query when there is none)."""
        if not self.any_texts:
            return []
        shown = shown_pairs(correction_rows, exposure_rows)
        missing = {pair for pair in shown if pair[0] in self.keys and pair not in self.stored}
        return shown_texts(host_id=self.host_id, missing=missing)


def _attribute_chunk(
    host_id: int, sessions: list[str], candidates: Candidates, profile: ProfileMemo | None = None
) -> tuple[list[tuple], set[LessonKey]]:
    """Attribute the user corrections of ``sessions`` (one host) against ``candidates(keys, shown)``
    (the core versions of the keys shown, with the shown texts no version has, and the current version
    of each key); ``profile`` as ``attribute``'s.

    Returns the rows to store as ``(host_id, session, correction_id, lesson_id or None, outcome)``
    and every lesson key the sessions were shown. Reads ``SESSION_CHUNK`` sessions per query.
    """
    release_freed_memory()  # the write phase's page cache, written out by now (lessons.ingest.memory)
    corrections, exposures, keys = core_signals(*read_signals(host_id, sessions))
    if not corrections:
        return [], keys
    versions, current = candidates({e.key for e in exposures}, {(e.key, e.text_hash) for e in exposures})
    # The attributions alone: the counts are summed from the stored rows in SQL (_store_counts).
    attributions = attribute_corrections(
        versions=versions, exposures=exposures, corrections=corrections, profile=profile
    )
    return attribution_rows(host_id, attributions, lambda key: current[key].id), keys


def _store_attributions(chunks: list[tuple[list[tuple], int]], stats: RecurrenceStats) -> None:
    """Store the attribution rows of attributed chunks (``(rows, sessions)``, ``HostAttribution``'s)."""
    for rows, sessions in chunks:
        _insert_attributions(rows)
        stats.sessions += sessions
        stats.attributions += len(rows)


def _insert_attributions(rows: list[tuple]) -> None:
    # The row writer's plain insert: derived rows by the hundred thousand, where bulk_create's per-object SQL
    # building costs more than the database does (an executemany on SQLite, a COPY on PostgreSQL).
    for batch in _chunks(rows, WRITE_BATCH * 10):
        _ATTRIBUTION_ROWS.insert(batch)


_ATTRIBUTION_ROWS = Table(
    model=CorrectionAttribution, fields=("host_id", "session", "correction_id", "lesson_id", "outcome")
)


def _store_counts(
    host_id: int, current: dict[LessonKey, Version], *, full: bool, stats: RecurrenceStats
) -> None:
    """Sum the counts of the ``current`` versions in SQL and upsert one ``RecurrenceCount`` each."""
    by_id = {version.id: version for version in current.values()}
    tallies: dict[int, dict] = {}
    shown: dict[tuple[str, str], int] = {}
    attributions = CorrectionAttribution.objects.filter(host_id=host_id, lesson__isnull=False)
    exposures = Exposure.objects.filter(host_id=host_id)
    groups = [None] if full else list(_chunks(sorted(by_id), KEY_CHUNK))
    for ids in groups:
        scoped = attributions if ids is None else attributions.filter(lesson_id__in=ids)
        for row in scoped.values("lesson_id").order_by().annotate(**_OUTCOME_AGGREGATES):
            tallies[row.pop("lesson_id")] = row
        keys = None if ids is None else sorted({by_id[pk].key for pk in ids})
        scoped_exposures = exposures if keys is None else exposures.filter(lesson_key__in=keys)
        for key, digest, n in (
            scoped_exposures.values("lesson_key", "text_hash")
            .order_by()
            .annotate(n=Count("session", distinct=True))
            .values_list("lesson_key", "text_hash", "n")
        ):
            shown[key, digest] = n
    rows = []
    tallied = [f for f in COUNT_FIELDS if f != "sessions_shown"]
    for pk in sorted(by_id):
        version = by_id[pk]
        tally = tallies.get(pk, {})
        rows.append((pk, shown.get((version.key, version.text_hash), 0), *(tally.get(f, 0) for f in tallied)))
    _upsert_count_rows(rows, stats)


def _upsert_count_rows(rows: list[tuple], stats: RecurrenceStats) -> None:
    """Upsert ``RecurrenceCount`` rows, each ``(lesson_id, sessions_shown, *the tallies in COUNT_FIELDS'
    order)``."""
    # One executemany upsert (bulk_create's per-object SQL building cost more than the database here).
    for batch in _chunks(rows, WRITE_BATCH * 10):
        _COUNT_ROWS.insert(batch, unique=("lesson_id",), update=(*COUNT_FIELDS, "computed_at"))
    stats.lessons += len(rows)


_COUNT_ROWS = Table(
    model=RecurrenceCount,
    fields=("lesson_id", "sessions_shown", *(f for f in COUNT_FIELDS if f != "sessions_shown")),
)
_OUTCOME_AGGREGATES = {
    "recurred": Count("id", filter=Q(outcome=RECURRED)),
    "recurred_sessions": Count("session", filter=Q(outcome=RECURRED), distinct=True),
    "during": Count("id", filter=Q(outcome=DURING)),
    "unknown": Count("id", filter=Q(outcome=UNKNOWN)),
    "ambiguous": Count("id", filter=Q(outcome=AMBIGUOUS)),
    "earlier_version": Count("id", filter=Q(outcome=EARLIER_VERSION)),
}
