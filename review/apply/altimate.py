"""Reviewers' decisions applied back to an altimate-code learn store, each one acknowledged.

``apply_altimate`` reads the host's decisions not yet acknowledged ``applied`` (a failed one is tried
again), in ``seq`` order, changes the stores in memory (``altimate_store.StoreState``), writes each
changed store once, and then acknowledges every decision: ``applied``, or ``failed`` with the reason.
A decision whose effect the store already shows is acknowledged applied without a change, so a rerun
applies nothing twice. ``dry_run`` writes no file and no acknowledgement.
spec: decisions.md, "Hosts apply decisions"; issue 11, item 3.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from django.utils import timezone

from lessons.core.text import format_datetime
from lessons.importers.altimate import find_learn_dir
from lessons.models import Draft, Lesson
from review.models import Action, Decision, DecisionAck
from review.services.acks import decision_ack

from .altimate_store import StoreRefused, StoreState, learn_lock

ACK_TOKEN = "apply_decisions --altimate"
E_NO_LESSON = "lesson {short}… has no altimate id and store (it was not imported from an altimate store)"
E_NO_STORE = "no store folder {store}/ in {learn}"
E_NO_DRAFT = "draft {draft} is not in the dashboard"
E_MIXED = "the members of draft {draft} are not all lessons of one altimate store"
NOTHING = "nothing to change in an altimate store"


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
            raise StoreRefused(E_NO_LESSON.format(short=(decision.lesson_hash or "")[:8]))
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
            f"the consolidation {decision.lesson_hash[:8]}… is not in {store.name}/approved.json",
        )
    store.unconsolidate(lesson=lesson, member_ids=[m.lesson_id for m in members], reason=_tag(decision))
    store.decisions.append(decision.seq)
    return "applied", f"{lesson['id']} moved to {store.name}/retired.json, its members back to approved.json"


def pending_decisions(*, host: str):
    """The host's decisions not acknowledged ``applied``, in ``seq`` order (a failed one is retried)."""
    return Decision.objects.filter(host=host).exclude(ack__status=DecisionAck.Status.APPLIED).order_by("seq")


def apply_altimate(
    *, project_dir: Path, host: str, dry_run: bool = False, now: datetime | None = None
) -> ApplyReport:
    """Apply ``host``'s pending decisions to the altimate project ``project_dir``; returns the report.

    ``now`` (UTC) dates the history lines and acknowledgements. Raises ``SourceError`` when
    ``project_dir`` is no folder, ``StoreRefused`` when altimate holds its lock (nothing written).
    """
    now = now or timezone.now()
    learn = find_learn_dir(project_dir)
    stores = _Stores(learn)
    report = ApplyReport(dry_run=dry_run)
    outcomes: list[tuple[Decision, str, str]] = []
    for decision in pending_decisions(host=host):
        if decision.action == Action.SET_BUDGET:
            report.skipped.append(f"{_label(decision)}: a budget is not stored in altimate")
            continue
        if decision.action == Action.REJECT:
            outcomes.append((decision, DecisionAck.Status.APPLIED, NOTHING))
            report.applied.append(f"{_label(decision)}: {NOTHING}")
            continue
        try:
            outcome, detail = _apply_one(decision, stores)
        except StoreRefused as exc:
            outcomes.append((decision, DecisionAck.Status.FAILED, str(exc)))
            report.refused.append(f"{_label(decision)}: {exc}")
            continue
        outcomes.append((decision, DecisionAck.Status.APPLIED, detail))
        report.applied.append(f"{_label(decision)}: {detail}")
    if dry_run:
        return report
    changed = [s for s in stores.loaded.values() if s.changed]
    if changed:
        with learn_lock(learn):
            for store in changed:
                written = store.write(now=format_datetime(now))
                report.written += [f"{store.name}/{name}" for name in written]
    for decision, status, detail in outcomes:
        decision_ack(decision=decision, status=status, detail=detail, token_name=ACK_TOKEN, now=now)
    return report
