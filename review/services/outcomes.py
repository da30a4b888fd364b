"""Computing and storing the outcomes of decisions (``DecisionOutcome``): did the cut help?

``outcomes_refresh(host=...)`` recomputes the outcome of every retire, restore, approve and roll back of
one host from the corrections, sessions and verdicts stored after each decision
(``lessons.core.outcomes``), and stores them (one upsert a ``WRITE_BATCH``). It runs after an ingest
or sync brought new evidence for the host (the ``lessons.signals.host_evidence_changed`` receiver,
``review.apps``), after a decision (its own host), and from ``manage.py outcomes``. The same stored
rows give the same outcomes on SQLite and PostgreSQL. docs/decisions.md, "Outcomes".
"""

from __future__ import annotations

import bisect
import functools
from collections import defaultdict
from collections.abc import Iterable

from django.conf import settings
from django.db import transaction
from django.db.models import Count, DateField, Max
from django.db.models.functions import TruncMonth
from django.utils import timezone

from lessons.core.outcomes import (
    OUTCOMES_VERSION,
    CorrectionSeen,
    Outcome,
    VerdictSeen,
    live_again_outcome,
    on_topic,
    retire_outcome,
)
from lessons.core.recurrence import USER_CORRECTION
from lessons.core.text import from_ms, to_ms
from lessons.models import Correction, CorrectionAttribution, Draft, Exposure, Host, Lesson, Verdict
from review.models import Action, CalibrationCount, Decision, DecisionOutcome

JUDGED = (Action.RETIRE, Action.RESTORE, Action.APPROVE, Action.ROLLBACK)
# What the rules read of a decision: not its evidence, reason or hashes of the chain (1M decisions).
DECISION_FIELDS = ("id", "seq", "at", "action", "host", "lesson_hash", "created_hash", "draft_id")
WRITE_BATCH = 500


def _session_ends(host: Host, since_ms: int) -> list[int]:
    """The epoch ms of the last activity (exposure or correction) of each session of ``host`` active
    after ``since_ms``, sorted: only the host's activity after its oldest judged decision is read."""
    last: dict[str, int] = {}
    for model, field in ((Exposure, "shown_at"), (Correction, "corrected_at")):
        after = model.objects.filter(host=host, **{f"{field}__gt": from_ms(since_ms)})
        rows = after.values("session").annotate(last=Max(field))
        for row in rows.values_list("session", "last"):
            ms = to_ms(row[1])
            if ms > last.get(row[0], -1):
                last[row[0]] = ms
    return sorted(last.values())


def _corrections_after(host: Host, since_ms: int) -> list[CorrectionSeen]:
    """The host's user corrections after ``since_ms`` with what they were charged to (two queries)."""
    rows = list(
        Correction.objects.filter(host=host, kind=USER_CORRECTION, corrected_at__gt=from_ms(since_ms))
        .order_by("corrected_at", "id")
        .values_list("id", "session", "corrected_at", "text")
    )
    charged: dict[int, list[tuple[str, str | None]]] = defaultdict(list)
    ids = [r[0] for r in rows]
    for start in range(0, len(ids), 500):
        attributions = CorrectionAttribution.objects.filter(correction_id__in=ids[start : start + 500])
        for correction_id, outcome, lesson_hash in attributions.values_list(
            "correction_id", "outcome", "lesson__hash"
        ):
            charged[correction_id].append((outcome, lesson_hash))
    return [
        CorrectionSeen(id=i, session=s, at_ms=to_ms(at), text=t, charged=tuple(sorted(charged[i], key=str)))
        for i, s, at, t in rows
    ]


def _made_live(decision: Decision, drafts: dict[str, list[str]]) -> list[str]:
    """The lessons (hashes) a decision made live: the consolidation an approve created, the lesson a
    restore brought back, the members a roll back brought back."""
    if decision.action == Action.APPROVE:
        return [decision.created_hash] if decision.created_hash else []
    if decision.action == Action.RESTORE:
        return [decision.lesson_hash] if decision.lesson_hash else []
    return list(drafts.get(decision.draft_id or "", []))


