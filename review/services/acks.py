"""A host's acknowledgement of a decision: applied, or failed with a detail. spec: decisions.md,
"Hosts apply decisions".

The decision row is never touched (its hash covers it); the ack is its own row, upserted, so a host that
failed and later applied the decision can say so. The latest acknowledgement wins.
"""

from __future__ import annotations

import re
from datetime import datetime

from django.db import transaction
from django.utils import timezone

from review.models import Decision, DecisionAck

ACK_DETAIL_MAX = 2000
ACK_STATUS_INVALID = 'status must be "applied" or "failed"'
ACK_DETAIL_TOO_LONG = f"detail is longer than {ACK_DETAIL_MAX} characters"
ACK_DETAIL_NOT_UNICODE = "detail contains a lone surrogate escape (\\ud800-\\udfff); send valid Unicode"
_SURROGATE = re.compile(r"[\ud800-\udfff]")


class AckRefused(ValueError):
    """A malformed acknowledgement; ``str(exc)`` is the message."""


def decision_ack(
    *, decision: Decision, status: str, detail: str = "", token_name: str = "", now: datetime | None = None
) -> DecisionAck:
    """Record (or replace) the host's acknowledgement of ``decision``; returns the ack row.

    ``status`` is ``applied`` or ``failed``; ``detail`` (trimmed, at most 2000 characters) says why a
    failure failed. Raises ``AckRefused`` otherwise. ``now`` defaults to the clock (UTC).
    """
    if status not in DecisionAck.Status.values:
        raise AckRefused(ACK_STATUS_INVALID)
    detail = (detail or "").strip().replace("\x00", "")
    if len(detail) > ACK_DETAIL_MAX:
        raise AckRefused(ACK_DETAIL_TOO_LONG)
    if _SURROGATE.search(detail):  # JSON's "\ud800" decodes to one; no database can store it
        raise AckRefused(ACK_DETAIL_NOT_UNICODE)
    with transaction.atomic():
        ack, _created = DecisionAck.objects.select_for_update().update_or_create(
            decision=decision,
            defaults={
                "status": status,
                "detail": detail,
                "acked_at": now or timezone.now(),
                "token_name": token_name,
            },
        )
    return ack
