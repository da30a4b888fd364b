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
from collections import defaultdict, namedtuple
from collections.abc import Iterable, Sequence
from datetime import datetime
from operator import itemgetter
from typing import NamedTuple

import numpy as np
from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, DateField, Max
from django.db.models.functions import TruncMonth
from django.utils import timezone

from lessons.core.outcomes import (
    OUTCOMES_VERSION,
    TOO_EARLY,
    Later,
    LatestVerdicts,
    Outcome,
    TopicIndex,
    VerdictSeen,
    live_again_outcome,
    retire_outcome,
)
from lessons.core.recurrence import RECURRED, UNMATCHED, USER_CORRECTION, lesson_profile
from lessons.core.text import from_ms
from lessons.core.tokens import correction_tokens, tokens_match
from lessons.models import Correction, CorrectionAttribution, Draft, Exposure, Host, Lesson, Verdict
from lessons.recurrence.versions import EpochMs, plain_rows
from lessons.services.data_version import for_host
from review.models import Action, CalibrationCount, Decision, DecisionOutcome

JUDGED = (Action.RETIRE, Action.RESTORE, Action.APPROVE, Action.ROLLBACK)
# What the rules read of a decision: not its evidence, reason or hashes of the chain (1M decisions).
DECISION_FIELDS = ("id", "at_ms", "action", "lesson_hash", "created_hash", "draft_id")
# A decision as the rules read it: no model instance, its time as epoch ms (UTC) computed by the database.
# A refresh reads decisions as plain tuples of these fields in this order (a host has tens of thousands).
Judged = namedtuple("Judged", DECISION_FIELDS)
ID, AT_MS, ACTION, LESSON_HASH, CREATED_HASH, DRAFT_ID = range(len(DECISION_FIELDS))
_READ = tuple(EpochMs("at") if name == "at_ms" else name for name in DECISION_FIELDS)
# What a refresh compares of a stored outcome (``revised``).
STORED = ("outcome", "sessions_after", "digest", "version")
WRITE_BATCH = 500
NOT_RECOMPUTED = (
    "outcomes of host %s not recomputed after its import (%s); `manage.py outcomes --host %s` recomputes them"
)
log = logging.getLogger(__name__)


def _session_ends(host: Host, since_ms: int) -> np.ndarray:
    """The epoch ms of the last activity (exposure or correction) of each session of ``host`` active
    after ``since_ms``, sorted (an int64 array): only the host's activity after its oldest judged decision
    is read, and the database finds each session's last time (one query, one number a session)."""
    parts, params = [], []
    for model, field in ((Exposure, "shown_at"), (Correction, "corrected_at")):
        after = model.objects.filter(host=host, **{f"{field}__gt": from_ms(since_ms)}).order_by()
        last = after.values("session").annotate(last=EpochMs(Max(field))).values_list("session", "last")
        sql, part = last.query.sql_with_params()
        parts.append(sql)
        params.extend(part)
    q = connection.ops.quote_name
    union = " UNION ALL ".join(f"SELECT * FROM ({sql}) {q(f'part{i}')}" for i, sql in enumerate(parts))
    sql = f"SELECT MAX({q('last')}) FROM ({union}) {q('activity')} GROUP BY {q('session')}"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return np.sort(np.array([ms for (ms,) in cursor.fetchall()], dtype=np.int64))


def _charges_after(host: Host, since_ms: int) -> list[tuple]:
    """The ``unmatched`` and ``recurred`` charges (the outcome rules read no other) of the host's user
    corrections after ``since_ms``, as ``TopicIndex.from_rows`` reads them: ``(correction id, session,
    at_ms, text, outcome, lesson hash or None)`` in time order, a correction's rows together (one query)."""
    charges = CorrectionAttribution.objects.filter(
        host=host,
        outcome__in=(UNMATCHED, RECURRED),
        correction__kind=USER_CORRECTION,
        correction__corrected_at__gt=from_ms(since_ms),
    )
    rows = plain_rows(
        charges.order_by("correction__corrected_at", "correction_id").values_list(
            "correction_id",
            "correction__session",
            EpochMs("correction__corrected_at"),
            "correction__text",
            "outcome",
            "lesson__hash",
        )
    )
    # time order is (at_ms, id), as ``TopicIndex`` sorts: corrections stored within one millisecond by
    # their id, not their microseconds (a stable sort of rows that come nearly in that order already)
    rows.sort(key=itemgetter(2, 0))
    return rows


