"""Calibration: how a reviewer's decisions turned out, by month, host and reason code (issue 24). For a
reviewer's own judgement, not a ranking: a reviewer sees their own; an admin also sees the team's
totals and each reviewer's, by name. Read from the stored outcomes in one grouped query.
docs/decisions.md, "Outcomes".
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from urllib.parse import urlencode

from django.db.models import Count
from django.db.models.functions import TruncMonth

from review.models import DecisionOutcome
from review.web.links import route_path

SUPPORTED, CONTRADICTED, TOO_EARLY = (k.value for k in DecisionOutcome.Kind)


@dataclass
class Line:
    """One row: decisions judged (``supported`` + ``contradicted``; ``too_early`` beside them) of one
    month, host and reason code (``""`` for none), and the log's link to them."""

    month: datetime
    host: str
    reason_code: str
    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    actor: str | None = None

    @property
    def known(self) -> int:
        return self.counts[SUPPORTED] + self.counts[CONTRADICTED]

    def share(self, kind: str) -> str:
        """``"67%"`` of the known outcomes, ``"—"`` with none known."""
        return f"{round(100 * self.counts[kind] / self.known)}%" if self.known else "\u2014"

    @property
    def supported_share(self) -> str:
        return self.share(SUPPORTED)

    @property
    def contradicted_share(self) -> str:
        return self.share(CONTRADICTED)

    @property
    def href(self) -> str:
        query = {"host": self.host, "from": self.month.date().isoformat()}
        if self.actor:
            query["actor"] = self.actor
        if self.reason_code:
            query["reason_code"] = self.reason_code
        return route_path("review:decisions") + "?" + urlencode(query)


def calibration_lines(*, actor: str | None) -> tuple[list[Line], dict[str, list[Line]]]:
    """``(lines, by_actor)``: the month x host x reason-code lines of ``actor``'s decisions (all
    actors', summed, when None), newest month first; and, when ``actor`` is None, each actor's lines by
    name. One query."""
    rows = DecisionOutcome.objects.all()
    if actor is not None:
        rows = rows.filter(decision__actor=actor)
    grouped = (
        rows.annotate(month=TruncMonth("decision__at"))
        .values_list("decision__actor", "month", "host", "decision__reason_code", "outcome")
        .annotate(n=Count("pk"))
        .order_by()
    )
    team: dict[tuple, Line] = {}
    mine: dict[str, dict[tuple, Line]] = defaultdict(dict)
    for who, month, host, code, outcome, n in grouped:
        key = (month, host, code or "")
        line = team.setdefault(key, Line(month, host, code or "", actor=actor))
        line.counts[outcome] += n
        if actor is None:
            own = mine[who].setdefault(key, Line(month, host, code or "", actor=who))
            own.counts[outcome] += n

    def ordered(lines: dict[tuple, Line]) -> list[Line]:
        return sorted(lines.values(), key=lambda x: (-x.month.timestamp(), x.host, x.reason_code))

    return ordered(team), {who: ordered(lines) for who, lines in sorted(mine.items())}
