"""Reviewers' decisions applied back to an areev memory file, by a host operator's command.

Nothing here runs on its own: ``manage.py apply_decisions --areev MEMORY_PATH --host NAME`` calls
``decisions_apply_areev``. For each decision of the host without an acknowledgement, in ``seq`` order,
the engine's own operation is called through the binding with the reviewer as the actor
(``user:<username>``) and the decision's reason as the engine's ``because``; then the decision is
acknowledged ``applied``, or ``failed`` with the engine's message (docs/decisions.md, "Hosts apply
decisions"). An acknowledged decision is never applied again. The draft id is the recommendation
hash (``sync_areev`` imports each recommendation under its hash). A run holds the host's apply lock
(``review.apply.host_lock``) from before it reads the decisions to its last acknowledgement, so a second
run waits for it and then finds nothing left to apply; and an ``applied`` acknowledgement is never turned
into ``failed`` (``review.services.acks``): such a refusal is reported as skipped.

What each decision becomes in areev 1.13.2:

- ``approve_consolidation``: ``apply_recommendation`` on the pending recommendation (it records the
  approval and the apply under one actor; a separate approve would strand it as ``approved``).
  Refused first unless every member it supersedes is still a live lesson in the engine: areev's
  apply is not atomic (a missing member leaves the new lesson next to the untouched members).
- ``reject_consolidation``: ``dismiss_recommendation``.
- ``rollback_consolidation``: ``rollback_recommendation``.
- ``retire``: a ``lesson_retired`` marker grain on the entity that keeps the lesson's fields and the
  reason, then ``forget`` of the lesson. ``forget`` is the engine's own tombstone (its rollback and
  the pile analyzer's "retired" case use it); the lesson leaves the prompt and the pile at once.
  A ``supersede`` to a marker would give a restored lesson a new hash, a second lesson to the
  dashboard; re-adding forgotten fields gives back the same hash.
- ``restore``: the kept fields added again (the same content address, live), then ``forget`` of the
  marker.
- ``set_budget``: not applied (a budget is the dashboard's); skipped, never acknowledged.
- after the decisions, the engine's own pending ``loop.lesson_pile/1`` finding on an entity whose pile a
  retire or an approve of this run resolved (the engine's live lessons there now within the finding's
  ``max_active``) is dismissed through the binding, its reason naming the reviewers' decisions; a dry
  run says it would (judging by the dashboard's live count, as nothing was applied). Only pile findings
  of those entities are touched.
- any decision on a consolidation a reviewer wrote (``areev_written``): there is no recommendation, so
  the approval is written as areev's loop writes a consolidation (the lesson, then a marker superseding
  each member), a roll back forgets them, a reject changes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lessons.core.piles import pile_target
from lessons.core.text import hash8
from lessons.importers.areev_engine import PILE_ANALYZER, EngineError, Memory, cal_value, check_memory
from lessons.models import Lesson
from review.models import Action, Decision
from review.services.acks import AckAlreadyApplied, decision_ack

from .areev_written import WrittenRefused, apply_written, is_written
from .host_lock import host_apply_lock

ACK_TOKEN = "apply_decisions --areev"
RETIRED_RELATION = "lesson_retired"
APPLIED, REFUSED, SKIPPED = "applied", "refused", "skipped"
DISMISSED = "dismissed"  # an engine's pile finding a run's decisions resolved (not a decision: not counted)
PILE_RESOLVED = (
    "pile resolved by the reviewers' decisions {seqs} in Lesson Pile Review "
    "({live} live, max_active {max_active})"
)
FINDING_DISMISSED = "pile finding {short}… on {target} {verb} as {actor}: {reason}"
SHRINKS = (Action.RETIRE, Action.APPROVE)
NOT_APPLIED_BUDGET = "a budget is the dashboard's; nothing to apply to the engine"
MEMBER_NOT_LIVE = "member {short}… is no longer a live lesson in the engine; not applied"
REC_STATUS = "recommendation {short}… is {status} in the engine, not {wanted}"
LESSON_NOT_LIVE = "lesson {short}… is not a live lesson in the engine"
NO_MARKER = "no lesson_retired marker for {short}… in the engine; it was not retired by apply_decisions"
RESTORED_ELSEWHERE = "the kept fields were added again as {other}…, not {short}…"
KEPT_APPLIED = "already acknowledged applied, which stays; the engine now says: {detail}"


@dataclass(frozen=True)
class Applied:
    """What happened to one decision: ``status`` applied, refused (acked failed) or skipped (no ack)."""

    seq: int
    action: str
    status: str
    detail: str

    def line(self) -> str:
        return f"{self.status}: #{self.seq} {self.action}: {self.detail}"


class _Refused(Exception):
    """The engine cannot apply this decision; ``str(exc)`` is the acknowledgement's detail."""