def host_outcomes(*, host: Host, decisions: Iterable[Decision]) -> dict[int, Outcome]:
    """The outcomes of ``decisions`` (of ``host``, judged kinds only; others are skipped), by decision
    id, from what is stored now. Queries: a few per host, none per decision."""
    decisions = [d for d in decisions if d.action in JUDGED]
    if not decisions:
        return {}
    since = min(to_ms(d.at) for d in decisions)
    ends = _session_ends(host, since)
    corrections = _corrections_after(host, since)
    hashes = {h for d in decisions for h in (d.lesson_hash, d.created_hash) if h}
    draft_ids = {d.draft_id for d in decisions if d.action == Action.ROLLBACK and d.draft_id}
    drafts = {
        ext_id: list(supersedes)
        for ext_id, supersedes in Draft.objects.filter(host=host, ext_id__in=draft_ids).values_list(
            "ext_id", "supersedes"
        )
    }
    hashes |= {h for members in drafts.values() for h in members}
    lessons = {
        h: (ns, subj, text)
        for h, ns, subj, text in Lesson.objects.filter(host=host, hash__in=hashes).values_list(
            "hash", "namespace", "subject", "text"
        )
    }
    retired = [d.lesson_hash for d in decisions if d.action == Action.RETIRE and d.lesson_hash in lessons]
    entities = {lessons[h][:2] for h in retired}
    live: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    if entities:
        rows = Lesson.objects.filter(
            host=host, subject__in=sorted({s for _n, s in entities}), status=Lesson.Status.LIVE
        ).values_list("namespace", "subject", "hash", "text")
        for ns, subj, h, text in rows:
            if (ns, subj) in entities:
                live[(ns, subj)].append((h, text))
    verdicts = [
        VerdictSeen(lesson=h, verdict=v, at_ms=to_ms(at))
        for h, v, at in Verdict.objects.filter(
            host=host, lesson__hash__in=sorted(hashes), measured_at__gt=from_ms(since)
        ).values_list("lesson__hash", "verdict", "measured_at")
    ]
    verdicts.sort(key=lambda v: v.at_ms)
    correction_times = [c.at_ms for c in corrections]  # sorted: read in corrected_at order
    verdict_times = [v.at_ms for v in verdicts]
    support = settings.OUTCOME_SUPPORT_SESSIONS
    # Whether a live member is on a retired lesson's topic, asked once per pair of texts: every retire on
    # an entity asks it of the same live members (2.7M tokenizations for one host's 340k decisions).
    topic = functools.lru_cache(maxsize=65_536)(on_topic)
    out: dict[int, Outcome] = {}
    for d in decisions:
        t = to_ms(d.at)
        after = len(ends) - bisect.bisect_right(ends, t)
        # what came after the decision: a slice of each time-sorted list, not a scan per decision
        later = corrections[bisect.bisect_right(correction_times, t) :]
        if d.action == Action.RETIRE:
            ns, subj, text = lessons.get(d.lesson_hash, ("", "", ""))
            kept = [(h, k) for h, k in live.get((ns, subj), []) if h != d.lesson_hash and topic(text, k)]
            out[d.id] = retire_outcome(
                lesson_text=text, kept=kept, corrections=later, sessions_after=after, support_sessions=support
            )
        else:
            made = _made_live(d, drafts)
            what = {Action.APPROVE: "the consolidation", Action.RESTORE: "the restored lesson"}.get(
                d.action, "the lessons brought back"
            )
            out[d.id] = live_again_outcome(
                lessons=made,
                verdicts=verdicts[bisect.bisect_right(verdict_times, t) :],
                corrections=later,
                sessions_after=after,
                what=what,
            )
    return out


def outcomes_refresh(*, host: Host | str | int, seqs: Iterable[int] | None = None) -> int:
    """Recompute and store the outcomes of ``host``'s judged decisions (those numbered ``seqs``, or all
    of them), in one transaction. A host (name or id) that does not exist, or has no judged decision,
    costs one query and stores nothing. Returns how many were stored. docs/decisions.md, "Outcomes"."""
    if not isinstance(host, Host):
        host = Host.objects.filter(**({"name": host} if isinstance(host, str) else {"id": host})).first()
        if host is None:
            return 0
    decisions = Decision.objects.filter(host=host.name, action__in=JUDGED).only(*DECISION_FIELDS)
    if seqs is not None:
        decisions = decisions.filter(seq__in=sorted(set(seqs)))
    found = host_outcomes(host=host, decisions=decisions.order_by("seq"))
    now = timezone.now()
    rows = [
        DecisionOutcome(
            decision_id=decision_id,
            host=host.name,
            outcome=o.outcome,
            sessions_after=o.sessions_after,
            evidence=o.as_evidence(),
            computed_at=now,
            version=OUTCOMES_VERSION,
        )
        for decision_id, o in sorted(found.items())
    ]
    if not rows:
        return 0
    with transaction.atomic():
        DecisionOutcome.objects.bulk_create(
            rows,
            batch_size=WRITE_BATCH,
            update_conflicts=True,
            unique_fields=["decision"],
            update_fields=["outcome", "sessions_after", "evidence", "computed_at", "version"],
        )
        calibration_rollup(host=host.name)
    return len(rows)


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
    so an ingest for hosts without any costs one query."""
    names = sorted(set(hosts))
    if not names:
        return
    judged = Decision.objects.filter(host__in=names, action__in=JUDGED).values_list("host", flat=True)
    for name in sorted(set(judged.distinct())):
        outcomes_refresh(host=name)
