"""Formatting shared by tables and template tags: ages, the budget gauge, reason-code words. Pure display:
every argument reaching HTML goes through ``format_html`` (escaped). spec: interchange.md "Framing" (UTC
with milliseconds), decisions.md "Reason".
"""

from __future__ import annotations

from datetime import datetime

from django.utils import timezone
from django.utils.html import format_html

from lessons.core.text import format_datetime
from review.models import NO_REASON_CODE, ReasonCode


def budget_gauge(count: int, max_active: int, enabled: bool = True) -> str:
    """A bar of ``count`` against ``max_active``: the budget span in slate, the overage in red, a tick at
    the budget. SVG attributes, not inline styles, so a strict CSP needs no ``unsafe-inline``.
    """
    count, max_active = int(count), max(int(max_active), 1)
    scale = max(count, max_active)
    budget_x = round(100 * max_active / scale, 2)
    within_w = round(100 * min(count, max_active) / scale, 2)
    over_w = round(100 * max(count - max_active, 0) / scale, 2)
    state = "off" if not enabled else ("over" if count > max_active else "within")
    return format_html(
        '<span class="gauge gauge-{state}" title="{count} live of a budget of {max_active}{off}">'
        '<svg viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true" focusable="false">'
        '<rect class="g-track" x="0" y="1" width="100" height="8"/>'
        '<rect class="g-within" x="0" y="1" width="{within_w}" height="8"/>'
        '<rect class="g-over" x="{budget_x}" y="1" width="{over_w}" height="8"/>'
        '<rect class="g-tick" x="{tick_x}" y="0" width="0.8" height="10"/>'
        "</svg>"
        '<span class="gauge-text"><b>{count}</b> / {max_active}</span></span>',
        state=state,
        off="" if enabled else " (budget off)",
        count=count,
        max_active=max_active,
        within_w=within_w,
        budget_x=budget_x,
        over_w=over_w,
        tick_x=max(budget_x - 0.8, 0),
    )


def relative_age(moment: datetime, now: datetime) -> str:
    """How long ago ``moment`` was, coarsely: ``today``, ``3 days``, ``5 weeks``, ``4 months``, ``2 years``.

    Days are whole days of 24 hours; a month is 30 days and a year 365 (it is a hint, the exact UTC time
    is in the ``<time>`` element).
    """
    days = (now - moment).days
    if days < 0:
        return "in the future"
    if days == 0:
        return "today"
    if days < 14:
        return f"{days} day{'s' if days != 1 else ''}"
    if days < 60:
        return f"{days // 7} weeks"
    if days < 730:
        return f"{days // 30} months"
    return f"{days // 365} years"


def age(moment: datetime | None) -> str:
    """``<time datetime="…Z" title="…Z">5 weeks</time>``: a relative age with the exact UTC time."""
    if not moment:
        return ""
    stamp = format_datetime(moment)
    return format_html(
        '<time datetime="{}" title="{}">{}</time>', stamp, stamp, relative_age(moment, timezone.now())
    )


def reason_label(code: str | None) -> str:
    """The words shown for a reason code: ``restates_another`` -> ``restates another``, none -> ``(no code)``.

    The record and the exports keep the value; a value the list does not know is shown as it is.
    spec: decisions.md, "Reason".
    """
    if not code or code == NO_REASON_CODE:
        return NO_REASON_CODE
    try:
        return ReasonCode(code).label
    except ValueError:
        return code
