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

import bisect
import logging
from collections import defaultdict, namedtuple
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import NamedTuple

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.db.models import Count, DateField, Max
from django.db.models.functions import TruncMonth
from django.utils import timezone

from lessons.core.outcomes import (
    OUTCOMES_VERSION,
    TOO_EARLY,
    CorrectionSeen,
    Later,
    LatestVerdicts,
    Outcome,
    TopicIndex,
    VerdictSeen,
    live_again_outcome,
    retire_outcome,
)
from lessons.core.recurrence import USER_CORRECTION, lesson_profile
from lessons.core.text import from_ms
from lessons.core.tokens import correction_tokens, tokens_match
from lessons.models import Correction, CorrectionAttribution, Draft, Exposure, Host, Lesson, Verdict
from lessons.recurrence.versions import EpochMs
from review.models import Action, CalibrationCount, Decision, DecisionOutcome

JUDGED = (Action.RETIRE, Action.RESTORE, Action.APPROVE, Action.ROLLBACK)
# What the rules read of a decision: not its evidence, reason or hashes of the chain (1M decisions).
DECISION_FIELDS = ("id", "seq", "at_ms", "action", "host", "lesson_hash", "created_hash", "draft_id")
# A decision as the rules read it: no model instance, its time as epoch ms (UTC) computed by the database.
Judged = namedtuple("Judged", DECISION_FIELDS)
_READ = tuple(EpochMs("at") if name == "at_ms" else name for name in DECISION_FIELDS)
WRITE_BATCH = 500
NOT_RECOMPUTED = (
    "outcomes of host %s not recomputed after its import (%s); `manage.py outcomes --host %s` recomputes them"
)
log = logging.getLogger(__name__)


def _session_ends(host: Host, since_ms: int) -> list[int]:
    """The epoch ms of the last activity (exposure or correction) of each session of ``host`` active
    after ``since_ms``, sorted: only the host's activity after its oldest judged decision is read."""
    last: dict[str, int] = {}
    for model, field in ((Exposure, "shown_at"), (Correction, "corrected_at")):
        after = model.objects.filter(host=host, **{f"{field}__gt": from_ms(since_ms)})
        rows = after.values("session").annotate(last=EpochMs(Max(field)))
        for session, ms in rows.values_list("session", "last"):
            if ms > last.get(session, -1):
                last[session] = ms
    return sorted(last.values())


def _corrections_after(host: Host, since_ms: int) -> list[CorrectionSeen]:
    """The host's user corrections after ``since_ms`` with what they were charged to (two queries)."""
    after = from_ms(since_ms)
    rows = list(
        Correction.objects.filter(host=host, kind=USER_CORRECTION, corrected_at__gt=after)
        .order_by("corrected_at", "id")
        .values_list("id", "session", EpochMs("corrected_at"), "text")
    )
    charged: dict[int, list[tuple[str, str | None]]] = defaultdict(list)
    attributions = CorrectionAttribution.objects.filter(
        host=host, correction__kind=USER_CORRECTION, correction__corrected_at__gt=after
    )
    for correction_id, outcome, lesson_hash in attributions.values_list(
        "correction_id", "outcome", "lesson__hash"
    ):
        charged[correction_id].append((outcome, lesson_hash))
    return [
        CorrectionSeen(id=i, session=s, at_ms=at, text=t, charged=tuple(sorted(charged[i], key=str)))
        for i, s, at, t in rows
    ]


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

    def __init__(self, host: Host, decisions: list[Judged]) -> None:
        since = min(d.at_ms for d in decisions)
        self.ends = _session_ends(host, since)
        self.topics = TopicIndex(_corrections_after(host, since))
        hashes = {h for d in decisions for h in (d.lesson_hash, d.created_hash) if h}
        draft_ids = {d.draft_id for d in decisions if d.action == Action.ROLLBACK and d.draft_id}
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
            d.lesson_hash for d in decisions if d.action == Action.RETIRE and d.lesson_hash in self.lessons
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
        self._against: dict[str, tuple[Later, bool]] = {}
        self._recurred: dict[tuple[str, ...], Later] = {}
        self.verdicts = LatestVerdicts(
            VerdictSeen(lesson=h, verdict=v, at_ms=at, horizon_ms=horizon, seq=pk)
            for h, v, at, horizon, pk in Verdict.objects.filter(
                host=host, lesson__hash__in=sorted(hashes), measured_at__gt=from_ms(since)
            ).values_list("lesson__hash", "verdict", EpochMs("measured_at"), "horizon_ms", "id")
        )

    def sessions_after(self, at_ms: int) -> int:
        """The host's sessions whose last activity is after ``at_ms``."""
        return len(self.ends) - bisect.bisect_right(self.ends, at_ms)

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

    def revised(self, stored: Sequence | None) -> bool:
        """Whether this differs from a stored outcome ``(outcome, sessions_after, digest, version)`` (None:
        none stored) in what it says: its kind, its evidence, the rules' version, or, while too early, its
        count of sessions (the count it waits on). A supported or contradicted outcome whose only change
        is a larger count is not revised: its stored count is dated by ``computed_at``."""
        if stored is None:
            return True
        kind, sessions_after, digest, version = stored
        if (kind, digest, version) != (self.outcome.outcome, self.digest, OUTCOMES_VERSION):
            return True
        return kind == TOO_EARLY and sessions_after != self.sessions_after


