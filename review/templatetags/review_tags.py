"""Small display helpers of the reviewer pages: verdict badges, the budget gauge, ages, UTC times, safe links.

Everything that reaches HTML goes through ``format_html`` (escaping every argument); no lesson text is
ever marked safe. spec: piles.md rule 6 (verdict shown), interchange.md "Framing" (UTC with milliseconds).
"""

from __future__ import annotations

import re
from datetime import datetime

from django import template
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from lessons.core.piles import NOT_APPLIED
from lessons.core.recurrence import RECURRING_MIN_SESSIONS
from lessons.core.text import format_datetime
from review.roles import ADMIN, PERM_DECIDE, PERM_SET_BUDGET, PERM_VIEW, REVIEWER, VIEWER
from review.web.format import age, budget_gauge, reason_label
from review.web.links import draft_url, pile_href

register = template.Library()

# Verdict -> CSS class. Regressed and drifted stand out; held is quiet, never green-loud; a verdict
# this table does not know is neutral grey (interchange.md lets hosts send other verdict words).
VERDICT_CLASSES = {
    "held": "v-held",
    "regressed": "v-regressed",
    "drifted": "v-drifted",
    "held_costlier": "v-costlier",
    "unmeasured": "v-unmeasured",
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


@register.simple_tag
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


@register.simple_tag
def jargon(term: str, text: str = "") -> str:
    """``<abbr title="what it means">term</abbr>`` for one of the ``JARGON`` words (``text`` shown instead
    of the term when given)."""
    return format_html('<abbr title="{}">{}</abbr>', JARGON[term], text or term)


@register.simple_tag
def jargon_not_applied() -> str:
    """``jargon`` of the words a lesson without a verdict shows (``lessons.core.piles.NOT_APPLIED``)."""
    return jargon(NOT_APPLIED)


@register.filter
def jargon_title(term: str) -> str:
    """What one of the ``JARGON`` words means ("" for any other word): for a ``title`` attribute."""
    return JARGON.get(term, "")


register.simple_tag(budget_gauge)
register.simple_tag(age)
register.filter("reason_label", reason_label)
register.simple_tag(pile_href, name="pile_url")
register.simple_tag(draft_url)


@register.filter
def iso(moment: datetime | None) -> str:
    """UTC ISO 8601 with milliseconds and ``Z`` (``lessons.core.text.format_datetime``); "" for None."""
    return format_datetime(moment) if moment else ""


@register.filter
def utc_date(moment: datetime | None) -> str:
    """The UTC calendar date, ``YYYY-MM-DD``."""
    return format_datetime(moment)[:10] if moment else ""


@register.filter
def dash(value) -> str:
    """A count, with zero (or None) shown as an em dash so the non-zero counts stand out."""
    return "\u2014" if not value else str(value)


@register.filter
def horizon_days(ms: int | None) -> str:
    """A horizon in milliseconds as days: ``1 d``, ``7 d``, ``0.5 d``; "" when unknown."""
    if ms is None:
        return ""
    days = ms / MS_PER_DAY
    return f"{days:g} d" if days < 100 else f"{round(days)} d"


@register.filter
def hash8(value: str | None) -> str:
    """The first 8 characters of a hash (piles.md rule 8 shows members this way)."""
    return (value or "")[:8]


@register.filter
def user_role(user) -> str:
    """The strongest role a user's permissions give: ``admin``, ``reviewer``, ``viewer`` or ``none``."""
    if user.has_perm(PERM_SET_BUDGET):
        return ADMIN
    if user.has_perm(PERM_DECIDE):
        return REVIEWER
    if user.has_perm(PERM_VIEW):
        return VIEWER
    return "none"


# "decision #3", "Decision #3", "decisions #3, #4": the references a success message makes to the log.
_DECISION_REFS = re.compile(r"([Dd]ecisions? )(#\d+(?:, #\d+)*)")


@register.filter
def link_decisions(message) -> str:
    """A message with each "decision #N" linked to the decision log filtered to that decision
    (``/decisions/?seq=N``). Everything else is escaped (a message may quote a host's draft id)."""
    text = str(message)
    log = reverse("review:decisions")
    parts: list = []
    last = 0
    for match in _DECISION_REFS.finditer(text):
        parts += [text[last : match.start()], match.group(1)]
        refs = [ref.removeprefix("#") for ref in match.group(2).split(", ")]
        parts.append(format_html_join(", ", '<a href="{}?seq={}">#{}</a>', ((log, seq, seq) for seq in refs)))
        last = match.end()
    parts.append(text[last:])
    return format_html_join("", "{}", ((part,) for part in parts))


@register.filter
def recurring(counts: dict | None) -> bool:
    """recurrence.md: a lesson is recurring when ``recurred_sessions >= 2``."""
    return bool(counts) and counts.get("recurred_sessions", 0) >= RECURRING_MIN_SESSIONS


CORRECTION_COUNTS = ("recurred", "during", "unknown", "ambiguous", "earlier_version")


@register.filter
def corrected(counts: dict | None) -> bool:
    """Whether any correction was attributed to the lesson (else: "no observed correction")."""
    return bool(counts) and any(counts.get(k, 0) for k in CORRECTION_COUNTS)
