"""The chain head against the log's tail: what verify_decisions and the exports add to the chain check.

``chain_verify`` proves each row follows the one before; it cannot see rows deleted at the end, or a tail
rewritten and rehashed, since the rest of the chain stays consistent. The chain head row (``ChainHead``,
moved by every ``decision_append``) says which seq and hash the log must end with (issue 13, fault 5).
Exports carry the head in ``X-Chain-Head-Seq``/``X-Chain-Head-Hash`` (and the API's ``head``) so a host
can tell a truncated export. docs/decisions.md, "The record"; docs/decisions-verify.md.

A database writer can move the head row too (delete the tail and set the head back one row: issue 21,
fault 10), so the head carries a seal, ``mac``: HMAC-SHA256 of its seq, hash and ``at`` with a key kept
outside the database (``head_key``). ``verify_decisions`` checks it, and the head as the exports and the
API's answers carry it is a **receipt** a host keeps: a later log must still hold the receipt's seq with
the receipt's hash (``receipt_problem``). docs/decisions-verify.md, "The head's seal", "Receipts".
"""

from __future__ import annotations

import hashlib
import hmac

from django.conf import settings
from django.db.models import Max, Min
from django.http import HttpResponseBase

from lessons.core.text import hash8
from review.models import ChainHead, Decision

TAIL_MISSING_ONE = "chain broken: row {first} is missing at the tail (the chain head is at seq {head})"
TAIL_MISSING = "chain broken: rows {first}..{last} are missing at the tail (the chain head is at seq {head})"
TAIL_REWRITTEN = "chain broken: the tail was rewritten: seq {seq} has hash {row}…, the chain head {head}…"
PAST_HEAD = "chain broken: rows {first}..{last} are past the chain head (seq {head})"
SEAL_BROKEN = (
    "chain broken: the chain head (seq {seq}) does not carry this server's seal: it was set outside the "
    "app (or DECISION_HEAD_KEY changed)"
)
RECEIPT_SEAL_BROKEN = "{path}: the receipt's seal does not match: this server did not issue it"
RECEIPT_BEYOND = "chain broken: the receipt's seq {seq} is not in the log (it ends at seq {last})"
RECEIPT_REWRITTEN = "chain broken: the log was rewritten: seq {seq} has hash {row}…, the receipt {receipt}…"
HEADER_SEQ = "X-Chain-Head-Seq"
HEADER_HASH = "X-Chain-Head-Hash"
HEADER_AT = "X-Chain-Head-At"
HEADER_MAC = "X-Chain-Head-Mac"
# What the key is derived from SECRET_KEY with when DECISION_HEAD_KEY is unset (docs/decisions-verify.md).
KEY_DERIVATION_LABEL = b"lesson-pile-review decision head seal"


def head_key() -> bytes:
    """The seal's key: ``DECISION_HEAD_KEY`` (UTF-8), or when unset HMAC-SHA256(SECRET_KEY, the label
    ``KEY_DERIVATION_LABEL``), so a database alone never holds it. docs/decisions-verify.md."""
    if settings.DECISION_HEAD_KEY:
        return settings.DECISION_HEAD_KEY.encode("utf-8")
    return hmac.new(settings.SECRET_KEY.encode("utf-8"), KEY_DERIVATION_LABEL, hashlib.sha256).digest()


def head_seal(*, seq: int, hash: str, at: str) -> str:
    """The seal of a head: lowercase hex HMAC-SHA256 (``head_key``) of ``"{seq}\n{hash}\n{at}"``, ``at``
    the last record's ``at`` (``""`` for seq 0)."""
    message = f"{seq}\n{hash}\n{at}".encode()
    return hmac.new(head_key(), message, hashlib.sha256).hexdigest()


def chain_receipt() -> dict:
    """The chain head as a receipt: ``{"seq", "hash", "at", "mac"}`` (``{0, "", "", seal}`` before the first
    decision). What the exports and the API hand hosts; ``verify_decisions --receipt`` checks one."""
    row = ChainHead.objects.values_list("seq", "hash", "at", "mac").first()
    if row is None:
        return {"seq": 0, "hash": "", "at": "", "mac": head_seal(seq=0, hash="", at="")}
    return {"seq": row[0], "hash": row[1], "at": row[2], "mac": row[3]}


def receipt_sealed(receipt: dict) -> bool:
    """Whether ``receipt``'s ``mac`` is this server's seal of its seq, hash and at (constant-time)."""
    expected = head_seal(seq=receipt["seq"], hash=receipt["hash"], at=receipt["at"])
    return hmac.compare_digest(expected, str(receipt.get("mac", "")))


def receipt_problem(receipt: dict) -> str | None:
    """Why the stored log does not extend ``receipt`` (its seq missing, or holding another hash), or None.
    The chain after it is ``decisions_verify``'s to check."""
    seq, digest = receipt["seq"], receipt["hash"]
    if seq == 0:
        return None
    row = Decision.objects.filter(seq=seq).values_list("hash", flat=True).first()
    if row is None:
        last = Decision.objects.aggregate(last=Max("seq"))["last"] or 0
        return RECEIPT_BEYOND.format(seq=seq, last=last)
    if row != digest:
        return RECEIPT_REWRITTEN.format(seq=seq, row=hash8(row), receipt=hash8(digest))
    return None


def chain_head() -> tuple[int, str]:
    """``(seq, hash)`` of the chain head; ``(0, "")`` before the first decision."""
    row = ChainHead.objects.values_list("seq", "hash").first()
    return (row[0], row[1]) if row else (0, "")


def chain_tail_problem(*, head: tuple[int, str]) -> str | None:
    """Why the log does not end at ``head`` (read before the rows were verified), or None.

    Rows missing at the tail (``TAIL_MISSING``/``TAIL_MISSING_ONE``), a last row whose hash is not the head's
    (``TAIL_REWRITTEN``), or rows past the head that no append accounts for (``PAST_HEAD``; rows appended
    while the check ran moved the head on, and are not reported).
    """
    head_seq, head_hash = head
    last = Decision.objects.filter(seq__lte=head_seq).order_by("-seq").values_list("seq", "hash").first()
    last_seq = last[0] if last else 0
    if last_seq < head_seq:
        template = TAIL_MISSING_ONE if last_seq + 1 == head_seq else TAIL_MISSING
        return template.format(first=last_seq + 1, last=head_seq, head=head_seq)
    if last is not None and last[1] != head_hash:
        return TAIL_REWRITTEN.format(seq=last_seq, row=hash8(last[1]), head=hash8(head_hash))
    beyond = Decision.objects.filter(seq__gt=head_seq).aggregate(first=Min("seq"), last=Max("seq"))
    if beyond["first"] is not None and chain_head()[0] < beyond["last"]:
        return PAST_HEAD.format(first=beyond["first"], last=beyond["last"], head=head_seq)
    return None


def chain_head_stamp(response: HttpResponseBase, *, receipt: dict | None = None) -> None:
    """Set ``X-Chain-Head-Seq``, ``-Hash``, ``-At`` and ``-Mac`` on ``response``: the receipt
    (``chain_receipt``, read now when not given)."""
    receipt = receipt if receipt is not None else chain_receipt()
    response[HEADER_SEQ] = str(receipt["seq"])
    response[HEADER_HASH] = receipt["hash"]
    response[HEADER_AT] = receipt["at"]
    response[HEADER_MAC] = receipt["mac"]
