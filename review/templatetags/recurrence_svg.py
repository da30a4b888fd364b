"""``{% recurrence_timeline rec %}``: a lesson's recurrence as a server-rendered SVG timeline.

No JavaScript and no outside service: the SVG is built here from ``format_html`` pieces, so every
text that reaches it (session names, correction and lesson texts, verdicts) is escaped; nothing is
marked safe that was not built by ``format_html``. Three lanes share one UTC time axis: the sessions
shown the lesson (current text, or only an earlier text), the corrections on its topic (one marker
shape per outcome, plus uncharged corrections on its topic), and its Verify-gate verdicts. Dashed
lines mark when the lesson was created and when its current text was first shown. It is drawn twice, in
a wide and a narrow ``Layout`` (the page's CSS shows the one that fits the window), and its legend is an
HTML list under the drawings. docs/piles-and-recurrence.md, "Recurrence"; docs/reviewing.md ("Narrow
screens").
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from lessons.core.text import format_datetime, hash8
from lessons.recurrence.lesson import OUTCOME_LABELS, LessonRecurrence
from review.web.format import counted

register = template.Library()

TITLE_LIMIT = 300  # characters of a correction text in a marker's tooltip
FONT = 12  # every text of the timeline, in viewBox units: 12 px at the scale each layout is drawn at
VERDICT_LABEL_ROWS = (20, 34)  # a verdict's label under its marker, a row lower when the first is taken


@dataclass(frozen=True)
class Layout:
    """The geometry of one drawing of the timeline, in viewBox units.

    ``wide`` is drawn across the page from 900 px up (880 units in at least 860 px, so a 12-unit text is
    at least about 12 px); ``narrow`` under 900 px, at most 30rem wide (at 390 px, 360 units in about
    360 px), its lane names above their lanes and three dates on the axis. Neither scrolls sideways
    (the newcomer run's item 10: at 390 px the wide one scrolled in its box, its texts 9 px).
    """

    name: str
    width: int
    left: int  # where the time axis starts (the lane names sit left of it when not above)
    right: int
    lanes: dict[str, int]
    names_above: bool  # lane names above their lane (narrow), else left of it
    mark_y: int  # the baseline of "created" / "first shown" over their dashed lines
    axis_y: int
    height: int
    ticks: int


WIDE = Layout(
    name="wide",
    width=880,
    left=118,
    right=24,
    lanes={"shown": 46, "corrections": 96, "verdicts": 146},
    names_above=False,
    mark_y=20,
    axis_y=190,
    height=214,
    ticks=5,
)
NARROW = Layout(
    name="narrow",
    width=360,
    left=12,
    right=12,
    lanes={"shown": 56, "corrections": 110, "verdicts": 164},
    names_above=True,
    mark_y=16,
    axis_y=210,
    height=232,
    ticks=3,
)

COLORS = {
    "recurred": "#b91c1c",
    "during": "#c2410c",
    "unknown": "#4b5563",
    "earlier_version": "#7c3aed",
    "ambiguous": "#0f766e",
    "on_topic": "#6b7280",
    "shown_current": "#1d4ed8",
    "shown_earlier": "#93c5fd",
    "held": "#15803d",
    "regressed": "#b91c1c",
    "drifted": "#b45309",
    "verdict": "#4b5563",
}
LEGEND = (
    ("shown_current", "shown current text"),
    ("shown_earlier", "shown an earlier text only"),
    ("recurred", OUTCOME_LABELS["recurred"]),
    ("during", OUTCOME_LABELS["during"]),
    ("unknown", OUTCOME_LABELS["unknown"]),
    ("earlier_version", OUTCOME_LABELS["earlier_version"]),
    ("ambiguous", OUTCOME_LABELS["ambiguous"]),
    ("on_topic", "on its topic, not shown it"),
)


def _join(parts: Iterable[SafeString]) -> SafeString:
    return format_html_join("", "{}", ((part,) for part in parts))


def _num(value: float) -> str:
    return f"{value:.1f}"


def marker(kind: str, x: float, y: float, title: str) -> SafeString:
    """One marker of ``kind`` (an outcome, ``on_topic``, ``shown_current`` or ``shown_earlier``) at
    ``(x, y)`` with an escaped tooltip. Each kind has its own shape, so colour is not the only cue."""
    color = COLORS[kind]
    x_, y_ = _num(x), _num(y)
    if kind in ("shown_current", "shown_earlier"):
        width = "3" if kind == "shown_current" else "2"
        shape = format_html(
            '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="{}" stroke-width="{}"/>',
            x_,
            _num(y - 9),
            x_,
            _num(y + 9),
            color,
            width,
        )
    elif kind == "recurred":
        shape = format_html('<circle cx="{}" cy="{}" r="6" fill="{}"/>', x_, y_, color)
    elif kind == "during":
        points = f"{_num(x)},{_num(y - 7)} {_num(x + 7)},{_num(y + 6)} {_num(x - 7)},{_num(y + 6)}"
        shape = format_html('<polygon points="{}" fill="{}"/>', points, color)
    elif kind == "unknown":
        shape = format_html(
            '<rect x="{}" y="{}" width="11" height="11" fill="{}"/>', _num(x - 5.5), _num(y - 5.5), color
        )
    elif kind == "earlier_version":
        shape = format_html(
            '<circle cx="{}" cy="{}" r="5.5" fill="#fff" stroke="{}" stroke-width="2.5"/>', x_, y_, color
        )
    elif kind == "ambiguous":
        points = (
            f"{_num(x)},{_num(y - 7)} {_num(x + 7)},{_num(y)} {_num(x)},{_num(y + 7)} {_num(x - 7)},{_num(y)}"
        )
        shape = format_html(
            '<polygon points="{}" fill="#fff" stroke="{}" stroke-width="2.5"/>', points, color
        )
    else:  # on_topic: a small cross
        shape = format_html(
            '<path d="M{} {}l8 8m0 -8l-8 8" stroke="{}" stroke-width="2"/>', _num(x - 4), _num(y - 4), color
        )
    return format_html('<g class="m-{}"><title>{}</title>{}</g>', kind, title, shape)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= TITLE_LIMIT else text[: TITLE_LIMIT - 1] + "\u2026"


class _Axis:
    """Maps datetimes to x between the layout's ``left`` and ``width - right``, padded so no marker sits
    on an edge."""

    def __init__(self, moments: list[datetime], layout: Layout):
        start, end = min(moments), max(moments)
        span = end - start
        pad = max(span * 0.04, timedelta(hours=12))
        self.start, self.end = _shifted(start, -pad), _shifted(end, pad)
        self.seconds = (self.end - self.start).total_seconds()
        self.layout = layout

    def x(self, moment: datetime) -> float:
        span = self.layout.width - self.layout.left - self.layout.right
        return self.layout.left + (moment - self.start).total_seconds() / self.seconds * span

    def ticks(self) -> list[datetime]:
        step = (self.end - self.start) / (self.layout.ticks - 1)
        return [_shifted(self.start, step * i) for i in range(self.layout.ticks)]


def _shifted(moment: datetime, delta: timedelta) -> datetime:
    """``moment + delta``, stopped at the first or last representable moment: a lesson may be dated in
    year 1 or 9999 (valid interchange timestamps), where the padding once overflowed (issue 13, fault 11)."""
    try:
        return moment + delta
    except OverflowError:
        edge = datetime.min if delta < timedelta(0) else datetime.max
        return edge.replace(tzinfo=moment.tzinfo)


def _moments(rec: LessonRecurrence) -> list[datetime]:
    moments = [rec.lesson.created_at]
    moments += [s.first_shown for s in rec.sessions]
    moments += [c.corrected_at for c in rec.charged]
    moments += [c.corrected_at for c in rec.on_topic]
    moments += [v.measured_at for v in rec.verdicts]
    return moments


def _anchor(x: float, layout: Layout, room: float = 40) -> str:
    """A label's ``text-anchor`` at ``x``: hung inwards near an edge so it is not cut there."""
    if x < room:
        return "start"
    return "end" if x > layout.width - room else "middle"


def _width(label: str) -> float:
    """About how wide ``label`` is drawn at ``FONT`` (a sans-serif character is about 0.6 of its size)."""
    return len(label) * FONT * 0.6


def _text(x: float, y: float, label: str, *, anchor: str = "start", bold: bool = False) -> SafeString:
    weight = ' font-weight="600" fill="#111827"' if bold else ' fill="#374151"'
    return format_html(
        '<text x="{}" y="{}" text-anchor="{}" font-size="{}"{}>{}</text>',
        _num(x),
        _num(y),
        anchor,
        FONT,
        SafeString(weight),
        label,
    )


def _vertical(axis: _Axis, moment: datetime, label: str) -> SafeString:
    layout = axis.layout
    x = axis.x(moment)
    return format_html(
        '<g class="mark"><line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#9ca3af" stroke-dasharray="4 3"/>'
        "{}</g>",
        _num(x),
        layout.mark_y + 6,
        _num(x),
        layout.axis_y,
        _text(x, layout.mark_y, label, anchor=_anchor(x, layout)),
    )


def _lanes(layout: Layout) -> list[SafeString]:
    parts = []
    for name, y in layout.lanes.items():
        at = (layout.left, y - 14) if layout.names_above else (8, y + 4)
        parts.append(_text(*at, name, bold=True))
        parts.append(
            format_html(
                '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#e5e7eb"/>',
                layout.left,
                y,
                layout.width - layout.right,
                y,
            )
        )
    return parts


def _markers(rec: LessonRecurrence, axis: _Axis) -> list[SafeString]:
    """The sessions, the corrections on its topic and the verdicts, each on its lane."""
    lanes = axis.layout.lanes
    parts = []
    for s in sorted(rec.sessions, key=lambda s: (s.first_shown, s.session)):
        kind = "shown_current" if s.first_current is not None else "shown_earlier"
        at = s.first_current or s.first_shown
        title = f"session {s.session}: shown {format_datetime(at)}"
        parts.append(marker(kind, axis.x(at), lanes["shown"], title))
    for c in rec.on_topic:
        title = (
            f"{c.session} at {format_datetime(c.corrected_at)}: on its topic, not shown it. {_clip(c.text)}"
        )
        parts.append(marker("on_topic", axis.x(c.corrected_at), lanes["corrections"], title))
    for c in sorted(rec.charged, key=lambda c: (c.corrected_at, c.id)):
        title = f"{c.session} at {format_datetime(c.corrected_at)}: {c.label}. {_clip(c.text)}"
        parts.append(marker(c.outcome, axis.x(c.corrected_at), lanes["corrections"], title))
    rows: list[float] = [float("-inf")] * len(VERDICT_LABEL_ROWS)  # each row's last label's right end
    for v in sorted(rec.verdicts, key=lambda v: v.measured_at):
        x = axis.x(v.measured_at)
        label = v.verdict[:14]
        anchor = _anchor(x, axis.layout, 30)
        left = {"start": x, "middle": x - _width(label) / 2, "end": x - _width(label)}[anchor]
        # A label that would run into the one before it takes the next row; with no row free the marker's
        # tooltip and the verdicts table still name it.
        row = next((i for i, end in enumerate(rows) if left > end + 4), None)
        text = SafeString("")
        if row is not None:
            rows[row] = left + _width(label)
            text = _text(x, lanes["verdicts"] + VERDICT_LABEL_ROWS[row], label, anchor=anchor)
        parts.append(
            format_html(
                '<g class="m-verdict"><title>{}</title><circle cx="{}" cy="{}" r="6" fill="{}"/>{}</g>',
                f"{v.verdict} at {format_datetime(v.measured_at)}" + (f" ({v.metric})" if v.metric else ""),
                _num(x),
                lanes["verdicts"],
                COLORS.get(v.verdict, COLORS["verdict"]),
                text,
            )
        )
    return parts


def _time_axis(axis: _Axis) -> list[SafeString]:
    layout = axis.layout
    parts = [
        format_html(
            '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#6b7280"/>',
            layout.left,
            layout.axis_y,
            layout.width - layout.right,
            layout.axis_y,
        )
    ]
    ticks = axis.ticks()
    label_format = "%Y-%m-%d %H:%M" if axis.end - axis.start < timedelta(days=3) else "%Y-%m-%d"
    for index, tick in enumerate(ticks):
        x = axis.x(tick)
        # The outer labels hang inwards so they are not cut at the edges.
        anchor = "start" if index == 0 else "end" if index == len(ticks) - 1 else "middle"
        parts.append(
            format_html(
                '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#6b7280"/>{}',
                _num(x),
                layout.axis_y,
                _num(x),
                layout.axis_y + 4,
                _text(x, layout.axis_y + 17, tick.strftime(label_format), anchor=anchor),
            )
        )
    return parts


def _drawing(rec: LessonRecurrence, layout: Layout, summary: str) -> SafeString:
    """One ``<svg>`` of the timeline in ``layout``; CSS shows the one that fits the window."""
    axis = _Axis(_moments(rec), layout)
    parts = _lanes(layout)
    parts.append(_vertical(axis, rec.lesson.created_at, "created"))
    if rec.first_current is not None:
        parts.append(_vertical(axis, rec.first_current, "first shown"))
    parts += _markers(rec, axis)
    parts += _time_axis(axis)
    title_id = f"rt-title-{rec.lesson.id}-{layout.name}"
    return format_html(
        '<svg class="recurrence-timeline rt-{}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" '
        'width="100%" font-family="system-ui, sans-serif" role="img" aria-labelledby="{}">'
        '<title id="{}">{}</title>{}</svg>',
        layout.name,
        layout.width,
        layout.height,
        title_id,
        title_id,
        summary,
        _join(parts),
    )


@register.simple_tag
def recurrence_timeline(rec: LessonRecurrence) -> SafeString:
    """The timeline of ``rec`` (a ``LessonRecurrence``): two drawings of it (``WIDE`` and ``NARROW``; CSS
    shows one) and the legend as a list under them, or an empty string when there is nothing to draw.
    Times are UTC."""
    if rec is None:
        return SafeString("")
    summary = (
        f"Recurrence timeline of lesson {hash8(rec.lesson.hash)}: {counted(rec.sessions_total, 'session')} "
        f"shown it, {counted(rec.charged_total, 'correction')} charged, "
        f"{counted(len(rec.verdicts), 'verdict')}. Times in UTC."
    )
    return _join([_drawing(rec, WIDE, summary), _drawing(rec, NARROW, summary), _legend()])


def _legend() -> SafeString:
    """The markers' meanings as a list (HTML, so it wraps at any width instead of being cut)."""
    items = (
        format_html(
            '<li><svg class="legend-mark" viewBox="-2 -2 20 20" width="16" height="16" aria-hidden="true">'
            "{}</svg>{}</li>",
            marker(kind, 8, 8, label),
            label,
        )
        for kind, label in LEGEND
    )
    return format_html('<ul class="timeline-legend" aria-label="Legend">{}</ul>', _join(items))
