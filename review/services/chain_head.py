"""The chain head against the log's tail: what verify_decisions and the exports add to the chain check.

``chain_verify`` proves each row follows the one before; it cannot see rows deleted at the end, or a tail
rewritten and rehashed, since the rest of the chain stays consistent. The chain head row (``ChainHead``,
moved by every ``decision_append``) says which seq and hash the log must end with (issue 13, fault 5).
Exports carry the head in ``X-Chain-Head-Seq``/``X-Chain-Head-Hash`` (and the API's ``head``) so a host
can tell a truncated export. spec: decisions.md, "The record", "Exports"; docs/decisions-verify.md.
"""

from __future__ import annotations

from django.db.models import Max, Min
from django.http import HttpResponseBase

from review.models import ChainHead, Decision

TAIL_MISSING_ONE = "chain broken: row {first} is missing at the tail (the chain head is at seq {head})"
TAIL_MISSING = "chain broken: rows {first}..{last} are missing at the tail (the chain head is at seq {head})"
TAIL_REWRITTEN = "chain broken: the tail was rewritten: seq {seq} has hash {row}…, the chain head {head}…"
PAST_HEAD = "chain broken: rows {first}..{last} are past the chain head (seq {head})"
SHORT = 12
HEADER_SEQ = "X-Chain-Head-Seq"
HEADER_HASH = "X-Chain-Head-Hash"


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
        return TAIL_REWRITTEN.format(seq=last_seq, row=last[1][:SHORT], head=head_hash[:SHORT])
    beyond = Decision.objects.filter(seq__gt=head_seq).aggregate(first=Min("seq"), last=Max("seq"))
    if beyond["first"] is not None and chain_head()[0] < beyond["last"]:
        return PAST_HEAD.format(first=beyond["first"], last=beyond["last"], head=head_seq)
    return None


def chain_head_stamp(response: HttpResponseBase, *, head: tuple[int, str] | None = None) -> None:
    """Set ``X-Chain-Head-Seq`` and ``X-Chain-Head-Hash`` on ``response`` (``head`` or the current one)."""
    seq, digest = head if head is not None else chain_head()
    response[HEADER_SEQ] = str(seq)
    response[HEADER_HASH] = digest