def decisions_apply_areev(
    *,
    path: Path,
    host: str,
    dry_run: bool,
    wait_s: float = 0,
    on_wait: Callable[[str], None] | None = None,
) -> list[Applied]:
    """Apply the host's unacknowledged decisions to the memory file at ``path``; one ``Applied`` each.

    ``dry_run`` opens the file read-only, checks each decision against the engine and writes nothing
    (no engine change, no acknowledgement, no lock). Otherwise the run holds the host's apply lock,
    waiting up to ``wait_s`` seconds for another run (``on_wait`` is told once). Raises
    ``EngineMissing`` (no areev package), ``EngineError`` (the file cannot be opened) or ``ApplyBusy``
    (another run holds the host) before the first decision.
    """
    check_memory(Path(path))  # a wrong path or no binding says so even when nothing is waiting
    if dry_run:
        return _apply_pending(path=path, host=host, dry_run=True)
    with host_apply_lock(host=host, engine="areev", wait_s=wait_s, on_wait=on_wait) as lock:
        return _apply_pending(path=path, host=host, dry_run=False, renew=lock.renew)


def _apply_pending(
    *, path: Path, host: str, dry_run: bool, renew: Callable[[], None] | None = None
) -> list[Applied]:
    decisions = Decision.objects.filter(host=host, ack__isnull=True).order_by("seq")
    out = []
    for decision in decisions:
        if decision.action == Action.SET_BUDGET:
            out.append(Applied(decision.seq, decision.action, SKIPPED, NOT_APPLIED_BUDGET))
            continue
        if renew is not None:
            renew()  # stops here should another run have taken the lock over
        # One handle per file per process: each decision opens the file as its own reviewer.
        with Memory(Path(path), actor=f"user:{decision.actor}", read_only=dry_run) as mem:
            try:
                detail = _apply(mem, decision, dry_run=dry_run)
                status = APPLIED
            except (EngineError, _Refused, WrittenRefused) as exc:
                detail, status = str(exc), REFUSED
        if not dry_run:
            try:
                decision_ack(
                    decision=decision,
                    status="applied" if status == APPLIED else "failed",
                    detail=detail,
                    token_name=ACK_TOKEN,
                )
            except AckAlreadyApplied:
                detail, status = KEPT_APPLIED.format(detail=detail), SKIPPED
        out.append(Applied(decision.seq, decision.action, status, detail))
    resolving = [a for a in out if a.status == APPLIED and a.action in SHRINKS]
    if resolving:
        out += _dismiss_resolved_piles(
            path, [d for d in decisions if d.seq in {a.seq for a in resolving}], dry_run
        )
    return out


def _dismiss_resolved_piles(path: Path, decisions: list[Decision], dry_run: bool) -> list[Applied]:
    """Dismiss the engine's pending pile findings on the entities of ``decisions`` (retires and approves
    this run applied) whose pile they resolved; one ``Applied`` (``DISMISSED``) each."""
    by_entity: dict[tuple[str, str], list[Decision]] = {}
    for d in decisions:
        by_entity.setdefault((d.namespace or "", d.subject or ""), []).append(d)
    out = []
    with Memory(Path(path), actor=f"user:{decisions[-1].actor}", read_only=dry_run) as mem:
        pending = mem.call("recommendations", json.dumps({"status": "pending"}))
        findings = [r for r in pending if r.get("analyzer") == PILE_ANALYZER]
        for (namespace, subject), mine in by_entity.items():
            target = pile_target(namespace, subject)
            for rec in (r for r in findings if r.get("target_ref") == target):
                data = rec.get("data") or mem.call("recommendation", rec["hash"]).get("data") or {}
                max_active = data.get("max_active")
                live = (
                    _dashboard_live(mine[0].host, namespace, subject)
                    if dry_run
                    else len(_live_heads(mem, namespace, subject))
                )
                if not isinstance(max_active, int) or live > max_active:
                    continue
                seqs = ", ".join(f"#{d.seq}" for d in mine)
                reason = PILE_RESOLVED.format(seqs=seqs, live=live, max_active=max_active)
                if not dry_run:
                    mem.call("dismiss_recommendation", rec["hash"], reason)
                detail = FINDING_DISMISSED.format(
                    short=hash8(rec["hash"]),
                    target=target,
                    verb="would be dismissed" if dry_run else "dismissed",
                    actor=mem.actor,
                    reason=reason,
                )
                out.append(Applied(mine[-1].seq, "lesson_pile finding", DISMISSED, detail))
    return out


def _dashboard_live(host: str, namespace: str, subject: str) -> int:
    """The entity's live lessons in the dashboard (a dry run's stand-in for the engine after it)."""
    return Lesson.objects.filter(
        host__name=host, namespace=namespace, subject=subject, status=Lesson.Status.LIVE
    ).count()


