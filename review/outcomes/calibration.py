"""Calibration: how a reviewer's decisions turned out, by month and reason code, over every host or on one
(issue 24), ``MONTHS_SHOWN`` months a page. For a
reviewer's own judgement, not a ranking: a reviewer sees their own; an admin also sees the team's
totals and each reviewer's, by name. Read from the rollup of the stored outcomes in one query.
docs/decisions.md, "Outcomes".
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from urllib.parse import urlencode

from django.db.models import Sum

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
        query = {"host": self.host} if self.host else {}
        query["from"] = self.month.isoformat()
        if self.actor:
            query["actor"] = self.actor
        if self.reason_code:
            query["reason_code"] = self.reason_code
        return route_path("review:decisions") + "?" + urlencode(query)


MONTHS_SHOWN = 6  # months a page shows, newest first; "Earlier months" pages back


def calibration_months(
    *, actor: str | None, host: str | None, before: date | None
) -> tuple[list[date], bool]:
    """``(months, more)``: the newest ``MONTHS_SHOWN`` months (before ``before``, when given) in which
    ``actor`` (everyone, when None) has decisions with an outcome on ``host`` (any, when None), newest first,
    and whether earlier ones exist. One query, of the rollup's distinct months."""
    rows = CalibrationCount.objects.all()
    if actor is not None:
        rows = rows.filter(actor=actor)
    if host:
        rows = rows.filter(host=host)
    if before is not None:
        rows = rows.filter(month__lt=before)
    found = list(rows.values_list("month", flat=True).distinct().order_by("-month")[: MONTHS_SHOWN + 1])
    return found[:MONTHS_SHOWN], len(found) > MONTHS_SHOWN


def calibration_lines(
    *, actor: str | None, months: list[date], host: str | None = None
) -> tuple[list[Line], dict[str, list[Line]]]:
    """``(lines, by_actor)``: the lines of ``actor``'s decisions (all actors', summed, when None) in
    ``months``, newest month first: by month and reason code over every host, or by month, host and reason
    code on ``host`` alone; and, when ``actor`` is None, each actor's lines by name. One query, of the
    rollup (``CalibrationCount``: its rows follow the months and hosts shown, not the decisions), summed
    over the hosts by the database."""
    rows = CalibrationCount.objects.filter(month__in=months)
    if actor is not None:
        rows = rows.filter(actor=actor)
    if host:
        rows = rows.filter(host=host)
    team: dict[tuple, Line] = {}
    mine: dict[str, dict[tuple, Line]] = defaultdict(dict)
    # every host summed by the database unless one is asked for (200 hosts: 7,500 rows a page otherwise)
    grouped = ("actor", "month", "reason_code", "outcome", *(("host",) if host else ()))
    summed = rows.values(*grouped).annotate(total=Sum("n")).order_by().values_list(*grouped, "total")
    for who, month, code, outcome, *shown, n in summed:
        shown_host = shown[0] if shown else ""
        key = (month, shown_host, code)
        line = team.setdefault(key, Line(month, shown_host, code, actor=actor))
        line.counts[outcome] += n
        if actor is None:
            own = mine[who].setdefault(key, Line(month, shown_host, code, actor=who))
            own.counts[outcome] += n

    def ordered(lines: dict[tuple, Line]) -> list[Line]:
        return sorted(lines.values(), key=lambda x: (-x.month.toordinal(), x.host, x.reason_code))

    return ordered(team), {who: ordered(lines) for who, lines in sorted(mine.items())}
