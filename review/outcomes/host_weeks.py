"""The host over time (issue 24): user corrections per 100 sessions, week by week, with the weeks that
had decisions marked, so an admin sees whether the agent got corrected less after a cut. Weeks are ISO
weeks (Monday, UTC); a week's sessions are the distinct sessions shown a lesson that week. Four queries
(the newest exposure and correction; the weeks of exposures, of corrections, and the decisions' weekly
rollup), whatever the number of weeks shown. The weeks end with the host's data, or a decision soon after
it; later decisions are drawn after a break (``window_end``). docs/decisions.md, "The host over time".
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.db.models import Count, Max, OuterRef, QuerySet, Subquery, Sum
from django.db.models.functions import TruncWeek
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from lessons.core.recurrence import USER_CORRECTION
from lessons.models import Correction, Exposure, Host
from review.models import DecisionWeek

WEEKS = 26
# A decision at most this many weeks after the newest session ends the chart's weeks; a later one is drawn
# after a break (``window_end``).
EXTEND_WEEKS = 8
WIDTH, HEIGHT, BAR_GAP = 560, 120, 2
RECT = '<rect class="{}" x="{}" y="{}" width="{}" height="{}"></rect>'
AXIS = '<path class="axis" d="{}"></path>'
SVG = '<svg class="host-weeks" viewBox="0 0 {} {}" aria-hidden="true" focusable="false">{}</svg>'


@dataclass(frozen=True)
class Week:
    """One ISO week: its Monday, the sessions shown a lesson, the user corrections, the decisions."""

    monday: date
    sessions: int
    corrections: int
    decisions: int

    @property
    def per_100(self) -> float | None:
        """User corrections per 100 sessions (one decimal), None for a week without sessions."""
        return round(100 * self.corrections / self.sessions, 1) if self.sessions else None


def _monday(moment: datetime | date) -> date:
    day = moment.date() if isinstance(moment, datetime) else moment
    return day - timedelta(days=day.weekday())


def _newest(rows: QuerySet, field: str) -> Subquery:
    """The greatest ``field`` of ``rows`` (None for none), as a subquery of one value."""
    return Subquery(rows.order_by().values("host").annotate(m=Max(field)).values("m")[:1])


@dataclass(frozen=True)
class Later:
    """The decisions after the chart's weeks (drawn after a break at the right end of the axis): the
    Mondays of the first and the last week that had any, how many weeks had one, and how many in all."""

    first: date
    last: date
    weeks: int
    decisions: int


@dataclass(frozen=True)
class Timeline:
    """The chart's ``weeks`` (oldest first, ``WEEKS`` of them; ``[]`` for a host with no exposure,
    correction or decision) and ``later``, the decisions after them (None for none)."""

    weeks: list[Week]
    later: Later | None = None


def window_end(newest_data: date | None, newest_decision: date | None) -> date | None:
    """The Monday of the chart's last week: the week of the newest decision when it is at most
    ``EXTEND_WEEKS`` after the week of the newest exposure or correction (the empty weeks then show that no
    session came since), else the week of the newest data, so a decision made long after the host's last
    session (the demo's, made today) does not push every session off the chart: it is drawn after a
    break (``Later``). Without data, the newest decision's week; None without either.
    docs/decisions.md, "The host over time"."""
    if newest_data is None:
        return newest_decision
    if newest_decision is not None and newest_decision <= newest_data + timedelta(weeks=EXTEND_WEEKS):
        return max(newest_data, newest_decision)
    return newest_data


def host_weeks(host: Host, *, weeks: int = WEEKS) -> Timeline:
    """The ``weeks`` weeks of ``host`` ending with ``window_end`` (oldest first), and the decisions after
    them. The decisions' weekly rollup is read whole (a row a week with decisions), so a decision made
    after the last session is still shown, in the weeks or after them."""
    decisions = dict(
        DecisionWeek.objects.filter(host=host.name).values_list("week").annotate(total=Sum("n")).order_by()
    )
    decisions = {_monday(k): v for k, v in decisions.items()}
    # the newest exposure and user correction in one query (a subquery each)
    shown, corrected = (
        Host.objects.filter(pk=host.pk)
        .values_list(
            _newest(Exposure.objects.filter(host=OuterRef("pk")), "shown_at"),
            _newest(Correction.objects.filter(host=OuterRef("pk"), kind=USER_CORRECTION), "corrected_at"),
        )
        .get()
    )
    data = [_monday(m) for m in (shown, corrected) if m is not None]
    end = window_end(max(data, default=None), max(decisions, default=None))
    if end is None:
        return Timeline(weeks=[])
    start = end - timedelta(weeks=weeks - 1)
    since = datetime.combine(start, time.min, tzinfo=UTC)
    sessions = dict(
        Exposure.objects.filter(host=host, shown_at__gte=since)
        .annotate(week=TruncWeek("shown_at"))
        .values_list("week")
        .annotate(n=Count("session", distinct=True))
        .order_by()
    )
    corrections = dict(
        Correction.objects.filter(host=host, kind=USER_CORRECTION, corrected_at__gte=since)
        .annotate(week=TruncWeek("corrected_at"))
        .values_list("week")
        .annotate(n=Count("pk"))
        .order_by()
    )
    by_monday = {
        "sessions": {_monday(k): v for k, v in sessions.items()},
        "corrections": {_monday(k): v for k, v in corrections.items()},
    }
    mondays = [start + timedelta(weeks=i) for i in range(weeks)]
    after = sorted(w for w in decisions if w > end)
    later = None
    if after:
        later = Later(
            first=after[0], last=after[-1], weeks=len(after), decisions=sum(decisions[w] for w in after)
        )
    return Timeline(
        weeks=[
            Week(
                monday=m,
                sessions=by_monday["sessions"].get(m, 0),
                corrections=by_monday["corrections"].get(m, 0),
                decisions=decisions.get(m, 0),
            )
            for m in mondays
        ],
        later=later,
    )


def tallest(weeks: list[Week]) -> float | None:
    """The chart's scale: the most corrections per 100 sessions of any of ``weeks`` (the tallest bar's),
    None when no week had a session."""
    return max((w.per_100 for w in weeks if w.per_100 is not None), default=None)


def weeks_svg(timeline: Timeline) -> SafeString:
    """A bar a week (its corrections per 100 sessions) over a baseline, and a mark under each week with
    decisions; with ``timeline.later``, the baseline breaks (two slashes) after the weeks and one more
    slot carries the mark of the decisions after them. The numbers are in the table beside it (the figure
    is ``aria-hidden``)."""
    weeks = timeline.weeks
    if not weeks:
        return SafeString("")
    top = tallest(weeks) or 1
    slots = len(weeks) + (2 if timeline.later else 0)  # a slot for the break, one for the later decisions
    step = WIDTH / slots
    bars = []
    for i, w in enumerate(weeks):
        x = round(i * step + BAR_GAP / 2, 1)
        if w.per_100:
            h = round((HEIGHT - 20) * w.per_100 / top, 1)
            bars.append(("bar", x, round(HEIGHT - 14 - h, 1), round(step - BAR_GAP, 1), h))
        if w.decisions:
            bars.append(("decided", x, HEIGHT - 10, round(step - BAR_GAP, 1), 6))
    y = HEIGHT - 13
    weeks_end = round(len(weeks) * step, 1)
    axis = f"M0 {y} H{weeks_end}"
    if timeline.later:
        x = round((slots - 1) * step + BAR_GAP / 2, 1)
        bars.append(("decided later", x, HEIGHT - 10, round(step - BAR_GAP, 1), 6))
        mid = round(weeks_end + step / 2, 1)
        axis += (
            f" M{round((slots - 1) * step, 1)} {y} H{WIDTH}"
            f" M{round(mid - 5, 1)} {y + 5} L{round(mid - 1, 1)} {y - 5}"
            f" M{round(mid + 1, 1)} {y + 5} L{round(mid + 5, 1)} {y - 5}"
        )
    rects = format_html_join("", RECT, bars)
    return format_html(SVG, WIDTH, HEIGHT, format_html(AXIS, axis) + rects)
