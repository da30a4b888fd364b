"""Computing and storing the outcomes of decisions (``DecisionOutcome``): did the cut help?

``outcomes_refresh(host=...)`` recomputes the outcome of every retire, restore, approve and roll back of
one host from the corrections, sessions and verdicts stored after each decision
(``lessons.core.outcomes``), and stores those that changed. It runs after an ingest, sync or import
wrote to the host (the ``lessons.signals.host_evidence_changed`` receiver, ``review.apps``) and from
``manage.py outcomes``; not after a decision (a web request would wait for the host's whole recompute):
a new decision is "not judged yet" until then. The same stored rows give the same outcomes on SQLite
and PostgreSQL. docs/decisions.md, "Outcomes".
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict, namedtuple
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime
from typing import NamedTuple

import numpy as np
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, DateField, Max, QuerySet
from django.db.models.functions import TruncMonth
from django.utils import timezone

from lessons.core.outcomes import (
    CONTRADICTED,
    EVIDENCE_CORRECTIONS,
    OUTCOMES_VERSION,
    SUPPORTED,
    TOO_EARLY,
    Later,
    LatestVerdicts,
    Outcome,
    TopicIndex,
    VerdictSeen,
    live_again_outcome,
    retire_outcome,
)
from lessons.core.text import from_ms
from lessons.models import Host, Verdict
from lessons.recurrence.refresh import lock_host
from lessons.recurrence.session_ends import session_ends_after, session_ends_read
from lessons.recurrence.versions import EpochMs, plain_rows
from lessons.services.data_version import for_host
from review.models import Action, CalibrationCount, Decision, DecisionOutcome
from review.services.outcome_charges import (
    AGAINST,
    CHUNK,
    RECURRED_TO,
    KeptCharges,
    Key,
    Lessons,
    Packed,
    charges_after,
    kept_later,
    kept_since,
    keys_asked,
    made_live,
    rolled_back_drafts,
    session_names,
)

JUDGED = (Action.RETIRE, Action.RESTORE, Action.APPROVE, Action.ROLLBACK)
# What the rules read of a decision: not its evidence, reason or hashes of the chain (1M decisions).
DECISION_FIELDS = ("id", "at_ms", "action", "lesson_hash", "created_hash", "draft_id", "actor", "reason_code")
# A decision as the rules read it: no model instance, its time as epoch ms (UTC) computed by the database.
# A refresh reads decisions as plain tuples of these fields in this order (a host has tens of thousands).
Judged = namedtuple("Judged", DECISION_FIELDS)
ID, AT_MS, ACTION, LESSON_HASH, CREATED_HASH, DRAFT_ID, ACTOR, REASON_CODE = range(len(DECISION_FIELDS))
_READ = tuple(EpochMs("at") if name == "at_ms" else name for name in DECISION_FIELDS)
_READ_FROM_OUTCOME = tuple(
    EpochMs("decision__at") if name == "at_ms" else f"decision__{name}" for name in DECISION_FIELDS
)
# What a refresh compares of a stored outcome (``revised``).
STORED = ("outcome", "sessions_after", "digest", "version")
WRITE_BATCH = 500
NOT_RECOMPUTED = (
    "outcomes of host %s not recomputed after its import (%s); `manage.py outcomes --host %s` recomputes them"
)
log = logging.getLogger(__name__)


def _verdicts(host: Host, hashes: Iterable[str], since: int) -> LatestVerdicts:
    """The verdicts of the lessons ``hashes`` measured after ``since`` (epoch ms), in order (one query a
    ``CHUNK`` of lessons)."""
    names = sorted(h for h in set(hashes) if h)
    found = []
    for start in range(0, len(names), CHUNK):
        found += Verdict.objects.filter(
            host=host, lesson__hash__in=names[start : start + CHUNK], measured_at__gt=from_ms(since)
        ).values_list("lesson__hash", "verdict", EpochMs("measured_at"), "horizon_ms", "id")
    return LatestVerdicts(
        VerdictSeen(lesson=h, verdict=v, at_ms=at, horizon_ms=horizon, seq=pk)
        for h, v, at, horizon, pk in found
    )


class _Seen:
    """What the rules read of one host for some of its judged decisions (``host_outcomes``): ``ends``, the
    last activity (epoch ms, sorted) of every session active after the oldest of them; ``drafts``, the
    rolled back drafts' members; ``verdicts``; and, found once for each lesson or set of lessons,
    ``against`` and ``recurred``. Subclasses say where the corrections come from (``_against_lesson``,
    ``_recurred_to``)."""

    ends: np.ndarray
    drafts: dict[str, list[str]]
    verdicts: LatestVerdicts
    lessons: Lessons

    def __init__(self) -> None:
        self._against: dict[str, tuple[Later, bool]] = {}
        self._recurred: dict[tuple[str, ...], Later] = {}

    def against(self, lesson_hash: str) -> tuple[Later, bool]:
        """The corrections counting against retiring ``lesson_hash`` and whether another lesson keeps its
        fact (a lesson of its entity on its topic, live now or not: a correction charged to it was made
        while it was shown): the same for every retire of it, so found once."""
        if lesson_hash not in self._against:
            kept = self.lessons.kept.get(lesson_hash, [])
            self._against[lesson_hash] = (self._against_lesson(lesson_hash, kept), bool(kept))
        return self._against[lesson_hash]

    def recurred(self, lessons: tuple[str, ...]) -> Later:
        """The corrections charged ``recurred`` to any of ``lessons`` (found once for each set)."""
        if lessons not in self._recurred:
            self._recurred[lessons] = self._recurred_to(lessons)
        return self._recurred[lessons]

    def _against_lesson(self, lesson_hash: str, kept: list[str]) -> Later:
        raise NotImplementedError

    def _recurred_to(self, lessons: tuple[str, ...]) -> Later:
        raise NotImplementedError


class _Evidence(_Seen):
    """The rules' evidence read afresh from the host's history after its oldest judged decision (a few
    queries), indexed so that each decision costs look-ups, not scans: the session ends, the corrections
    (``TopicIndex`` over the retired lessons' words), the verdicts of the lessons made live. What
    ``outcomes_refresh(seqs=...)`` and the tests' from-scratch comparison read."""

    def __init__(self, host: Host, decisions: Sequence[tuple], since: int) -> None:
        """``decisions``: tuples of ``DECISION_FIELDS``; ``since``: the oldest one's time (epoch ms)."""
        super().__init__()
        self.ends = session_ends_read(host.id, since)
        self.drafts = rolled_back_drafts(host, decisions)
        asked = keys_asked(decisions, self.drafts)
        retired = {h for kind, h in asked if kind == AGAINST}
        self.lessons = Lessons(host, {h for _kind, h in asked}, retired)
        # only the retired lessons' topics are asked of the corrections ("": a lesson no longer stored)
        topics = {"", *(self.lessons.topic(h) for h in retired)}
        self.topics = TopicIndex.from_rows(charges_after(host, since), topics=topics)
        self.verdicts = _verdicts(host, {h for kind, h in asked if kind == RECURRED_TO}, since)

    def _against_lesson(self, lesson_hash: str, kept: list[str]) -> Later:
        return self.topics.against(self.lessons.topic(lesson_hash), kept)

    def _recurred_to(self, lessons: tuple[str, ...]) -> Later:
        return self.topics.recurred(lessons)


class _KeptEvidence(_Seen):
    """The rules' evidence from what a refresh keeps (``review.services.outcome_charges``): the kept
    counted corrections of the lessons ``decisions`` ask for, the kept session ends after the oldest of
    them, the verdicts of the lessons made live; nothing read from the host's history but the sessions the
    outcomes list (one query)."""

    def __init__(self, host: Host, decisions: Sequence[tuple], since: int, kept: KeptCharges) -> None:
        super().__init__()
        self.ends = session_ends_after(host.id, since)
        self.drafts, self.lessons, self.packed = kept.drafts, kept.lessons, kept.packed
        made = {h for d in decisions if d[ACTION] != Action.RETIRE for h in made_live(d, self.drafts)}
        self.verdicts = _verdicts(host, made, since)
        # the sessions an outcome may list: a decision lists the first corrections after it, and of several
        # lessons' corrections (a roll back) the first after it are among each lesson's own first
        times: dict[Key, list[int]] = defaultdict(list)
        for d in decisions:
            keys = [(AGAINST, d[LESSON_HASH] or "")] if d[ACTION] == Action.RETIRE else []
            keys += [(RECURRED_TO, h) for h in made_live(d, self.drafts) if d[ACTION] != Action.RETIRE]
            for key in keys:
                times[key].append(d[AT_MS])
        codes: set[int] = set()
        for key, at in times.items():
            packed = self.packed[key]
            for start in np.unique(np.searchsorted(packed.times, np.array(at, dtype=np.int64), side="right")):
                codes.update(packed.sessions[start : start + EVIDENCE_CORRECTIONS].tolist())
        self.names = session_names(host, codes)

    def _against_lesson(self, lesson_hash: str, kept: list[str]) -> Later:
        return kept_later(self.packed[(AGAINST, lesson_hash)], self.names)

    def _recurred_to(self, lessons: tuple[str, ...]) -> Later:
        packed = Packed.empty()
        for h in lessons:
            packed = packed.merged(self.packed[(RECURRED_TO, h)])
        return kept_later(packed, self.names)


class Found(NamedTuple):
    """A decision's outcome as a refresh found it: the ``Outcome`` (shared by decisions judged alike),
    the host's sessions with activity after the decision, and the outcome's ``digest``."""

    outcome: Outcome
    sessions_after: int
    digest: str


def revised(said: tuple[str, str, int], stored: Sequence) -> bool:
    """Whether an outcome that says ``said`` (its kind, digest and rules' version) differs from a stored one
    ``(outcome, sessions_after, digest, version)`` (all None: none stored) in what it says: its kind, its
    evidence or the rules' version. A too-early retire's count of sessions (the count it waits on) is in its
    sentence, so in its digest; any other outcome whose only change is a larger count is not revised: its
    stored ``sessions_after`` is dated by ``computed_at`` (a too-early approve, restore or roll back waits
    on verdicts and corrections, not on sessions)."""
    kind, _stored_after, digest, version = stored
    return (kind, digest, version) != said


class Judgement(NamedTuple):
    """The outcomes of a host's decisions as ``host_outcomes`` finds them: ``found``, the distinct
    ``(Outcome, digest)`` pairs (decisions that see the same evidence share one); per decision, in the
    order given, ``which`` (the index of its pair in ``found``) and ``sessions_after`` (the host's
    sessions with activity after it)."""

    found: list[tuple[Outcome, str]]
    which: list[int]
    sessions_after: list[int]

    def of(self, i: int) -> Found:
        """The ``i``-th decision's outcome."""
        outcome, digest = self.found[self.which[i]]
        return Found(outcome, self.sessions_after[i], digest)


def host_outcomes(*, host: Host, decisions: Sequence[tuple], kept: KeptCharges | None = None) -> Judgement:
    """The outcomes of ``decisions`` (of ``host``, judged kinds only: tuples whose first items are
    ``DECISION_FIELDS``; more items are ignored), from what is stored now: with ``kept`` (brought up to
    date by the caller), from the kept counted corrections and session ends (``_KeptEvidence``); without,
    read afresh from the host's history after the oldest decision (``_Evidence``); the same outcomes either
    way. Queries: a few per host, none per decision; a decision costs look-ups and array operations shared
    with the other decisions of its lesson, and decisions that see the same evidence share one ``Outcome``
    (and its digest), so a host's recompute grows with its decisions and evidence, not their product."""
    if not decisions:
        return Judgement([], [], [])
    times = np.array([d[AT_MS] for d in decisions], dtype=np.int64)
    since = int(times.min())
    seen = _Evidence(host, decisions, since) if kept is None else _KeptEvidence(host, decisions, since, kept)
    support = settings.OUTCOME_SUPPORT_SESSIONS
    # each decision's count of later sessions, at once
    afters = (len(seen.ends) - np.searchsorted(seen.ends, times, side="right")).tolist()
    retires: dict[str, list[int]] = defaultdict(list)
    others = []
    for i, d in enumerate(decisions):
        if d[ACTION] == Action.RETIRE:
            retires[d[LESSON_HASH] or ""].append(i)
        else:
            others.append(i)
    found: list[tuple[Outcome, str]] = []
    judged: dict[tuple, int] = {}  # what decides an outcome -> its index in found
    which = [0] * len(decisions)
    for lesson_hash, positions in retires.items():
        against, kept = seen.against(lesson_hash)
        # each retire's first counted correction after it, at once for the lesson's retires
        for i, start in zip(positions, against.starts(times[positions]).tolist(), strict=True):
            after = afters[i]
            # the kind follows from the key; a too-early outcome's sentence also has the count of sessions
            key: tuple = (lesson_hash, start, after >= support)
            hit = judged.get(key)
            if hit is not None and found[hit][0].outcome == TOO_EARLY:
                hit = judged.get((*key, after))
            if hit is None:
                o = retire_outcome(
                    against=against, start=start, kept=kept, sessions_after=after, support_sessions=support
                )
                hit = judged[(*key, after)] = len(found)
                found.append((o, o.digest()))
                judged.setdefault(key, hit)
            which[i] = hit
    for i in others:
        d = Judged._make(decisions[i][: len(DECISION_FIELDS)])
        made = tuple(sorted(set(made_live(d, seen.drafts))))
        latest = seen.verdicts.after(made, d.at_ms)
        recurred = seen.recurred(made)
        start = recurred.start(d.at_ms)
        key = (d.action, made, start, tuple(latest))
        hit = judged.get(key)
        if hit is None:
            what = {Action.APPROVE: "the consolidation", Action.RESTORE: "the restored lesson"}.get(
                d.action, "the lessons brought back"
            )
            o = live_again_outcome(latest=latest, recurred=recurred, start=start, what=what)
            hit = judged[key] = len(found)
            found.append((o, o.digest()))
        which[i] = hit
    return Judgement(found, which, afters)


def outcomes_refresh(*, host: Host | str | int, seqs: Iterable[int] | None = None, full: bool = False) -> int:
    """Recompute the outcomes of ``host``'s judged decisions and store those revised (``revised``: kind,
    evidence, rules' version, or a too-early count), in one transaction under the host's lock;
    ``computed_at`` is when a stored outcome was last revised. The calibration rollup's counts are moved
    for the outcomes whose kind changed (rebuilt whole with ``full``). A host (name or id) that does not
    exist, or has no judged decision, costs a few queries and stores nothing. Returns how many were stored.
    docs/decisions.md, "Outcomes".

    By default the kept counted corrections are brought up to date first (``KeptCharges``: from the
    attributions written since the last refresh), and only the decisions they can have changed are judged
    again (``_to_judge``). ``full``: the kept rows built afresh and every decision judged
    (``manage.py outcomes``). ``seqs``: only the decisions numbered so, judged from the host's history read
    afresh, the kept rows left as they are."""
    if not isinstance(host, Host):
        host = Host.objects.filter(**({"name": host} if isinstance(host, str) else {"id": host})).first()
        if host is None:
            return 0
    decisions = Decision.objects.filter(host=host.name, action__in=JUDGED).order_by()
    if seqs is not None:
        decisions = decisions.filter(seq__in=sorted(set(seqs)))
    read = _with_outcomes(decisions)
    with for_host(host.name), transaction.atomic():  # host-narrowed (docs/production.md, "Cache")
        # no attribution of the host is written meanwhile (lessons.recurrence.refresh), nor its outcomes
        lock_host(host.id)
        if seqs is not None:
            rows = plain_rows(read)  # each decision with its stored outcome (None: none yet), as plain tuples
            return _store(host, rows, host_outcomes(host=host, decisions=rows))
        since = None if full else kept_since(host)
        # first the log's last seq, then the decisions: any decision committed later has a greater seq
        # (decisions are committed in seq order under the chain head's lock)
        head = Decision.objects.aggregate(top=Max("seq"))["top"] or 0
        rows = plain_rows(read) if since is None else _judged_anew(host, since)
        if not rows and since is None:
            return 0
        kept = KeptCharges(host, rows, decision_seq=head, full=since is None)
        if since is not None:
            rows = _to_judge(_retires_of(host, kept, rows), kept)
        # with full, the rollup is rebuilt from every stored outcome, not only moved (a repair)
        return _store(host, rows, host_outcomes(host=host, decisions=rows, kept=kept), rollup_whole=full)


LIVE_AGAIN = (Action.RESTORE, Action.APPROVE, Action.ROLLBACK)


def _judged_anew(host: Host, since: int) -> list[tuple]:
    """The decisions of ``host`` (with their stored outcomes, ``_with_outcomes``) a refresh reads whatever
    changed: those after the log's seq ``since`` (not judged yet), the too-early ones (their count of
    sessions moves) and every approve, restore and roll back (their verdicts are read by lesson), all judged
    again, and the supported ones, judged again when their lesson's counted corrections changed
    (``_to_judge``). Each read from an index (three queries), not by a walk of the host's log; every outcome
    stored is of these rules' version (``kept_since``)."""
    mine = Decision.objects.filter(host=host.name)
    moving = DecisionOutcome.objects.filter(host=host.name, outcome__in=(TOO_EARLY, SUPPORTED)).order_by()
    found = {}
    for part in (
        _with_outcomes(mine.filter(seq__gt=since, action__in=JUDGED)),
        _with_outcomes(mine.filter(action__in=LIVE_AGAIN)),
        # driven from the stored outcomes' (host, outcome) index: the decision looked up by its key
        moving.values_list(*_READ_FROM_OUTCOME, *STORED),
    ):
        found.update((row[ID], row) for row in plain_rows(part))
    return [found[i] for i in sorted(found)]


def _with_outcomes(decisions: QuerySet) -> QuerySet:
    """``decisions`` read as a refresh reads them: ``DECISION_FIELDS`` then the stored outcome's ``STORED``
    (None: none stored), plain tuples (``plain_rows``)."""
    return decisions.order_by().values_list(*_READ, *(f"outcome__{name}" for name in STORED))


def _retires_of(host: Host, kept: KeptCharges, rows: list[tuple]) -> list[tuple]:
    """``rows`` (``_judged_anew``'s) with the contradicted retires of ``host`` of the lessons whose counted
    corrections changed (``kept.affected``) in the ranges of time ``KeptCharges.unsettled`` gives: with them,
    every decision whose outcome the change may revise, while old contradicted retires that it cannot
    revise are not read (``_to_judge`` sorts those read exactly). A query a lesson and range, from the
    (host, lesson_hash, seq) index."""
    base = _with_outcomes(Decision.objects.filter(host=host.name, outcome__outcome=CONTRADICTED))
    sql, base_params = base.query.sql_with_params()
    column = f"{connection.ops.quote_name(Decision._meta.db_table)}.{{}}".format
    named, at = column(connection.ops.quote_name("lesson_hash")), column(connection.ops.quote_name("at"))
    found = {row[ID]: row for row in rows}
    with connection.cursor() as cursor:
        for kind, h in sorted(kept.affected):
            if kind != AGAINST:
                continue
            for low, high in kept.unsettled((kind, h)) or [(None, None)]:
                where, params = ([f"{named} = %s"], [h]) if h else ([f"{named} IS NULL"], [])
                for op, ms in ((">=", low), ("<", high)):
                    if ms is not None:
                        where.append(f"{at} {op} %s")
                        params.append(connection.ops.adapt_datetimefield_value(from_ms(ms)))
                cursor.execute(f"{sql} AND {' AND '.join(where)}", [*base_params, *params])
                found.update((row[ID], row) for row in cursor.fetchall() if row[ACTION] == Action.RETIRE)
    return [found[i] for i in sorted(found)]


def _to_judge(rows: list[tuple], kept: KeptCharges) -> list[tuple]:
    """The decisions of ``rows`` (with their stored outcomes) that may be judged otherwise since the last
    refresh: not judged yet, judged by other rules, too early (its count of sessions moves), an approve,
    restore or roll back (their verdicts are read by lesson, not followed), or a retire whose lesson's
    counted corrections changed (``KeptCharges.affected``), unless it is contradicted and they changed only
    after the ones it lists (``KeptCharges.settled``: most of a host's old retires)."""
    split = len(DECISION_FIELDS)
    judged, contradicted = [], defaultdict(list)
    for row in rows:
        kind, version = row[split], row[split + 3]
        if kind is None or version != OUTCOMES_VERSION or kind == TOO_EARLY or row[ACTION] != Action.RETIRE:
            judged.append(row)
            continue
        key = (AGAINST, row[LESSON_HASH] or "")
        if key in kept.affected:
            (contradicted[key] if kind == CONTRADICTED else judged).append(row)
    for key, asked in contradicted.items():
        settled = kept.settled(key, np.array([row[AT_MS] for row in asked], dtype=np.int64))
        judged += [row for row, done in zip(asked, settled.tolist(), strict=True) if not done]
    return judged


def _store(host: Host, rows: list[tuple], judgement: Judgement, *, rollup_whole: bool = False) -> int:
    """Store the outcomes ``judgement`` found for ``rows`` (decisions with their stored outcomes) that are
    revised, and move the calibration rollup's counts (``rollup_whole``: rebuild it from every stored
    outcome instead, even when nothing was revised); returns how many were stored."""
    split = len(DECISION_FIELDS)
    changed = []  # (decision id, found, stored kind or None)
    moved = []  # (decision row, stored kind or None, kind now) where the kind changed
    which = judgement.which
    said = [(o.outcome, digest, OUTCOMES_VERSION) for o, digest in judgement.found]
    for i, row in enumerate(rows):  # a Found made only for what is revised (most are not)
        if revised(said[which[i]], row[split:]):
            changed.append((row[ID], judgement.of(i), row[split]))
            if row[split] != said[which[i]][0]:
                moved.append((row, row[split], said[which[i]][0]))
    if not changed:
        if rollup_whole:
            calibration_rollup(host=host.name)
        return 0
    changed.sort(key=lambda c: c[0])
    now = timezone.now()
    _update([(f, decision_id) for decision_id, f, kind in changed if kind is not None], now)
    DecisionOutcome.objects.bulk_create(
        [
            DecisionOutcome(
                decision_id=decision_id,
                host=host.name,
                outcome=f.outcome.outcome,
                sessions_after=f.sessions_after,
                evidence=f.outcome.as_evidence(),
                digest=f.digest,
                computed_at=now,
                version=OUTCOMES_VERSION,
            )
            for decision_id, f, kind in changed
            if kind is None
        ],
        batch_size=WRITE_BATCH,
        # another refresh of the host (a parallel ingest, a decision) may have stored it meanwhile
        update_conflicts=True,
        unique_fields=["decision"],
        update_fields=["outcome", "sessions_after", "evidence", "digest", "computed_at", "version"],
    )
    if rollup_whole:
        calibration_rollup(host=host.name)
    else:
        _calibration_moved(host.name, moved)
    return len(changed)


def _calibration_moved(host: str, moves: list[tuple[tuple, str | None, str]]) -> None:
    """Bring ``host``'s calibration rollup up to date with the outcomes whose kind changed (``(decision row
    as read, kind stored before or None, kind now)``): each decision's group (actor, month of its time in
    UTC, reason code) from its row, the host's rollup rows (months x codes x kinds) read, the counts moved
    and written back, groups left at 0 deleted. Gives the rows ``calibration_rollup`` builds from all of
    the host's outcomes, under the host's lock (no other store of its outcomes meanwhile); a count that
    would go below 0 (a rollup that was not the outcomes') has it rebuilt whole instead."""
    if not moves:
        return
    delta: Counter[tuple] = Counter()
    for row, old, new in moves:
        at = datetime.fromtimestamp(row[AT_MS] / 1000, UTC)
        group = (row[ACTOR], date(at.year, at.month, 1), row[REASON_CODE] or "")
        if old is not None:
            delta[(*group, old)] -= 1
        delta[(*group, new)] += 1
    kept = {
        (row.actor, row.month, row.reason_code, row.outcome): row
        for row in CalibrationCount.objects.filter(host=host)
    }
    write, gone = [], []
    for (actor, month, code, outcome), moved in delta.items():
        if not moved:
            continue
        row = kept.get((actor, month, code, outcome))
        n = (row.n if row else 0) + moved
        if n < 0:  # the rollup was not the outcomes' (rows removed outside a refresh): rebuilt whole
            calibration_rollup(host=host)
            return
        if n:
            write.append(
                CalibrationCount(actor=actor, month=month, host=host, reason_code=code, outcome=outcome, n=n)
            )
        elif row:
            gone.append(row.pk)
    CalibrationCount.objects.filter(pk__in=gone).delete()
    CalibrationCount.objects.bulk_create(
        write,
        batch_size=WRITE_BATCH,
        update_conflicts=True,
        unique_fields=["host", "actor", "month", "reason_code", "outcome"],
        update_fields=["n"],
    )


def _update(rows: list[tuple[Found, int]], now: datetime) -> None:
    """Rewrite stored outcomes (``(found, decision id)``) with one prepared UPDATE run for all of them:
    the ORM's ``bulk_update`` builds a CASE a field for each batch, and an upsert prepares every field of
    every row in Python; the evidence of an ``Outcome`` that decisions share is encoded once."""
    if not rows:
        return
    meta = DecisionOutcome._meta
    evidence, computed_at = meta.get_field("evidence"), meta.get_field("computed_at")
    table, q = meta.db_table, connection.ops.quote_name
    sql = (
        f"UPDATE {q(table)} SET {q('outcome')} = %s, {q('sessions_after')} = %s, {q('evidence')} = %s, "
        f"{q('digest')} = %s, {q('computed_at')} = %s, {q('version')} = %s WHERE {q('decision_id')} = %s"
    )
    at = computed_at.get_db_prep_save(now, connection)
    encoded: dict[int, object] = {}  # by id() of an Outcome, all alive in ``rows``
    params = []
    for f, decision_id in rows:
        if id(f.outcome) not in encoded:
            encoded[id(f.outcome)] = evidence.get_db_prep_save(f.outcome.as_evidence(), connection)
        row = (f.outcome.outcome, f.sessions_after, encoded[id(f.outcome)], f.digest, at, OUTCOMES_VERSION)
        params.append((*row, decision_id))
    with connection.cursor() as cursor:
        for start in range(0, len(params), WRITE_BATCH * 10):
            cursor.executemany(sql, params[start : start + WRITE_BATCH * 10])


def calibration_rollup(*, host: str) -> int:
    """Rebuild ``host``'s rows of the calibration rollup (``CalibrationCount``) from its stored outcomes:
    one grouped read of the host's outcomes (by actor, month of the decision (UTC), reason code and
    outcome), one delete, one insert. Run inside the transaction that stored the outcomes. Returns the rows
    written."""
    grouped = (
        DecisionOutcome.objects.filter(host=host)
        .annotate(month=TruncMonth("decision__at", output_field=DateField()))
        .values_list("decision__actor", "month", "decision__reason_code", "outcome")
        .annotate(n=Count("pk"))
        .order_by()
    )
    rows = [
        CalibrationCount(actor=actor, month=month, host=host, reason_code=code or "", outcome=outcome, n=n)
        for actor, month, code, outcome, n in grouped
    ]
    CalibrationCount.objects.filter(host=host).delete()
    CalibrationCount.objects.bulk_create(rows, batch_size=WRITE_BATCH)
    return len(rows)


def outcomes_after_evidence(sender: object, *, hosts: Iterable[str], **kwargs: object) -> None:
    """The ``lessons.signals.host_evidence_changed`` receiver: the outcomes of the decisions of each of
    ``hosts`` (names) that has judged decisions recomputed (``outcomes_refresh``); one query finds them,
    so an ingest for hosts without any costs one query. A database error (a lock held past its wait) is
    logged and leaves that host's stored outcomes as they were: the batch is committed, and the next
    ingest for the host or ``manage.py outcomes --host H`` recomputes them."""
    names = sorted(set(hosts))
    if not names:
        return
    judged = Decision.objects.filter(host__in=names, action__in=JUDGED).values_list("host", flat=True)
    for name in sorted(set(judged.distinct())):
        try:
            with transaction.atomic():  # a savepoint when the caller is in a transaction: an error ends here
                outcomes_refresh(host=name)
        except DatabaseError as exc:  # derived: the batch that sent this is committed and stays so
            log.warning(NOT_RECOMPUTED, name, exc, name)
