"""Reviewers' decisions applied back to an altimate-code learn store, each one acknowledged.

``apply_altimate`` holds the host's apply lock (``host_lock``: one run per host), reads the host's
decisions not yet acknowledged ``applied`` (a failed one is tried again), in ``seq`` order, and under one
hold of altimate's learn lock reads the stores, changes them in memory (``altimate_store.StoreState``)
and writes each changed store once; then it acknowledges every decision: ``applied``, or ``failed`` with
the reason. Should a file read have changed before the write (a writer that ignores the lock), nothing
is written and nothing acknowledged (``StoreMovedOn``). A decision whose effect the store already shows
is acknowledged applied without a change, so a rerun applies nothing twice. ``dry_run`` takes no lock
and writes no file and no acknowledgement.
docs/decisions.md, "Hosts apply decisions"; issue 11, item 3; issue 21, items 1 and 3.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.utils import timezone

from lessons.core.text import format_datetime, hash8
from lessons.importers.altimate import find_learn_dir
from lessons.models import Draft, Lesson
from review.models import Action, Decision, DecisionAck
from review.services.acks import AckAlreadyApplied, decision_ack

from .altimate_store import (
    E_LOCK_LOST,
    E_MOVED_ON,
    LOCK_NAME,
    StoreMovedOn,
    StoreRefused,
    StoreState,
    learn_lock,
)
from .host_lock import host_apply_lock

ACK_TOKEN = "apply_decisions --altimate"
E_NO_LESSON = "lesson {short}… has no altimate id and store (it was not imported from an altimate store)"
E_NO_STORE = "no store folder {store}/ in {learn}"
E_NO_DRAFT = "draft {draft} is not in the dashboard"
E_MIXED = "the members of draft {draft} are not all lessons of one altimate store"
NOTHING = "nothing to change in an altimate store"
KEPT_APPLIED = "already acknowledged applied, which stays; the store now says: {detail}"


@dataclass
class ApplyReport:
    """What one run did: one line per decision, by outcome, and the files written per store."""

    applied: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    written: list[str] = field(default_factory=list)
    dry_run: bool = False

    def lines(self) -> list[str]:
        head = "dry run, nothing written: " if self.dry_run else ""
        out = [f"{head}{len(self.applied)} applied, {len(self.skipped)} skipped, {len(self.refused)} refused"]
        out += [f"applied {line}" for line in self.applied]
        out += [f"skipped {line}" for line in self.skipped]
        out += [f"refused {line}" for line in self.refused]
        out += [f"wrote {path}" for path in self.written]
        return out


def _label(decision: Decision) -> str:
    return f"#{decision.seq} {decision.action}"


def _tag(decision: Decision) -> str:
    """Who decided, kept with the reason in retired.json (the dashboard shows it as the source's note)."""
    return f"{decision.reason} (review decision #{decision.seq} by {decision.actor})"


class _Stores:
    """The learn folder's stores, loaded on first use."""

    def __init__(self, learn: Path):
        self.learn = learn
        self.loaded: dict[str, StoreState] = {}

    def get(self, name: str | None) -> StoreState:
        if name not in self.loaded:
            path = self.learn / (name or "")
            if not name or not path.is_dir() or path.is_symlink():
                raise StoreRefused(E_NO_STORE.format(store=name, learn=self.learn))
            self.loaded[name] = StoreState.load(path)
        return self.loaded[name]


def _members(decision: Decision) -> tuple[Draft, list[Lesson]]:
    draft = Draft.objects.filter(host__name=decision.host, ext_id=decision.draft_id).first()
    if draft is None:
        raise StoreRefused(E_NO_DRAFT.format(draft=decision.draft_id))
    rows = {x.hash: x for x in Lesson.objects.filter(host__name=decision.host, hash__in=draft.supersedes)}
    members = [rows[h] for h in draft.supersedes if h in rows]
    if len(members) != len(draft.supersedes) or len({(m.store, bool(m.lesson_id)) for m in members}) != 1:
        raise StoreRefused(E_MIXED.format(draft=draft.ext_id))
    if not members[0].lesson_id:
        raise StoreRefused(E_MIXED.format(draft=draft.ext_id))
    return draft, members


def _apply_one(decision: Decision, stores: _Stores) -> tuple[str, str]:
    """Apply one decision in memory; returns ``(outcome, detail)``, outcome ``applied`` or ``already``.

    The store changed records the decision's ``seq``. Raises ``StoreRefused`` when it cannot take it.
    """
    if decision.action in (Action.RETIRE, Action.RESTORE):
        if not (decision.lesson_id and decision.store):
            raise StoreRefused(E_NO_LESSON.format(short=hash8(decision.lesson_hash)))
        store = stores.get(decision.store)
        if decision.action == Action.RETIRE:
            if store.find(decision.lesson_id) is None and store.find_retired(decision.lesson_id):
                return "already", f"{decision.lesson_id} is already in {store.name}/retired.json"
            store.retire(lesson_id=decision.lesson_id, digest=decision.lesson_hash, reason=_tag(decision))
            store.decisions.append(decision.seq)
            return "applied", f"{decision.lesson_id} moved to {store.name}/retired.json"
        if store.find(decision.lesson_id) is not None:
            return "already", f"{decision.lesson_id} is already in {store.name}/approved.json"
        store.restore(lesson_id=decision.lesson_id)
        store.decisions.append(decision.seq)
        return "applied", f"{decision.lesson_id} moved back to {store.name}/approved.json"
    draft, members = _members(decision)
    store = stores.get(members[0].store)
    if decision.action == Action.APPROVE:
        existing = store.by_hash(decision.created_hash)
        if existing is not None:
            return "already", f"{existing['id']} is already in {store.name}/approved.json"
        new_id = store.consolidate(
            members=[(m.lesson_id, m.hash) for m in members],
            text=draft.text,
            digest=decision.created_hash,
            at=format_datetime(decision.at),
        )
        store.decisions.append(decision.seq)
        ids = ", ".join(m.lesson_id for m in members)
        return "applied", f"{new_id} added to {store.name}/approved.json, superseding {ids}"
    lesson = store.by_hash(decision.lesson_hash)
    if lesson is None:
        return (
            "already",
            f"the consolidation {hash8(decision.lesson_hash)}… is not in {store.name}/approved.json",
        )
    store.unconsolidate(lesson=lesson, member_ids=[m.lesson_id for m in members], reason=_tag(decision))
    store.decisions.append(decision.seq)
    return "applied", f"{lesson['id']} moved to {store.name}/retired.json, its members back to approved.json"


def pending_decisions(*, host: str):
    """The host's decisions not acknowledged ``applied``, in ``seq`` order (a failed one is retried)."""
    return Decision.objects.filter(host=host).exclude(ack__status=DecisionAck.Status.APPLIED).order_by("seq")


def apply_altimate(
    *,
    project_dir: Path,
    host: str,
    dry_run: bool = False,
    now: datetime | None = None,
    wait_s: float = 0,
    on_wait: Callable[[str], None] | None = None,
) -> ApplyReport:
    """Apply ``host``'s pending decisions to the altimate project ``project_dir``; returns the report.

    ``now`` (UTC) dates the history lines and acknowledgements. ``wait_s``: seconds to wait for another
    run of the host (``on_wait`` is told once) and for altimate's learn lock. Raises ``SourceError`` when
    ``project_dir`` is no folder, ``ApplyBusy`` when another run keeps the host, ``StoreRefused`` when
    altimate keeps its lock, and ``StoreMovedOn`` when a file changed under the lock (nothing written or
    acknowledged in these three cases).
    """
    now = now or timezone.now()
    learn = find_learn_dir(project_dir)
    if dry_run:
        return _apply_pending(learn=learn, host=host, now=now, dry_run=True, wait_s=0)
    with host_apply_lock(host=host, engine="altimate", wait_s=wait_s, on_wait=on_wait):
        return _apply_pending(learn=learn, host=host, now=now, dry_run=False, wait_s=wait_s)


def _apply_pending(*, learn: Path, host: str, now: datetime, dry_run: bool, wait_s: float) -> ApplyReport:
    decisions = list(pending_decisions(host=host))
    report = ApplyReport(dry_run=dry_run)
    outcomes: list[tuple[Decision, str, str]] = []
    touches_store = any(d.action not in (Action.SET_BUDGET, Action.REJECT) for d in decisions)
    # The stores are read inside the hold that writes them: altimate's writers wait meanwhile.
    hold = learn_lock(learn, wait_s=wait_s) if touches_store and not dry_run else nullcontext()
    with hold as held:
        stores = _Stores(learn)
        for decision in decisions:
            if decision.action == Action.SET_BUDGET:
                report.skipped.append(f"{_label(decision)}: a budget is not stored in altimate")
                continue
            if decision.action == Action.REJECT:
                outcomes.append((decision, DecisionAck.Status.APPLIED, NOTHING))
                continue
            try:
                outcome, detail = _apply_one(decision, stores)
            except StoreRefused as exc:
                outcomes.append((decision, DecisionAck.Status.FAILED, str(exc)))
                continue
            outcomes.append((decision, DecisionAck.Status.APPLIED, detail))
        changed = [s for s in stores.loaded.values() if s.changed]
        if changed and not dry_run:
            if not held.still_held():
                raise StoreMovedOn(E_LOCK_LOST.format(lock=LOCK_NAME))
            for store in changed:
                if (moved := store.moved_on()) is not None:
                    raise StoreMovedOn(E_MOVED_ON.format(file=moved))
            for store in changed:
                written = store.write(now=format_datetime(now))
                report.written += [f"{store.name}/{name}" for name in written]
    for decision, status, detail in outcomes:
        try:
            if not dry_run:
                decision_ack(decision=decision, status=status, detail=detail, token_name=ACK_TOKEN, now=now)
        except AckAlreadyApplied:  # the host acknowledged it applied (the API) since this run read it
            report.skipped.append(f"{_label(decision)}: {KEPT_APPLIED.format(detail=detail)}")
            continue
        applied = status == DecisionAck.Status.APPLIED
        (report.applied if applied else report.refused).append(f"{_label(decision)}: {detail}")
    return report
