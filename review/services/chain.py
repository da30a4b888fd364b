"""The hash-chained decision log: the export record, its hash, appending and verifying.

docs/decisions.md, "The record". A record's ``hash`` is
``sha256_hex(prev_hash + "\\n" + canonical)`` where ``canonical`` is the record without ``hash`` and
``prev_hash`` as JSON with sorted keys, separators ``,`` and ``:``, non-ASCII kept as UTF-8. The hash
is computed from the export record itself (``decision_record``), so the code that writes a row, the
code that verifies the table and anyone verifying a JSONL export all hash the very same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import transaction

from lessons.core.text import format_datetime, sha256_hex
from lessons.models import Lesson
from review.models import Action, ChainHead, Decision
from review.services.chain_head import head_seal
from review.services.decision_weeks import decision_weeks_add

# The record's fields in the order of docs/decisions.md, "The record".
RECORD_FIELDS: tuple[str, ...] = (
    "seq",
    "at",
    "actor",
    "action",
    "host",
    "namespace",
    "subject",
    "lesson_hash",
    "lesson_id",
    "store",
    "draft_id",
    "created_hash",
    "batch",
    "reason_code",
    "reason",
    "evidence",
    "prev_hash",
    "hash",
)
HASH_FIELDS = frozenset({"hash", "prev_hash"})
GENESIS_PREV_HASH = ""
CHAIN_HEAD_ID = 1


def truncate_to_ms(moment: datetime) -> datetime:
    """``moment`` in UTC with microseconds cut to whole milliseconds (what the record keeps)."""
    moment = moment.astimezone(UTC)
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def decision_record(decision: Decision) -> dict:
    """The export record of one decision: exactly the fields of docs/decisions.md, "The record", in order.

    ``at`` is UTC ISO 8601 with milliseconds and ``Z``; ``evidence`` is an object (a dict).
    """
    return {
        "seq": decision.seq,
        "at": format_datetime(decision.at),
        "actor": decision.actor,
        "action": decision.action,
        "host": decision.host,
        "namespace": decision.namespace,
        "subject": decision.subject,
        "lesson_hash": decision.lesson_hash,
        "lesson_id": decision.lesson_id,
        "store": decision.store,
        "draft_id": decision.draft_id,
        "created_hash": decision.created_hash,
        "batch": decision.batch,
        "reason_code": decision.reason_code,
        "reason": decision.reason,
        "evidence": decision.evidence,
        "prev_hash": decision.prev_hash,
        "hash": decision.hash,
    }


def canonical_json(record_without_hashes: dict) -> str:
    """The canonical JSON of a record: sorted keys, separators ``,`` and ``:``, non-ASCII as is.

    ``hash`` and ``prev_hash`` are left out if present. docs/decisions.md, "The record" (``hash``).
    """
    body = {k: v for k, v in record_without_hashes.items() if k not in HASH_FIELDS}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def record_hash(prev_hash: str, record_without_hashes: dict) -> str:
    """``sha256_hex(prev_hash + "\\n" + canonical_json(record))``: lowercase hex, 64 characters."""
    return sha256_hex(prev_hash + "\n" + canonical_json(record_without_hashes))


def _locked_head() -> ChainHead:
    """The chain head row, locked until the caller's transaction ends; created once, race-safe.

    Every decision-writing transaction locks this one row, so ``seq`` and ``prev_hash`` are handed
    out in commit order. On SQLite the IMMEDIATE transaction mode (settings) already serializes writers.
    """
    head = ChainHead.objects.select_for_update().filter(id=CHAIN_HEAD_ID).first()
    if head is not None:
        return head
    last = Decision.objects.order_by("-seq").only("seq", "hash", "at").first()
    # ON CONFLICT DO NOTHING: a concurrent first writer's row wins and this one waits for it.
    seq, digest, at = (last.seq, last.hash, format_datetime(last.at)) if last else (0, "", "")
    mac = head_seal(seq=seq, hash=digest, at=at)
    ChainHead.objects.bulk_create(
        [ChainHead(id=CHAIN_HEAD_ID, seq=seq, hash=digest, at=at, mac=mac)],
        ignore_conflicts=True,
    )
    return ChainHead.objects.select_for_update().get(id=CHAIN_HEAD_ID)


def decision_append(
    *,
    actor: str,
    action: str,
    host: str,
    namespace: str | None,
    subject: str | None,
    lesson: Lesson | None = None,
    draft_id: str | None = None,
    created_hash: str | None = None,
    batch: str,
    reason: str,
    reason_code: str | None,
    evidence: dict,
    at: datetime,
) -> Decision:
    """Append one decision to the chain and return the saved row: ``decisions_append_many`` of one entry
    (see there for the fields). docs/decisions.md, "The record".
    """
    entry = DecisionEntry(
        actor=actor,
        action=action,
        host=host,
        namespace=namespace,
        subject=subject,
        lesson=lesson,
        draft_id=draft_id,
        created_hash=created_hash,
        batch=batch,
        reason=reason,
        reason_code=reason_code,
        evidence=evidence,
        at=at,
    )
    return decisions_append_many(entries=[entry])[0]


@dataclass(frozen=True)
class DecisionEntry:
    """One decision to append: the record's fields that are not handed out by the chain (``seq``,
    ``prev_hash``, ``hash``). ``lesson`` fills ``lesson_hash``, ``lesson_id`` and ``store``."""

    actor: str
    action: str
    host: str
    namespace: str | None
    subject: str | None
    batch: str
    reason: str
    reason_code: str | None
    evidence: dict
    at: datetime
    lesson: Lesson | None = None
    draft_id: str | None = None
    created_hash: str | None = None


def decisions_append_many(*, entries: Sequence[DecisionEntry]) -> list[Decision]:
    """Append ``entries`` to the chain, in order, and return the saved rows.

    Locks the chain head once (``select_for_update``); each record takes the next ``seq`` and the
    previous record's hash as ``prev_hash`` and is hashed from its export record; the rows are inserted
    with one ``bulk_create`` and the head moved once, so the queries do not grow with the number of
    entries; the head is sealed (``chain_head.head_seal``); the log chart's rollup
    (``decision_weeks_add``) moves with them. Must run inside the
    caller's ``transaction.atomic()`` so the records commit with the change they record; raises
    ``TransactionManagementError`` otherwise. ``at`` is stored cut to milliseconds (what the record
    shows), so a stored row re-hashes to the same value. docs/decisions.md, "The record".
    """
    if not transaction.get_connection().in_atomic_block:
        raise transaction.TransactionManagementError("decision_append must run inside transaction.atomic()")
    if not entries:
        return []
    head = _locked_head()
    seq, prev_hash = head.seq, head.hash
    decisions = []
    for entry in entries:
        lesson = entry.lesson
        seq += 1
        decision = Decision(
            seq=seq,
            at=truncate_to_ms(entry.at),
            actor=entry.actor,
            action=Action(entry.action).value,  # a plain str, so the record holds no enum member
            host=entry.host,
            namespace=entry.namespace,
            subject=entry.subject,
            lesson_hash=lesson.hash if lesson is not None else None,
            lesson_id=lesson.lesson_id if lesson is not None else None,
            store=lesson.store if lesson is not None else None,
            draft_id=entry.draft_id,
            created_hash=entry.created_hash,
            batch=entry.batch,
            reason_code=entry.reason_code,
            reason=entry.reason,
            evidence=entry.evidence,
            prev_hash=prev_hash,
        )
        decision.hash = record_hash(decision.prev_hash, decision_record(decision))
        prev_hash = decision.hash
        decisions.append(decision)
    Decision.objects.bulk_create(decisions)
    decision_weeks_add(decisions)
    head.seq, head.hash, head.at = seq, prev_hash, format_datetime(decisions[-1].at)
    head.mac = head_seal(seq=head.seq, hash=head.hash, at=head.at)  # issue 21, fault 10
    head.save(update_fields=["seq", "hash", "at", "mac"])
    return decisions


def chain_verify(records: Iterable[dict], *, prev_hash: str = GENESIS_PREV_HASH) -> int | None:
    """The ``seq`` of the first broken record, or ``None`` when the chain is intact.

    Works on export records (dicts as ``decision_record`` or a JSONL export gives them), so the same
    code verifies the table and a file. A record is broken when its ``prev_hash`` is not the previous
    record's ``hash`` (``prev_hash`` for the first, ``""`` for a chain from seq 1), its ``seq`` does not
    follow the previous one, or its ``hash`` differs from the recomputed one. A record without a usable
    ``seq`` reports the seq it should have had. Streams: memory stays flat.
    """
    expected_prev = prev_hash
    expected_seq: int | None = 1 if prev_hash == GENESIS_PREV_HASH else None
    for record in records:
        seq = record.get("seq") if isinstance(record, dict) else None
        position = expected_seq if expected_seq is not None else seq
        if not isinstance(seq, int) or isinstance(seq, bool):
            return position if isinstance(position, int) else 0
        if expected_seq is not None and seq != expected_seq:
            return expected_seq
        if record.get("prev_hash") != expected_prev:
            return seq
        if record.get("hash") != record_hash(expected_prev, record):
            return seq
        expected_prev = record["hash"]
        expected_seq = seq + 1
    return None


def decisions_verify() -> tuple[int | None, int]:
    """Verify the stored chain: ``(first broken seq or None, number of decisions read)``.

    Streams the table in ``seq`` order (chunks of 2000), so memory stays flat.
    """
    count = 0

    def records():
        nonlocal count
        for decision in Decision.objects.order_by("seq").iterator(chunk_size=2000):
            count += 1
            yield decision_record(decision)

    broken = chain_verify(records())
    return broken, count
