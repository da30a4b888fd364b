"""Calibration: how a reviewer's decisions turned out, by month, host and reason code (issue 24). For a
reviewer's own judgement, not a ranking: a reviewer sees their own; an admin also sees the team's
totals and each reviewer's, by name. Read from the rollup of the stored outcomes in one query.
docs/decisions.md, "Outcomes".
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from urllib.parse import urlencode

from review.models import CalibrationCount, DecisionOutcome
from review.web.links import route_path

SUPPORTED, CONTRADICTED, TOO_EARLY = (k.value for k in DecisionOutcome.Kind)


@dataclass
class Line:
    """One row: decisions judged (``supported`` + ``contradicted``; ``too_early`` beside them) of one
    month, host and reason code (``""`` for none), and the log's link to them."""

    month: date
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
        query = {"host": self.host, "from": self.month.isoformat()}
        if self.actor:
            query["actor"] = self.actor
        if self.reason_code:
            query["reason_code"] = self.reason_code
        return route_path("review:decisions") + "?" + urlencode(query)


def calibration_lines(*, actor: str | None) -> tuple[list[Line], dict[str, list[Line]]]:
    """``(lines, by_actor)``: the month x host x reason-code lines of ``actor``'s decisions (all
    actors', summed, when None), newest month first; and, when ``actor`` is None, each actor's lines by
    name. One query, of the rollup (``CalibrationCount``: months x hosts x codes rows, whatever the
    number of decisions)."""
    rows = CalibrationCount.objects.all()
    if actor is not None:
        rows = rows.filter(actor=actor)
    team: dict[tuple, Line] = {}
    mine: dict[str, dict[tuple, Line]] = defaultdict(dict)
    for who, month, host, code, outcome, n in rows.values_list(
        "actor", "month", "host", "reason_code", "outcome", "n"
    ):
        key = (month, host, code)
        line = team.setdefault(key, Line(month, host, code, actor=actor))
        line.counts[outcome] += n
        if actor is None:
            own = mine[who].setdefault(key, Line(month, host, code, actor=who))
            own.counts[outcome] += n

    def ordered(lines: dict[tuple, Line]) -> list[Line]:
        return sorted(lines.values(), key=lambda x: (-x.month.toordinal(), x.host, x.reason_code))

    return ordered(team), {who: ordered(lines) for who, lines in sorted(mine.items())}
