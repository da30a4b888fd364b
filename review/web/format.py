"""Display helpers of the reviewer pages (the template tags wrap them; tables call them): verdict badges,
jargon tooltips, the budget gauge, ages, UTC times, counts, reason-code words.

Everything that reaches HTML goes through ``format_html`` (escaping every argument); no lesson text is
ever marked safe. docs/piles-and-recurrence.md, "Piles" rule 6 (verdict shown), docs/interchange.md "Framing"
(UTC with milliseconds),
docs/decisions.md "Reason", docs/piles-and-recurrence.md, "Recurrence" (recurring).
"""

from __future__ import annotations

import html as stdlib_html
import re
from datetime import datetime

from django.utils import timezone
from django.utils.html import conditional_escape, format_html
from django.utils.safestring import SafeString, mark_safe

from lessons.core import verdicts
from lessons.core.piles import NOT_APPLIED
from lessons.core.text import format_datetime
from review.models import NO_REASON_CODE, Action, ReasonCode

# Verdict -> CSS class. Regressed and drifted stand out; held is quiet, never green-loud; a verdict
# this table does not know is neutral grey (docs/interchange.md lets hosts send other verdict words).
VERDICT_CLASSES = {
    verdicts.HELD: "v-held",
    verdicts.REGRESSED: "v-regressed",
    verdicts.DRIFTED: "v-drifted",
    verdicts.HELD_COSTLIER: "v-costlier",
    verdicts.UNMEASURED: "v-unmeasured",
}
VERDICT_UNKNOWN_CLASS = "v-unknown"
VERDICT_NOT_APPLIED_CLASS = "v-not-applied"
MS_PER_DAY = 86_400_000
# Short explanations of the product's own words, shown as tooltips (<abbr title> or a badge's title).
JARGON = {
    NOT_APPLIED: "No Verify-gate verdict has been recorded for this lesson",
    "held_costlier": "held, but at a higher cost",
    "pile version": (
        "a fingerprint of the pile's lessons; an action on a pile that changed since you loaded it is refused"
    ),
    "stale": "a lesson this draft supersedes is no longer live",
}


def esc(value) -> str:
    """``conditional_escape(value)``, the common types first: a ``SafeString`` as it is, a plain ``str``
    through ``html.escape`` (what Django's ``escape`` calls), a plain ``int`` its digits; anything else
    through ``conditional_escape``. For rows built as f-strings: 200 hosts' cells through ``format_html``
    were most of the hosts page's time (issue 10)."""
    kind = type(value)
    if kind is SafeString:
        return value
    if kind is str:
        return stdlib_html.escape(value)
    if kind is int:
        return str(value)
    return conditional_escape(value)


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
    off = "" if enabled else " (budget off)"
    tick_x = max(budget_x - 0.8, 0)
    # Numbers and this function's own words only, so nothing to escape: an f-string, not format_html (the
    # queue draws 25 of these a page).
    return mark_safe(  # noqa: S308 - ints, floats and constant words
        f'<span class="gauge gauge-{state}" title="{count} live of a budget of {max_active}{off}">'
        '<svg viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true" focusable="false">'
        '<rect class="g-track" x="0" y="1" width="100" height="8"/>'
        f'<rect class="g-within" x="0" y="1" width="{within_w}" height="8"/>'
        f'<rect class="g-over" x="{budget_x}" y="1" width="{over_w}" height="8"/>'
        f'<rect class="g-tick" x="{tick_x}" y="0" width="0.8" height="10"/>'
        "</svg>"
        f'<span class="gauge-text"><b>{count}</b> / {max_active}</span></span>'
    )


