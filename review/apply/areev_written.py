"""A consolidation written by a reviewer, applied to an areev memory the way areev's loop applies one.

areev has no recommendation for it (no model drafted it, so no GROUND or VERIFY ran), so the approval
is written with the binding's own calls, as the two writes areev 1.13.2 makes when it applies a
consolidation recommendation (the recommendation's CAL: ``ADD fact {..., "consolidates": [...],
"relation": "lesson"}`` then ``SUPERSEDE <member> WITH fact {..., "relation": "mg:lesson_consolidated"}``
for each member): ``add`` of the consolidation lesson grain on the entity (``object`` the text,
``consolidates`` the members, ``written_by`` the writer's label), then ``supersede`` of each member by a
marker fact (``mg:lesson_consolidated``, ``object`` the text; areev adds ``derived_from`` the member).
The approver is the actor areev records. A roll back forgets the markers and the lesson, as areev's
rollback retracts them: every member is a head again. A reject changes nothing in the engine.

The decision record carries what is written (``evidence["written"]``: its author and text; the members
are ``evidence["supersedes"]``), so nothing but the record is read. spec: docs/engines/areev.md, "What
is applied back"; docs/reviewing.md, "Writing a consolidation".
"""

from __future__ import annotations

import json
from typing import Any

from lessons.core.text import hash8
from lessons.importers.areev_engine import Memory, cal_value
from review.models import Action, Decision

LESSON, MARKER = "lesson", "mg:lesson_consolidated"
W_MEMBER_NOT_LIVE = "member {short}… is no longer a live lesson in the engine; not applied"
W_NOT_THERE = "the written consolidation {short}… is not a live lesson in the engine"
W_APPLIED = "written consolidation added as {short}… by {actor}, superseding {n} lesson{s}"
W_ALREADY = "the written consolidation is already in the engine as {short}…"
W_REJECTED = "a consolidation written in the dashboard: nothing in the engine to dismiss"
W_ROLLED_BACK = (
    "written consolidation {short}… and its {n} marker{s} forgotten by {actor}; the members are live"
)


class WrittenRefused(Exception):
    """The engine cannot take this decision; ``str(exc)`` is the acknowledgement's detail."""


def is_written(decision: Decision) -> bool:
    """Whether the decision is on a consolidation a reviewer wrote (its record says so)."""
    return isinstance((decision.evidence or {}).get("written"), dict)


def _entity(mem: Memory, decision: Decision) -> list[dict[str, Any]]:
    where = (
        f"namespace = {cal_value(decision.namespace or '')} AND subject = {cal_value(decision.subject or '')}"
    )
    return mem.grains(where)


def _live(grains: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The lesson grains areev's loop counts live: not superseded, or superseded by a grain now gone."""
    present = {g["hash"] for g in grains}
    return {
        g["hash"]: g
        for g in grains
        if g["fields"].get("relation") == LESSON and g["fields"].get("superseded_by") not in present
    }


def _ours(live: dict[str, dict[str, Any]], text: str, members: list[str]) -> dict[str, Any] | None:
    """The live consolidation lesson with this text and these members, or None."""
    return next(
        (
            g
            for g in live.values()
            if g["fields"].get("object") == text
            and sorted(g["fields"].get("consolidates") or []) == sorted(members)
        ),
        None,
    )


def apply_written(mem: Memory, decision: Decision, *, dry_run: bool) -> str:
    """Apply one decision on a written consolidation (``is_written``); returns the acknowledgement's
    detail. Raises ``WrittenRefused`` (a member not live, nothing to roll back) or ``EngineError``."""
    if decision.action == Action.REJECT:
        return W_REJECTED
    written = decision.evidence["written"]
    text, members = written["text"], list(decision.evidence.get("supersedes") or [])
    namespace, subject = decision.namespace or "", decision.subject or ""
    grains = _entity(mem, decision)
    live = _live(grains)
    ours = _ours(live, text, members)
    if decision.action == Action.APPROVE:
        if ours is not None:
            return W_ALREADY.format(short=hash8(ours["hash"]))
        for member in members:
            if member not in live:
                raise WrittenRefused(W_MEMBER_NOT_LIVE.format(short=hash8(member)))
        created = "0" * 64
        if not dry_run:
            fields = {
                "subject": subject,
                "relation": LESSON,
                "object": text,
                "consolidates": members,
                "written_by": written["by"],
            }
            created = mem.call("add", "fact", json.dumps(fields, ensure_ascii=False), ns=namespace)
            marker = json.dumps({"subject": subject, "relation": MARKER, "object": text}, ensure_ascii=False)
            for member in members:
                mem.call("supersede", member, "fact", marker, ns=namespace)
        n = len(members)
        return W_APPLIED.format(short=hash8(str(created)), actor=mem.actor, n=n, s="" if n == 1 else "s")
    if ours is None:
        raise WrittenRefused(W_NOT_THERE.format(short=hash8(decision.lesson_hash)))
    by_hash = {g["hash"]: g for g in grains}
    markers = [
        by_hash[m]["fields"]["superseded_by"]
        for m in members
        if m in by_hash
        and by_hash[m]["fields"].get("superseded_by") in by_hash
        and by_hash[by_hash[m]["fields"]["superseded_by"]]["fields"].get("relation") == MARKER
    ]
    if not dry_run:
        for marker in markers:
            mem.call("forget", marker)
        mem.call("forget", ours["hash"])
    n = len(markers)
    return W_ROLLED_BACK.format(short=hash8(ours["hash"]), n=n, s="" if n == 1 else "s", actor=mem.actor)
