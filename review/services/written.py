"""Writing a consolidation by hand: a reviewer's text becomes a pending draft another reviewer decides on.

Writing is not a decision (nothing changes on the entity and no host applies anything): the draft waits,
like a host's draft, for another reviewer to approve or reject it (``review.services.consolidation``:
the self-approval rule holds, since ``drafted_by`` names the writer). Its approval is the decision, and
its record carries the draft's text, author and waivers so a host reading the log has them.
spec: docs/reviewing.md, "Writing a consolidation"; issue 22, Build 4.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from lessons.core.text import hash8, lesson_hash, to_ms
from lessons.core.written import (
    NO_MEMBERS,
    USER_LABEL,
    check_text,
    check_waivers,
    dropped_anchors,
    written_draft_id,
)
from lessons.models import GATE_NOT_RUN, Draft, Host, Lesson
from lessons.selectors.engines import host_engine
from lessons.services.data_version import for_host
from lessons.services.entity_counts import entity_counts_refresh
from review.roles import PERM_DECIDE
from review.services.common import (
    NOT_ALLOWED_DECIDE,
    DecisionRefused,
    check_actor,
    check_version,
    decision_now,
    lock_entity,
)

MEMBER_NOT_LIVE = "Lesson {short}… is not a live member of this pile; reload the pile and choose again."
WRITTEN_EXISTS = "A lesson with this text already exists on the entity ({short}…, {status}); write another."
WRITTEN_PENDING = "Draft {draft} with this text and these members is already pending; decide on it there."


class WrittenRefused(DecisionRefused):
    """The written consolidation cannot be made a draft; ``errors`` lists every reason (text, waivers)."""

    def __init__(self, errors: list[str]):
        super().__init__(" ".join(errors))
        self.errors = errors


def _checked_text(
    host: Host, text: str, members: Sequence[Lesson], waivers: Mapping[str, str]
) -> tuple[str, dict[str, str]]:
    """``(normalized text, the waivers kept)`` for a written consolidation of ``members``: the text within
    the host's engine's limits, a waiver for each member anchor it drops; ``WrittenRefused`` with every
    problem otherwise."""
    normalized, errors = check_text(text, engine=host_engine(host=host, members=members))
    kept: dict[str, str] = {}
    if normalized:
        dropped = dropped_anchors(normalized, [(m.hash, m.text) for m in members])
        kept, waiver_errors = check_waivers([anchor for anchor, _holders in dropped], waivers)
        errors += waiver_errors
    if errors:
        raise WrittenRefused(errors)
    return normalized, kept


def consolidation_write(
    *,
    host: Host,
    namespace: str,
    subject: str,
    text: str,
    supersedes: Sequence[str],
    waivers: Mapping[str, str],
    actor: AbstractBaseUser,
    pile_version: str | None,
    now: datetime | None = None,
) -> Draft:
    """Make the reviewer's consolidation a pending draft on the entity; returns it.

    ``supersedes``: live member hashes of the entity (order kept, repeats dropped). ``waivers``:
    ``{anchor key: reason}``, one for each anchor of a superseded member the text drops
    (``lessons.core.written.dropped_anchors``; others are ignored); stored as ``{anchor as shown:
    reason}`` (```at```, ``"Client"``).
    The draft: ``source`` reviewer, ``drafted_by`` ``user:<username>`` (and ``drafted_by_user``), no
    ``triggered_by``, both gates ``not_run``, the normalized text, ``created_at`` ``now`` (UTC, ms).

    Raises ``NotAllowed`` (not a reviewer), ``StalePile`` (the pile changed since ``pile_version``;
    None skips the check), ``WrittenRefused`` (the text's limits, a missing waiver) or ``DecisionRefused``
    (no member, a member not live, a lesson or pending draft with this text exists). Nothing is written
    then. One transaction; the entity's counts (pending drafts) are refreshed in it.
    """
    check_actor(actor, PERM_DECIDE, NOT_ALLOWED_DECIDE)
    at = decision_now(now)
    chosen = list(dict.fromkeys(supersedes))
    if not chosen:
        raise DecisionRefused(NO_MEMBERS)
    with for_host(host.name), transaction.atomic():  # host-narrowed (docs/production.md, "Cache")
        lessons = lock_entity(host=host, namespace=namespace, subject=subject)
        check_version(lessons, pile_version)
        live = {x.hash: x for x in lessons if x.status == Lesson.Status.LIVE}
        for h in chosen:
            if h not in live:
                raise DecisionRefused(MEMBER_NOT_LIVE.format(short=hash8(h)))
        members = [live[h] for h in chosen]
        normalized, kept = _checked_text(host, text, members, waivers)
        new_hash = lesson_hash(namespace, subject, normalized)
        existing = next((x for x in lessons if x.hash == new_hash), None)
        if existing is not None:
            raise DecisionRefused(WRITTEN_EXISTS.format(short=hash8(new_hash), status=existing.status))
        same = Draft.objects.filter(
            host=host, namespace=namespace, subject=subject, text=normalized, status=Draft.Status.PENDING
        )
        for other in same:
            if sorted(other.supersedes) == sorted(chosen):
                raise DecisionRefused(WRITTEN_PENDING.format(draft=other.ext_id))
        author = USER_LABEL.format(username=actor.get_username())
        draft = Draft.objects.create(
            host=host,
            ext_id=written_draft_id(
                namespace=namespace,
                subject=subject,
                text=normalized,
                supersedes=chosen,
                author=author,
                created_at_ms=to_ms(at),
            ),
            namespace=namespace,
            subject=subject,
            text=normalized,
            supersedes=chosen,
            drafted_by=author,
            drafted_by_user=actor,
            gate_ground=GATE_NOT_RUN,
            gate_verify=GATE_NOT_RUN,
            source=Draft.Source.REVIEWER,
            waivers=kept,
            created_at=at,
        )
        entity_counts_refresh(host=host, keys=[(namespace, subject)])
    return draft