def _made_live(decision: Judged, drafts: dict[str, list[str]]) -> list[str]:
    """The lessons (hashes) a decision made live: the consolidation an approve created, the lesson a
    restore brought back, the members a roll back brought back."""
    if decision.action == Action.APPROVE:
        return [decision.created_hash] if decision.created_hash else []
    if decision.action == Action.RESTORE:
        return [decision.lesson_hash] if decision.lesson_hash else []
    return list(drafts.get(decision.draft_id or "", []))


class _Evidence:
    """What the rules read of one host after its oldest judged decision, read once (a few queries) and
    indexed, so that each decision costs look-ups, not scans: the session ends, the corrections
    (``TopicIndex``), the verdicts of the lessons the decisions name, the lessons, and every lesson of the
    retired lessons' entities with its words read once."""

    def __init__(self, host: Host, decisions: Sequence[tuple], since: int) -> None:
        """``decisions``: tuples of ``DECISION_FIELDS``; ``since``: the oldest one's time (epoch ms)."""
        self.ends = _session_ends(host, since)
        hashes = {d[LESSON_HASH] for d in decisions} | {d[CREATED_HASH] for d in decisions}
        hashes.discard(None)
        hashes.discard("")
        draft_ids = {d[DRAFT_ID] for d in decisions if d[ACTION] == Action.ROLLBACK and d[DRAFT_ID]}
        rows = Draft.objects.filter(host=host, ext_id__in=draft_ids).values_list("ext_id", "supersedes")
        self.drafts = {ext_id: list(supersedes) for ext_id, supersedes in rows}
        hashes |= {h for members in self.drafts.values() for h in members}
        self.lessons = {
            h: (ns, subj, text)
            for h, ns, subj, text in Lesson.objects.filter(host=host, hash__in=hashes).values_list(
                "hash", "namespace", "subject", "text"
            )
        }
        retired = {
            d[LESSON_HASH] for d in decisions if d[ACTION] == Action.RETIRE and d[LESSON_HASH] in self.lessons
        }
        entities = {self.lessons[h][:2] for h in retired}
        # every lesson of those entities, live or not (a correction charged to one was shown with it), with
        # its words, read once: each retired lesson of the entity asks them
        self.members: dict[tuple[str, str], list[tuple[str, frozenset[str]]]] = defaultdict(list)
        if entities:
            rows = Lesson.objects.filter(
                host=host, subject__in=sorted({s for _n, s in entities})
            ).values_list("namespace", "subject", "hash", "text")
            for ns, subj, h, text in rows:
                if (ns, subj) in entities:
                    self.members[(ns, subj)].append((h, correction_tokens(text)))
        # only the retired lessons' topics are asked of the corrections ("": a lesson no longer stored)
        topics = {"", *(self.lessons[h][2] for h in retired)}
        self.topics = TopicIndex.from_rows(_charges_after(host, since), topics=topics)
        self._against: dict[str, tuple[Later, bool]] = {}
        self._recurred: dict[tuple[str, ...], Later] = {}
        self.verdicts = LatestVerdicts(
            VerdictSeen(lesson=h, verdict=v, at_ms=at, horizon_ms=horizon, seq=pk)
            for h, v, at, horizon, pk in Verdict.objects.filter(
                host=host, lesson__hash__in=sorted(hashes), measured_at__gt=from_ms(since)
            ).values_list("lesson__hash", "verdict", EpochMs("measured_at"), "horizon_ms", "id")
        )

    def against(self, lesson_hash: str) -> tuple[Later, bool]:
        """The corrections counting against retiring ``lesson_hash`` and whether another lesson keeps its
        fact (a lesson of its entity on its topic, live now or not: a correction charged to it was made
        while it was shown): the same for every retire of it, so found once."""
        if lesson_hash not in self._against:
            ns, subj, text = self.lessons.get(lesson_hash, ("", "", ""))
            content, anchors = lesson_profile(text)
            kept = [
                h
                for h, words in self.members.get((ns, subj), [])
                if h != lesson_hash and tokens_match(content=content, full_anchors=anchors, tokens=words)
            ]
            self._against[lesson_hash] = (self.topics.against(text, kept), bool(kept))
        return self._against[lesson_hash]

    def recurred(self, lessons: tuple[str, ...]) -> Later:
        """The corrections charged ``recurred`` to any of ``lessons`` (found once for each set)."""
        if lessons not in self._recurred:
            self._recurred[lessons] = self.topics.recurred(lessons)
        return self._recurred[lessons]


