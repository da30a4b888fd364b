"""A small stacked bar chart of reason codes per week, computed as SVG geometry. Pure: no query, no JS.

The log page renders the result as inline SVG (server-side, no chart library, no outside service): one
chart per host of the filtered decisions, one bar per ISO week (Monday, UTC), stacked by reason code.
Input rows are ``(host, week_start, reason_code, count)`` as ``review.log.selectors.reason_codes_by_week``
returns them: the last ``MAX_WEEKS`` weeks of the log only (ending with the week of its newest decision),
so a host whose decisions are all older is not charted. The codes, their order and their words come from
``review.models.ReasonCode``.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import NamedTuple

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from review.models import NO_REASON_CODE, ReasonCode
from review.web.format import counted, reason_label

NO_CODE = NO_REASON_CODE
# Reason codes in the order of the model's choices (docs/decisions.md, "The record"), then decisions without
# one;
# the words shown are the choices' labels.
CODE_ORDER = (*ReasonCode.values, NO_CODE)
LABELS = {**dict(ReasonCode.choices), NO_CODE: NO_CODE}
# Okabe-Ito colours (distinguishable with common colour-vision deficiencies), grey for "no code".
COLOURS = {
    ReasonCode.DUPLICATE: "#0072B2",
    ReasonCode.RESTATES_ANOTHER: "#56B4E9",
    ReasonCode.REGRESSED: "#D55E00",
    ReasonCode.DRIFTED: "#E69F00",
    ReasonCode.RECURRING: "#CC79A7",
    ReasonCode.OBSOLETE: "#009E73",
    ReasonCode.TOO_SPECIFIC: "#F0E442",
    ReasonCode.OTHER: "#000000",
    NO_CODE: "#999999",
}
MAX_WEEKS = 26
MAX_BAR = 28.0  # px: a chart of one or two weeks keeps bars, not slabs
MAX_HOSTS = 8
WIDTH, HEIGHT = 640, 160
LEFT, RIGHT, TOP, BOTTOM = 36, 8, 8, 22
# One chart as the log page prints it (the loop of review/log/decisions.html was: a test holds the two to the
# same bytes); {marks}, {note}, {legend} and {rows} are markup built here.
FIGURE = (
    '\n    \n    <figure class="log-chart">'
    '\n      <svg role="img" aria-labelledby="chart-{cid}-title chart-{cid}-desc"'
    ' viewBox="0 0 {width} {height}" width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">'
    '\n        <title id="chart-{cid}-title">{title}</title>'
    '\n        <desc id="chart-{cid}-desc">{description}</desc>'
    '\n        <line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#888" stroke-width="1"/>'
    '\n        <line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#888" stroke-width="1"/>'
    "\n        {marks}"
    "\n      </svg>"
    "\n      <figcaption>"
    '\n        <span class="chart-title">{title}</span>{note}'
    '\n        <ul class="legend" aria-label="Legend">'
    "\n          {legend}"
    "\n        </ul>"
    '\n        <details class="chart-data"><summary>The numbers</summary>'
    '\n          <table><thead><tr><th scope="col">Week of</th><th scope="col">Decisions by reason code</th>'
    "</tr></thead>"
    "\n          <tbody>{rows}</tbody></table>"
    "\n        </details>"
    "\n      </figcaption>"
    "\n    </figure>"
    "\n    \n    "
)
WEEKS_CUT = ' <span class="muted">(the last 26 weeks; {n} earlier week{s} not drawn)</span>'
EARLIER = ' <span class="muted">(the last 26 weeks of the log; earlier decisions not drawn)</span>'
LEGEND_ITEM = (
    '<li><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="{colour}"/></svg>'
    " {label}: {n}</li>"
)
# Each code's words, escaped once (the marks and the numbers table name a code ~1,500 times a page).
ESCAPED_LABELS = {code: escape(reason_label(code)) for code in CODE_ORDER}


class Segment(NamedTuple):
    """One stacked rectangle: ``count`` decisions with ``code`` in the week starting ``week``. A named
    tuple: a log of 8 hosts x 26 weeks draws ~1,500 (a frozen dataclass took ~3 us each to build)."""

    x: float
    y: float
    width: float
    height: float
    code: str
    colour: str
    count: int
    week: str


@dataclass(frozen=True)
class Tick:
    x: float
    y: float
    label: str


@dataclass(frozen=True)
class HostChart:
    """The geometry of one host's chart, and the words for its title, description and legend."""

    host: str
    title: str
    description: str
    width: int
    height: int
    plot_left: int
    plot_top: int
    plot_right: int
    plot_bottom: int
    segments: tuple[Segment, ...]
    x_ticks: tuple[Tick, ...]
    y_ticks: tuple[Tick, ...]
    legend: tuple[tuple[str, str, int], ...]  # (code, colour, total count)
    weeks: tuple[tuple[str, tuple[tuple[str, int], ...]], ...]  # the data as a table: week -> (code, n)
    total: int
    weeks_cut: int  # earlier weeks left out (only the last MAX_WEEKS are drawn)
    earlier: bool = False  # decisions before the log's window (not read, so not counted in weeks_cut)

    @property
    def marks(self) -> SafeString:
        """The SVG's ticks and stacked rectangles (each with its ``<title>``), as markup.

        Written here, not by a template loop: 8 hosts x 26 weeks x 9 codes is up to 1,872 rectangles,
        and a template spends about 0.1 ms on each (issue 10: the log page at 1M decisions). Numbers are
        Python's ``str`` (what the template printed); every word is escaped.
        """
        y_ticks = "".join(
            f'<text x="{t.x}" y="{t.y}" text-anchor="end" font-size="10" dominant-baseline="middle">'
            f"{escape(t.label)}</text>"
            for t in self.y_ticks
        )
        x_ticks = "".join(
            f'<text x="{t.x}" y="{t.y}" text-anchor="middle" font-size="10">{escape(t.label)}</text>'
            for t in self.x_ticks
        )
        rects = "".join(
            f'<rect x="{g.x}" y="{g.y}" width="{g.width}" height="{g.height}" fill="{g.colour}">'
            f"<title>week of {g.week}: {g.count} × {ESCAPED_LABELS[g.code]}</title></rect>"
            for g in self.segments
        )
        parts = (y_ticks, x_ticks, rects)  # one line each, as the page's source shows them
        return mark_safe("\n        ".join(parts))  # noqa: S308 - numbers, fixed colours and escaped words only

    @property
    def table_rows(self) -> SafeString:
        """The rows of "The numbers" table (week, then "code n, code n"), as markup; see ``marks``."""
        return mark_safe(  # noqa: S308 - ISO dates, numbers and escaped words only
            "".join(
                f'<tr><th scope="row">{week}</th><td>'
                + ", ".join(f"{ESCAPED_LABELS[code]} {n}" for code, n in counts)
                + "</td></tr>"
                for week, counts in self.weeks
            )
        )

    def figure(self, number: int) -> SafeString:
        """The chart's ``<figure>``: the SVG (its ids numbered ``number``), its caption, legend and numbers
        table, as markup; whitespace as the page's template wrote it. Built here for the reason ``marks``
        is: a template's ~40 nodes and lookups per chart were ~0.4 ms each of 8 (issue 10)."""
        if self.weeks_cut:
            note = WEEKS_CUT.format(n=self.weeks_cut, s="" if self.weeks_cut == 1 else "s")
        else:
            note = EARLIER if self.earlier else ""
        legend = "".join(
            LEGEND_ITEM.format(colour=escape(colour), label=ESCAPED_LABELS[code], n=n)
            for code, colour, n in self.legend
        )
        return mark_safe(  # noqa: S308 - numbers, fixed colours, markup built above and escaped words only
            FIGURE.format(
                cid=number,
                width=self.width,
                height=self.height,
                title=escape(self.title),
                description=escape(self.description),
                left=self.plot_left,
                top=self.plot_top,
                bottom=self.plot_bottom,
                right=self.plot_right,
                marks=self.marks,
                note=note,
                legend=legend,
                rows=self.table_rows,
            )
        )


