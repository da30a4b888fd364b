"""``{% recurrence_timeline rec %}``: a lesson's recurrence as a server-rendered SVG timeline.

No JavaScript and no outside service: the SVG is built here from ``format_html`` pieces, so every
text that reaches it (session names, correction and lesson texts, verdicts) is escaped; nothing is
marked safe that was not built by ``format_html``. Three lanes share one UTC time axis: the sessions
shown the lesson (current text, or only an earlier text), the corrections on its topic (one marker
shape per outcome, plus uncharged corrections on its topic), and its Verify-gate verdicts. Dashed
lines mark when the lesson was created and when its current text was first shown. spec: recurrence.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from lessons.core.text import format_datetime
from lessons.recurrence.lesson import OUTCOME_LABELS, LessonRecurrence
from review.web.format import counted

register = template.Library()

WIDTH = 880
LEFT = 118  # room for the lane labels
RIGHT = 24
LANES = {"shown": 46, "corrections": 96, "verdicts": 146}
AXIS_Y = 176
LEGEND_Y = 206
HEIGHT = 258
TITLE_LIMIT = 300  # characters of a correction text in a marker's tooltip

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
    """Maps datetimes to x between ``LEFT`` and ``WIDTH - RIGHT``, padded so no marker sits on an edge."""

    def __init__(self, moments: list[datetime]):
        start, end = min(moments), max(moments)
        span = end - start
        pad = max(span * 0.04, timedelta(hours=12))
        self.start, self.end = _shifted(start, -pad), _shifted(end, pad)
        self.seconds = (self.end - self.start).total_seconds()

    def x(self, moment: datetime) -> float:
        return LEFT + (moment - self.start).total_seconds() / self.seconds * (WIDTH - LEFT - RIGHT)

    def ticks(self, n: int = 5) -> list[datetime]:
        step = (self.end - self.start) / (n - 1)
        return [_shifted(self.start, step * i) for i in range(n)]


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


def _vertical(axis: _Axis, moment: datetime, label: str) -> SafeString:
    x = _num(axis.x(moment))
    return format_html(
        '<g class="mark"><line x1="{}" y1="26" x2="{}" y2="{}" stroke="#9ca3af" stroke-dasharray="4 3"/>'
        '<text x="{}" y="20" text-anchor="middle" font-size="11" fill="#374151">{}</text></g>',
        x,
        x,
        AXIS_Y,
        x,
        label,
    )


@register.simple_tag
def recurrence_timeline(rec: LessonRecurrence) -> SafeString:
    """The SVG timeline of ``rec`` (a ``LessonRecurrence``), or an empty string when there is nothing
    to draw. Times are UTC."""
    if rec is None:
        return SafeString("")
    axis = _Axis(_moments(rec))
    parts: list[SafeString] = []
    for name, y in LANES.items():
        parts.append(
            format_html(
                '<text x="8" y="{}" font-size="12" font-weight="600" fill="#111827">{}</text>'
                '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#e5e7eb"/>',
                y + 4,
                name,
                LEFT,
                y,
                WIDTH - RIGHT,
                y,
            )
        )
    parts.append(_vertical(axis, rec.lesson.created_at, "created"))
    if rec.first_current is not None:
        parts.append(_vertical(axis, rec.first_current, "first shown"))
    for s in sorted(rec.sessions, key=lambda s: (s.first_shown, s.session)):
        kind = "shown_current" if s.first_current is not None else "shown_earlier"
        at = s.first_current or s.first_shown
        title = f"session {s.session}: shown {format_datetime(at)}"
        parts.append(marker(kind, axis.x(at), LANES["shown"], title))
    for c in rec.on_topic:
        title = (
            f"{c.session} at {format_datetime(c.corrected_at)}: on its topic, not shown it. {_clip(c.text)}"
        )
        parts.append(marker("on_topic", axis.x(c.corrected_at), LANES["corrections"], title))
    for c in sorted(rec.charged, key=lambda c: (c.corrected_at, c.id)):
        title = f"{c.session} at {format_datetime(c.corrected_at)}: {c.label}. {_clip(c.text)}"
        parts.append(marker(c.outcome, axis.x(c.corrected_at), LANES["corrections"], title))
    for v in rec.verdicts:
        color = COLORS.get(v.verdict, COLORS["verdict"])
        x = axis.x(v.measured_at)
        parts.append(
            format_html(
                '<g class="m-verdict"><title>{}</title><circle cx="{}" cy="{}" r="6" fill="{}"/>'
                '<text x="{}" y="{}" text-anchor="middle" font-size="11" fill="#374151">{}</text></g>',
                f"{v.verdict} at {format_datetime(v.measured_at)}" + (f" ({v.metric})" if v.metric else ""),
                _num(x),
                LANES["verdicts"],
                color,
                _num(x),
                LANES["verdicts"] + 20,
                v.verdict[:14],
            )
        )
    parts.append(
        format_html(
            '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#6b7280"/>', LEFT, AXIS_Y, WIDTH - RIGHT, AXIS_Y
        )
    )
    ticks = axis.ticks()
    label_format = "%Y-%m-%d %H:%M" if axis.end - axis.start < timedelta(days=3) else "%Y-%m-%d"
    for index, tick in enumerate(ticks):
        x = _num(axis.x(tick))
        # The outer labels hang inwards so they are not cut at the edges.
        anchor = "start" if index == 0 else "end" if index == len(ticks) - 1 else "middle"
        parts.append(
            format_html(
                '<line x1="{}" y1="{}" x2="{}" y2="{}" stroke="#6b7280"/>'
                '<text x="{}" y="{}" text-anchor="{}" font-size="11" fill="#374151">{}</text>',
                x,
                AXIS_Y,
                x,
                AXIS_Y + 4,
                x,
                AXIS_Y + 16,
                anchor,
                tick.strftime(label_format),
            )
        )
    parts.append(_legend())
    summary = (
        f"Recurrence timeline of lesson {rec.lesson.hash[:8]}: {counted(rec.sessions_total, 'session')} "
        f"shown it, {counted(rec.charged_total, 'correction')} charged, "
        f"{counted(len(rec.verdicts), 'verdict')}. Times in UTC."
    )
    return format_html(
        '<svg class="recurrence-timeline" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {} {}" '
        'width="100%" font-family="system-ui, sans-serif" role="img" aria-labelledby="rt-title-{}">'
        '<title id="rt-title-{}">{}</title>{}</svg>',
        WIDTH,
        HEIGHT,
        rec.lesson.id,
        rec.lesson.id,
        summary,
        _join(parts),
    )


def _legend() -> SafeString:
    parts = []
    x, y = LEFT, LEGEND_Y
    for kind, label in LEGEND:
        if x > WIDTH - 190:
            x, y = LEFT, y + 24
        parts.append(marker(kind, x + 6, y, label))
        parts.append(
            format_html(
                '<text x="{}" y="{}" font-size="11" fill="#374151">{}</text>',
                _num(x + 18),
                _num(y + 4),
                label,
            )
        )
        x += 18 + 7.2 * len(label) + 22
    return format_html('<g class="legend">{}</g>', _join(parts))
