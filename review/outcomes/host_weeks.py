"""The host over time (issue 24): user corrections per 100 sessions, week by week, with the weeks that
had decisions marked, so an admin sees whether the agent got corrected less after a cut. Weeks are ISO
weeks (Monday, UTC); a week's sessions are the distinct sessions shown a lesson that week. Four queries
(the newest exposure and correction; the weeks of exposures, of corrections, and the decisions' weekly
rollup), whatever the number of weeks shown.
docs/decisions.md, "Outcomes".
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
WIDTH, HEIGHT, BAR_GAP = 560, 120, 2
RECT = '<rect class="{}" x="{}" y="{}" width="{}" height="{}"></rect>'
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


def host_weeks(host: Host, *, weeks: int = WEEKS) -> list[Week]:
    """The last ``weeks`` weeks of ``host`` up to the week of its newest exposure, correction or
    decision, oldest first; ``[]`` when it has none. The decisions' weekly rollup is read whole (a row a
    week with decisions), so a decision made after the last session still ends the range."""
    decisions = dict(
        DecisionWeek.objects.filter(host=host.name).values_list("week").annotate(total=Sum("n")).order_by()
    )
    # the newest exposure and user correction in one query (a subquery each)
    shown, corrected = (
        Host.objects.filter(pk=host.pk)
        .values_list(
            _newest(Exposure.objects.filter(host=OuterRef("pk")), "shown_at"),
            _newest(Correction.objects.filter(host=OuterRef("pk"), kind=USER_CORRECTION), "corrected_at"),
        )
        .get()
    )
    newest = [_monday(m) for m in (shown, corrected, max(decisions, default=None)) if m is not None]
    if not newest:
        return []
    end = max(newest)
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
        "decisions": {_monday(k): v for k, v in decisions.items()},
    }
    return [
        Week(
            monday=start + timedelta(weeks=i),
            sessions=by_monday["sessions"].get(start + timedelta(weeks=i), 0),
            corrections=by_monday["corrections"].get(start + timedelta(weeks=i), 0),
            decisions=by_monday["decisions"].get(start + timedelta(weeks=i), 0),
        )
        for i in range(weeks)
    ]


def tallest(weeks: list[Week]) -> float | None:
    """The chart's scale: the most corrections per 100 sessions of any of ``weeks`` (the tallest bar's),
    None when no week had a session."""
    return max((w.per_100 for w in weeks if w.per_100 is not None), default=None)


def newest_session_week(host: Host) -> date | None:
    """The Monday of the week of ``host``'s newest exposure (its newest session), None without one. The
    host page asks it only when no week of the chart had a session: a decision long after the host's last
    session ends the range past every session, and the caption then says where they are (one query)."""
    shown = Exposure.objects.filter(host=host).aggregate(newest=Max("shown_at"))["newest"]
    return _monday(shown) if shown is not None else None


def weeks_svg(weeks: list[Week]) -> SafeString:
    """A bar a week (its corrections per 100 sessions) and a mark under each week with decisions; the
    numbers are in the table beside it (the figure is ``aria-hidden``)."""
    if not weeks:
        return SafeString("")
    top = tallest(weeks) or 1
    step = WIDTH / len(weeks)
    bars = []
    for i, w in enumerate(weeks):
        x = round(i * step + BAR_GAP / 2, 1)
        if w.per_100:
            h = round((HEIGHT - 20) * w.per_100 / top, 1)
            bars.append(("bar", x, round(HEIGHT - 14 - h, 1), round(step - BAR_GAP, 1), h))
        if w.decisions:
            bars.append(("decided", x, HEIGHT - 10, round(step - BAR_GAP, 1), 6))
    rects = format_html_join("", RECT, bars)
    return format_html(SVG, WIDTH, HEIGHT, rects)