@dataclass(frozen=True)
class LogChart:
    charts: tuple[HostChart, ...]
    hosts_cut: int  # hosts left out (only the first MAX_HOSTS are drawn)

    @property
    def figures(self) -> SafeString:
        """Every chart's ``<figure>`` (``HostChart.figure``), numbered from 1, as markup."""
        return mark_safe("".join(c.figure(i) for i, c in enumerate(self.charts, start=1)))  # noqa: S308


def _as_date(value: date | datetime) -> date:
    return value.date() if isinstance(value, datetime) else value


def _nice_max(value: int) -> int:
    """The smallest of 1, 2, 5, 10, 20, 50, ... that is at least ``value`` (at least 1)."""
    step = 1
    while True:
        for m in (1, 2, 5):
            if m * step >= value:
                return m * step
        step *= 10


def host_chart(host: str, rows: list[tuple[date, str | None, int]], *, earlier: bool = False) -> HostChart:
    """The chart of one host from ``(week_start, reason_code, count)`` rows (any order); ``earlier``:
    the host has decisions before the rows' window."""
    per_week: dict[date, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for week, code, n in rows:
        per_week[_as_date(week)][code or NO_CODE] += n
    first, last = min(per_week), max(per_week)
    weeks = []
    day = first
    while day <= last:  # every week between the first and the last, so gaps show as gaps
        weeks.append(day)
        day += timedelta(days=7)
    weeks_cut = max(0, len(weeks) - MAX_WEEKS)
    weeks = weeks[weeks_cut:]
    top = _nice_max(max(sum(per_week[w].values()) for w in weeks if w in per_week))  # the last week has data
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    slot = plot_w / len(weeks)
    bar = min(MAX_BAR, max(2.0, slot * 0.7))
    segments, x_ticks = [], []
    table: list[tuple[str, tuple[tuple[str, int], ...]]] = []  # the weeks with data: (week, ((code, n), ...))
    totals: dict[str, int] = defaultdict(int)
    label_every = max(1, len(weeks) // 6)
    for i, week in enumerate(weeks):
        x = LEFT + i * slot + (slot - bar) / 2
        y = TOP + plot_h
        counts = per_week.get(week)
        if counts is not None:
            monday, left, width = week.isoformat(), round(x, 1), round(bar, 1)
            shown = []
            for code in CODE_ORDER:
                n = counts.get(code, 0)
                if not n:
                    continue
                h = plot_h * n / top
                y -= h
                totals[code] += n
                shown.append((code, n))
                segments.append(
                    Segment(left, round(y, 1), width, round(h, 1), code, COLOURS[code], n, monday)
                )
            table.append((monday, tuple(shown)))
        if i % label_every == 0 or i == len(weeks) - 1:
            x_ticks.append(Tick(round(x + bar / 2, 1), HEIGHT - 6, week.strftime("%d %b")))
    y_ticks = (Tick(LEFT - 4, TOP + plot_h, "0"), Tick(LEFT - 4, TOP + 8, str(top)))
    total = sum(totals.values())
    legend = tuple((code, COLOURS[code], totals[code]) for code in CODE_ORDER if totals.get(code))
    span = f"the weeks of {weeks[0].isoformat()} to {weeks[-1].isoformat()}"
    description = f"{counted(total, 'decision')} on {host} in {span}, stacked by reason code: " + ", ".join(
        f"{LABELS[code]} {n}" for code, _c, n in legend
    )
    return HostChart(
        host=host,
        title=f"Reason codes per week on {host}",
        description=description,
        width=WIDTH,
        height=HEIGHT,
        plot_left=LEFT,
        plot_top=TOP,
        plot_right=WIDTH - RIGHT,
        plot_bottom=HEIGHT - BOTTOM,
        segments=tuple(segments),
        x_ticks=tuple(x_ticks),
        y_ticks=y_ticks,
        legend=legend,
        weeks=tuple(table),
        total=total,
        weeks_cut=weeks_cut,
        earlier=earlier,
    )


def log_chart(
    rows: list[tuple[str, date | datetime, str | None, int]],
    *,
    earlier: frozenset[str] = frozenset(),
    host_count: int | None = None,
) -> LogChart:
    """One chart per host (the first ``MAX_HOSTS`` by name) from ``(host, week_start, code, count)`` rows.

    ``earlier``: hosts with decisions before the rows' window; ``host_count``: how many hosts the window
    has in all (when the rows hold the charted hosts only, as ``reason_codes_by_week`` reads them).
    """
    by_host: dict[str, list[tuple[date, str | None, int]]] = defaultdict(list)
    for host, week, code, n in rows:
        by_host[host].append((week, code, n))
    hosts = sorted(by_host)
    charts = tuple(host_chart(h, by_host[h], earlier=h in earlier) for h in hosts[:MAX_HOSTS])
    total = len(hosts) if host_count is None else host_count
    return LogChart(charts=charts, hosts_cut=max(0, total - MAX_HOSTS))