def host_outcomes(*, host: Host, decisions: Iterable[Judged]) -> dict[int, Found]:
    """The outcomes of ``decisions`` (of ``host``, judged kinds only; others are skipped), by decision
    id, from what is stored now. Queries: a few per host, none per decision; the work per decision is
    look-ups (``_Evidence``), and decisions that see the same evidence share one ``Outcome`` (and its
    digest), so a host's recompute grows with its decisions and evidence, not their product."""
    decisions = [d for d in decisions if d.action in JUDGED]
    if not decisions:
        return {}
    seen = _Evidence(host, decisions)
    support = settings.OUTCOME_SUPPORT_SESSIONS
    judged: dict[tuple, tuple[Outcome, str]] = {}
    out: dict[int, Found] = {}
    for d in decisions:
        t = d.at_ms
        after = seen.sessions_after(t)
        if d.action == Action.RETIRE:
            against, kept = seen.against(d.lesson_hash or "")
            start = against.start(t)
            key: tuple = (d.lesson_hash, start, after >= support)
            hit = judged.get(key)
            if hit is None or hit[0].outcome == TOO_EARLY:  # too early: its sentence has the count
                o = retire_outcome(
                    against=against, start=start, kept=kept, sessions_after=after, support_sessions=support
                )
                hit = judged[key] = (o, o.digest())
        else:
            made = tuple(sorted(set(_made_live(d, seen.drafts))))
            latest = seen.verdicts.after(made, t)
            recurred = seen.recurred(made)
            start = recurred.start(t)
            key = (d.action, made, start, tuple(latest))
            hit = judged.get(key)
            if hit is None:
                what = {Action.APPROVE: "the consolidation", Action.RESTORE: "the restored lesson"}.get(
                    d.action, "the lessons brought back"
                )
                o = live_again_outcome(latest=latest, recurred=recurred, start=start, what=what)
                hit = judged[key] = (o, o.digest())
        out[d.id] = Found(hit[0], after, hit[1])
    return out


def outcomes_refresh(*, host: Host | str | int, seqs: Iterable[int] | None = None) -> int:
    """Recompute the outcomes of ``host``'s judged decisions (those numbered ``seqs``, or all of them) and
    store those revised (``Found.revised``: kind, evidence, rules' version, or a too-early count), in one
    transaction; ``computed_at`` is when a stored outcome was last revised. The calibration rollup is
    rebuilt only when a kind changed. A host (name or id) that does not exist, or has no judged decision,
    costs one query and stores nothing. Returns how many were stored. docs/decisions.md, "Outcomes"."""
    if not isinstance(host, Host):
        host = Host.objects.filter(**({"name": host} if isinstance(host, str) else {"id": host})).first()
        if host is None:
            return 0
    decisions = Decision.objects.filter(host=host.name, action__in=JUDGED)
    if seqs is not None:
        decisions = decisions.filter(seq__in=sorted(set(seqs)))
    found = host_outcomes(host=host, decisions=map(Judged._make, decisions.values_list(*_READ)))
    if not found:
        return 0
    stored = {
        decision_id: rest
        for decision_id, *rest in DecisionOutcome.objects.filter(host=host.name).values_list(
            "decision_id", "outcome", "sessions_after", "digest", "version"
        )
        if decision_id in found
    }
    changed = {i: f for i, f in found.items() if f.revised(stored.get(i))}
    if not changed:
        return 0
    now = timezone.now()
    with transaction.atomic():
        _update(
            [(f, decision_id) for decision_id, f in sorted(changed.items()) if decision_id in stored], now
        )
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
                for decision_id, f in sorted(changed.items())
                if decision_id not in stored
            ],
            batch_size=WRITE_BATCH,
            # another refresh of the host (a parallel ingest, a decision) may have stored it meanwhile
            update_conflicts=True,
            unique_fields=["decision"],
            update_fields=["outcome", "sessions_after", "evidence", "digest", "computed_at", "version"],
        )
        if any(stored.get(i, [None])[0] != f.outcome.outcome for i, f in changed.items()):
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