def retire_preview(count: int, max_active: int, enabled: bool, selected: int) -> str:
    """The live count after retiring ``selected`` of ``count`` members, against the budget:
    ``"After the retire: 9 → 7 of 6 (still over by 1)"``, ``"... (within budget)"`` or ``"... (budget off)"``.

    static/js/keyboard.js writes the same sentence as the selection changes (finding 5 of issue 12).
    """
    after = int(count) - int(selected)
    if not enabled:
        verdict = "budget off"
    elif after > max_active:
        verdict = f"still over by {after - max_active}"
    else:
        verdict = "within budget"
    return f"After the retire: {count} \u2192 {after} of {max_active} ({verdict})"


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
    docs/decisions.md, "The record".
    """
    if not code or code == NO_REASON_CODE:
        return NO_REASON_CODE
    try:
        return ReasonCode(code).label
    except ValueError:
        return code


def break_after(text: str, marks: str) -> SafeString:
    """``text`` escaped, with a line-break opportunity (``<wbr>``) after each character of ``marks``: a
    narrow column then breaks ``entity:desk.adbuy/invoice_capture`` after ``:`` or ``/``, not mid-word."""
    *head, tail = re.split(f"(?<=[{re.escape(marks)}])", text)
    return SafeString("".join(f"{stdlib_html.escape(part)}<wbr>" for part in head) + stdlib_html.escape(tail))


# The words shown for each action; the record's term stays beside them (``action_html``).
ACTION_LABELS = {
    Action.RETIRE: "retire a lesson",
    Action.RESTORE: "restore a lesson",
    Action.APPROVE: "approve a consolidation",
    Action.REJECT: "reject a draft",
    Action.ROLLBACK: "roll back a consolidation",
    Action.SET_BUDGET: "change the budget",
}
ACTION_HTML = (
    '<span class="action-name"><span class="action-label">{label}</span>'
    ' <code class="action-term">{term}</code></span>'
)


def action_label(action: str) -> str:
    """The words shown for a decision's action (``approve_consolidation`` -> ``approve a consolidation``); a
    value the list does not know is shown as it is. docs/decisions.md, "The decision log page"."""
    return ACTION_LABELS.get(action, action)


def action_term(action: str) -> str:
    """The label with the record's term in brackets, for plain text (a refusal's message, a filter's
    option): ``approve a consolidation (approve_consolidation)``."""
    label = action_label(action)
    return label if label == action else f"{label} ({action})"


def action_html(action: str) -> SafeString:
    """The label, then the record's term as small code text, breakable after each ``_`` (the term is what
    the exports, the API and hosts read): every page that names an action shows it this way."""
    return html_format(ACTION_HTML, label=action_label(action), term=break_after(str(action), "_"))


def verdict_badge(verdict: str | None) -> str:
    """``<span class="badge v-…">verdict</span>``, or the outlined ``not applied by the loop``."""
    if not verdict:
        return format_html(
            '<span class="badge {}" title="{}">{}</span>',
            VERDICT_NOT_APPLIED_CLASS,
            JARGON[NOT_APPLIED],
            NOT_APPLIED,
        )
    css = VERDICT_CLASSES.get(verdict, VERDICT_UNKNOWN_CLASS)
    if verdict in JARGON:
        return format_html('<span class="badge {}" title="{}">{}</span>', css, JARGON[verdict], verdict)
    return format_html('<span class="badge {}">{}</span>', css, verdict)


def jargon(term: str, text: str = "") -> str:
    """``<abbr title="what it means">term</abbr>`` for one of the ``JARGON`` words (``text`` shown instead
    of the term when given)."""
    return format_html('<abbr title="{}">{}</abbr>', JARGON[term], text or term)


def jargon_not_applied() -> str:
    """``jargon`` of the words a lesson without a verdict shows (``lessons.core.piles.NOT_APPLIED``)."""
    return jargon(NOT_APPLIED)


def jargon_title(term: str) -> str:
    """What one of the ``JARGON`` words means ("" for any other word): for a ``title`` attribute."""
    return JARGON.get(term, "")


def iso(moment: datetime | None) -> str:
    """UTC ISO 8601 with milliseconds and ``Z`` (``lessons.core.text.format_datetime``); "" for None."""
    return format_datetime(moment) if moment else ""


def utc_date(moment: datetime | None) -> str:
    """The UTC calendar date, ``YYYY-MM-DD``."""
    return format_datetime(moment)[:10] if moment else ""


def dash(value) -> str:
    """A count, with zero (or None) shown as an em dash so the non-zero counts stand out."""
    return "\u2014" if not value else str(value)


NOT_SHOWN_YET = "not shown in any session yet"
# Retiring a lesson a pending draft supersedes makes the draft stale; the notice says which (the pile page
# since issue 12's finding 1, the lesson page since a newcomer found it silent).
STALE_NOTICE = (
    " Draft{s} {drafts} became stale: {it} supersede{verb} a lesson retired now, and cannot be approved"
    " until the retired lessons {it} supersede{verb} are restored."
)


def stale_notice(drafts: list[str]) -> str:
    """``STALE_NOTICE`` for the ids of the drafts a retire made stale (in their order); "" for none."""
    if not drafts:
        return ""
    one = len(drafts) == 1
    return STALE_NOTICE.format(
        s="" if one else "s", drafts=", ".join(drafts), it="it" if one else "they", verb="s" if one else ""
    )


def counted(n: int, word: str) -> str:
    """``n`` and ``word``, plural unless ``n`` is 1: ``counted(1, "session")`` is ``"1 session"``,
    ``counted(3, "session")`` ``"3 sessions"`` (English plurals in ``s``; no "session(s)")."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def shown_in(sessions: int | None) -> str:
    """The one wording of a lesson's ``sessions_shown`` (docs/piles-and-recurrence.md, "The seven counts") on
    every
    page: ``shown in 1 session``, ``shown in 12 sessions``, or ``not shown in any session yet`` for 0."""
    if not sessions:
        return NOT_SHOWN_YET
    return f"shown in {counted(sessions, 'session')}"


def horizon_days(ms: int | None) -> str:
    """A horizon in milliseconds as days: ``1 d``, ``7 d``, ``0.5 d``; "" when unknown."""
    if ms is None:
        return ""
    days = ms / MS_PER_DAY
    return f"{days:g} d" if days < 100 else f"{round(days)} d"


def html_format(template: str, **values) -> SafeString:
    """``format_html`` with named fields (``template.format(**values)``), each value escaped by ``esc``
    (``conditional_escape``, the common types first) without ``format_html``'s per-argument lazy-string
    checks: for markup built per row of a long page (the pile's members, the log's cells; issue 10).
    ``SafeString(...)`` is ``mark_safe`` without its lazy wrapper."""
    return SafeString(template.format(**{k: esc(v) for k, v in values.items()}))