def _apply(mem: Memory, decision: Decision, *, dry_run: bool) -> str:
    if is_written(decision):  # written by a reviewer: no recommendation in the engine (areev_written)
        return apply_written(mem, decision, dry_run=dry_run)
    reason = decision.reason
    if decision.action == Action.APPROVE:
        rec = _recommendation(mem, decision.draft_id, wanted="pending")
        _check_members(mem, decision, rec)
        if not dry_run:
            mem.call("apply_recommendation", rec["hash"], reason)
        return f"recommendation {hash8(rec['hash'])}… applied as {mem.actor}"
    if decision.action == Action.REJECT:
        rec = _recommendation(mem, decision.draft_id, wanted="pending")
        if not dry_run:
            mem.call("dismiss_recommendation", rec["hash"], reason)
        return f"recommendation {hash8(rec['hash'])}… dismissed as {mem.actor}"
    if decision.action == Action.ROLLBACK:
        rec = _recommendation(mem, decision.draft_id, wanted="applied")
        if not dry_run:
            mem.call("rollback_recommendation", rec["hash"], reason)
        return f"recommendation {hash8(rec['hash'])}… rolled back as {mem.actor}"
    if decision.action == Action.RETIRE:
        return _retire(mem, decision, dry_run=dry_run)
    return _restore(mem, decision, dry_run=dry_run)


def _recommendation(mem: Memory, rec_hash: str | None, *, wanted: str) -> dict[str, Any]:
    rec = mem.call("recommendation", rec_hash or "")
    if rec.get("hash") != rec_hash:  # the binding accepts a prefix here; a decision names the full hash
        raise _Refused(f"no recommendation {rec_hash} in the engine")
    if rec.get("status") != wanted:
        raise _Refused(REC_STATUS.format(short=hash8(rec_hash), status=rec.get("status"), wanted=wanted))
    return rec


def _live_heads(mem: Memory, namespace: str, subject: str) -> set[str]:
    return {g["hash"] for g in mem.call("recall", subject, "lesson", 1000, ns=namespace)}


def _check_members(mem: Memory, decision: Decision, rec: dict[str, Any]) -> None:
    targets = [
        line.split()[1].removeprefix("sha256:")
        for line in str(rec.get("cal", "")).split("\n")
        if line.startswith("SUPERSEDE ")
    ]
    live = _live_heads(mem, decision.namespace or "", decision.subject or "")
    for target in targets:
        if target not in live:
            raise _Refused(MEMBER_NOT_LIVE.format(short=hash8(target)))


def _entity_grains(mem: Memory, decision: Decision) -> list[dict[str, Any]]:
    where = (
        f"namespace = {cal_value(decision.namespace or '')} AND subject = {cal_value(decision.subject or '')}"
    )
    return mem.grains(where)


def _retire(mem: Memory, decision: Decision, *, dry_run: bool) -> str:
    digest = decision.lesson_hash or ""
    grain = next(
        (
            g
            for g in _entity_grains(mem, decision)
            if g["hash"] == digest and "superseded_by" not in g["fields"]
        ),
        None,
    )
    if grain is None or grain["fields"].get("relation") != "lesson":
        raise _Refused(LESSON_NOT_LIVE.format(short=hash8(digest)))
    if not dry_run:
        fields = grain["fields"]
        marker = {
            "subject": fields["subject"],
            "relation": RETIRED_RELATION,
            "object": fields.get("object", ""),
            "retires": digest,
            "retired_fields": json.dumps(fields, sort_keys=True, ensure_ascii=False),
            "because": decision.reason,
            "decision_seq": decision.seq,
        }
        # The marker first: should the forget fail, the lesson stays live and nothing is lost.
        mem.call("add", "fact", json.dumps(marker, ensure_ascii=False), ns=decision.namespace or "")
        mem.call("forget", digest)
    return f"lesson {hash8(digest)}… forgotten as {mem.actor}; its fields kept in a {RETIRED_RELATION} marker"


def _restore(mem: Memory, decision: Decision, *, dry_run: bool) -> str:
    digest = decision.lesson_hash or ""
    markers = [
        g
        for g in _entity_grains(mem, decision)
        if g["fields"].get("relation") == RETIRED_RELATION
        and g["fields"].get("retires") == digest
        and "superseded_by" not in g["fields"]
    ]
    if not markers:
        raise _Refused(NO_MARKER.format(short=hash8(digest)))
    marker = markers[-1]
    if not dry_run:
        fields = json.loads(marker["fields"]["retired_fields"])
        added = mem.call("add", "fact", json.dumps(fields, ensure_ascii=False), ns=decision.namespace or "")
        if added != digest:
            raise _Refused(RESTORED_ELSEWHERE.format(other=hash8(str(added)), short=hash8(digest)))
        mem.call("forget", marker["hash"])
    return f"lesson {hash8(digest)}… added again as {mem.actor}; its {RETIRED_RELATION} marker forgotten"