class Found(NamedTuple):
    """A decision's outcome as a refresh found it: the ``Outcome`` (shared by decisions judged alike),
    the host's sessions with activity after the decision, and the outcome's ``digest``."""

    outcome: Outcome
    sessions_after: int
    digest: str


def revised(said: tuple[str, str, int], sessions_after: int, stored: Sequence) -> bool:
    """Whether an outcome that says ``said`` (its kind, digest and rules' version) with ``sessions_after``
    differs from a stored one ``(outcome, sessions_after, digest, version)`` (all None: none stored) in
    what it says: its kind, its evidence, the rules' version, or, while too early, its count of sessions
    (the count it waits on). A supported or contradicted outcome whose only change is a larger count is
    not revised: its stored count is dated by ``computed_at``."""
    kind, stored_after, digest, version = stored
    return (kind, digest, version) != said or (kind == TOO_EARLY and stored_after != sessions_after)


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


def host_outcomes(*, host: Host, decisions: Sequence[tuple]) -> Judgement:
    """The outcomes of ``decisions`` (of ``host``, judged kinds only: tuples whose first items are
    ``DECISION_FIELDS``; more items are ignored), from what is stored now. Queries: a few per host, none
    per decision; a decision costs look-ups (``_Evidence``) and array operations shared with the other
    decisions of its lesson, and decisions that see the same evidence share one ``Outcome`` (and its
    digest), so a host's recompute grows with its decisions and evidence, not their product."""
    if not decisions:
        return Judgement([], [], [])
    times = np.array([d[AT_MS] for d in decisions], dtype=np.int64)
    seen = _Evidence(host, decisions, int(times.min()))
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
        made = tuple(sorted(set(_made_live(d, seen.drafts))))
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


def outcomes_refresh(*, host: Host | str | int, seqs: Iterable[int] | None = None) -> int:
    """Recompute the outcomes of ``host``'s judged decisions (those numbered ``seqs``, or all of them) and
    store those revised (``revised``: kind, evidence, rules' version, or a too-early count), in one
    transaction; ``computed_at`` is when a stored outcome was last revised. The calibration rollup is
    rebuilt only when a kind changed. A host (name or id) that does not exist, or has no judged decision,
    costs one query and stores nothing. Returns how many were stored. docs/decisions.md, "Outcomes"."""
    if not isinstance(host, Host):
        host = Host.objects.filter(**({"name": host} if isinstance(host, str) else {"id": host})).first()
        if host is None:
            return 0
    decisions = Decision.objects.filter(host=host.name, action__in=JUDGED).order_by()
    if seqs is not None:
        decisions = decisions.filter(seq__in=sorted(set(seqs)))
    # each decision with its stored outcome (None: none yet), in one read, as plain tuples
    rows = plain_rows(decisions.values_list(*_READ, *(f"outcome__{name}" for name in STORED)))
    judgement = host_outcomes(host=host, decisions=rows)
    split = len(DECISION_FIELDS)
    changed = []  # (decision id, found, stored kind or None)
    which, afters = judgement.which, judgement.sessions_after
    said = [(o.outcome, digest, OUTCOMES_VERSION) for o, digest in judgement.found]
    for i, row in enumerate(rows):  # a Found made only for what is revised (most are not)
        if revised(said[which[i]], afters[i], row[split:]):
            changed.append((row[ID], judgement.of(i), row[split]))
    if not changed:
        return 0
    changed.sort(key=lambda c: c[0])
    now = timezone.now()
    with for_host(host.name), transaction.atomic():  # host-narrowed (docs/production.md, "Cache")
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
        if any(kind != f.outcome.outcome for _i, f, kind in changed):
            calibration_rollup(host=host.name)
    return len(changed)


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
