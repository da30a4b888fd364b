"""The pile rules as pure functions. docs/piles-and-recurrence.md, "Piles".

An entity is ``(host, namespace, subject)``; it is a pile while its host's budget is enabled
and it carries more live lessons than ``max_active``. Nothing here changes a lesson (rule 9).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lessons.core.text import hash8

NOT_APPLIED = "not applied by the loop"
SEVERITY = "medium"
LIVE = "live"
PENDING = "pending"
STALE = "stale"


@dataclass(frozen=True)
class PileMember:
    """One lesson of an entity, as the rules see it: ``created_at_ms`` is epoch milliseconds (UTC)."""

    hash: str
    created_at_ms: int
    status: str
    verdict: str | None  # latest Verify-gate verdict, None when the loop never measured it


@dataclass(frozen=True)
class Pile:
    """An over-budget entity: live members oldest first, and the finding's target and summary."""

    namespace: str
    subject: str
    max_active: int
    members: tuple[PileMember, ...]

    @property
    def count(self) -> int:
        return len(self.members)

    @property
    def target(self) -> str:
        return pile_target(self.namespace, self.subject)

    @property
    def summary(self) -> str:
        return pile_summary(self.subject, self.max_active, self.members)

    @property
    def severity(self) -> str:
        return SEVERITY


def is_over_budget(*, live_count: int, max_active: int, budget_enabled: bool) -> bool:
    """Rules 3 and 4: over budget when the budget is enabled and ``live_count > max_active``."""
    return budget_enabled and live_count > max_active


def member_order_key(member: PileMember) -> tuple[int, str]:
    """Rule 5: oldest first, by ``created_at`` then ``hash`` ascending."""
    return (member.created_at_ms, member.hash)


def verdict_label(verdict: str | None) -> str:
    """Rule 6: the latest verdict, or ``not applied by the loop``."""
    return verdict if verdict else NOT_APPLIED


def entity_label(namespace: str, subject: str) -> str:
    """An entity as people read it: ``{namespace}/{subject}``, or ``{subject}`` when the namespace is empty.

    docs/piles-and-recurrence.md, "Piles", rules 1 and 7 (the finding's target is ``entity:`` and this label).
    """
    return f"{namespace}/{subject}" if namespace else subject


def pile_target(namespace: str, subject: str) -> str:
    """Rule 7: ``entity:{namespace}/{subject}``, or ``entity:{subject}`` when the namespace is empty."""
    return f"entity:{entity_label(namespace, subject)}"


def pile_summary(subject: str, max_active: int, members: Sequence[PileMember]) -> str:
    """Rule 8, exactly.

    ``{count} live lessons on "{subject}" exceed the budget of {max_active}: {members}``.
    """
    rendered = ", ".join(f"{hash8(m.hash)}\u2026 ({verdict_label(m.verdict)})" for m in members)
    return f'{len(members)} live lessons on "{subject}" exceed the budget of {max_active}: {rendered}'


def draft_state(*, status: str, supersedes: Iterable[str], live_hashes: Iterable[str]) -> str:
    """A draft's status as shown: ``pending``, ``approved``, ``rejected``, or ``stale`` (pending while a
    lesson it supersedes is not live). docs/piles-and-recurrence.md, "How the piles JSON is built"
    (``drafts``)."""
    if status == PENDING and not set(supersedes) <= set(live_hashes):
        return STALE
    return status


def entity_pile(
    *, namespace: str, subject: str, max_active: int, budget_enabled: bool, lessons: Iterable[PileMember]
) -> Pile | None:
    """The pile of one entity, or ``None`` when it is within budget or the budget is off.

    Only live lessons count (rule 2); members are sorted per rule 5.
    """
    live = sorted((m for m in lessons if m.status == LIVE), key=member_order_key)
    if not is_over_budget(live_count=len(live), max_active=max_active, budget_enabled=budget_enabled):
        return None
    return Pile(namespace=namespace, subject=subject, max_active=max_active, members=tuple(live))
