"""A host's acknowledgement of a decision: applied, or failed with a detail. docs/decisions.md,
"Hosts apply decisions".

The decision row is never touched (its hash covers it); the ack is its own row, upserted, so a host that
failed and later applied the decision can say so. The latest acknowledgement wins, except that an ``applied``
one is final: a later ``failed`` for the same decision is refused (``AckAlreadyApplied``) and the ack stays
as it was. A run that finds a decision already applied (another run, or the host through the API, applied
it first) would otherwise turn the engine's truth into "failed" (issue 21, item 3).
"""

from __future__ import annotations

import re
from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils import timezone

from lessons.services.data_version import for_host
from review.models import Decision, DecisionAck

ACK_DETAIL_MAX = 2000
ACK_STATUS_INVALID = 'status must be "applied" or "failed"'
ACK_DETAIL_TOO_LONG = f"detail is longer than {ACK_DETAIL_MAX} characters"
ACK_DETAIL_NUL = "detail contains the NUL character (U+0000), which no text may hold; remove it"
ACK_DETAIL_NOT_UNICODE = "detail contains a lone surrogate escape (\\ud800-\\udfff); send valid Unicode"
ACK_ALREADY_APPLIED = "decision {seq} is already acknowledged applied, which is final; it stays applied"
_SURROGATE = re.compile(r"[\ud800-\udfff]")


class AckRefused(ValueError):
    """A malformed acknowledgement; ``str(exc)`` is the message."""


class AckAlreadyApplied(AckRefused):
    """A ``failed`` acknowledgement of a decision already acknowledged ``applied``; nothing was written."""


def decision_ack(
    *, decision: Decision, status: str, detail: str = "", token_name: str = "", now: datetime | None = None
) -> DecisionAck:
    """Record (or replace) the host's acknowledgement of ``decision``; returns the ack row.

    ``status`` is ``applied`` or ``failed``; ``detail`` (trimmed, at most 2000 characters) says why a
    failure failed. Raises ``AckRefused`` otherwise, and its subclass ``AckAlreadyApplied`` for a
    ``failed`` acknowledgement of a decision already acknowledged ``applied`` (the ack is left as it was).
    ``now`` defaults to the clock (UTC).
    """
    if status not in DecisionAck.Status.values:
        raise AckRefused(ACK_STATUS_INVALID)
    detail = (detail or "").strip()
    if "\x00" in detail:  # refused, as ingest refuses it, not dropped silently (the attacker's finding 9)
        raise AckRefused(ACK_DETAIL_NUL)
    if len(detail) > ACK_DETAIL_MAX:
        raise AckRefused(ACK_DETAIL_TOO_LONG)
    if _SURROGATE.search(detail):  # JSON's "\ud800" decodes to one; no database can store it
        raise AckRefused(ACK_DETAIL_NOT_UNICODE)
    fields = {"status": status, "detail": detail, "acked_at": now or timezone.now(), "token_name": token_name}
    with for_host(decision.host), transaction.atomic():  # host-narrowed (docs/production.md, "Cache")
        ack = DecisionAck.objects.select_for_update().filter(decision=decision).first()
        if ack is None:
            try:
                with transaction.atomic():
                    return DecisionAck.objects.create(decision=decision, **fields)
            except IntegrityError:  # PostgreSQL: another writer's first ack committed meanwhile
                ack = DecisionAck.objects.select_for_update().get(decision=decision)
        if ack.status == DecisionAck.Status.APPLIED and status != ack.status:
            raise AckAlreadyApplied(ACK_ALREADY_APPLIED.format(seq=decision.seq))
        for name, value in fields.items():
            setattr(ack, name, value)
        ack.save(update_fields=list(fields))
    return ack
