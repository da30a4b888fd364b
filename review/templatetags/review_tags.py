"""The template library of the reviewer pages: thin wrappers over ``review.web`` (display helpers in
``format``, links in ``links``) and ``review.roles``. Python code imports those modules, not this one.
"""

from __future__ import annotations

from django import template

from lessons.core.piles import pile_target
from lessons.core.recurrence import has_evidence, is_recurring
from lessons.core.text import hash8
from lessons.core.verdicts import VERDICT_MIX
from review.roles import user_role
from review.web.format import (
    action_html,
    age,
    budget_gauge,
    dash,
    horizon_days,
    iso,
    jargon,
    jargon_not_applied,
    jargon_title,
    reason_label,
    retire_preview,
    shown_in,
    utc_date,
    verdict_badge,
)
from review.web.links import draft_url, link_decisions, pile_href, target_breaks

register = template.Library()

register.filter(target_breaks)
register.simple_tag(age)
register.simple_tag(budget_gauge)
register.simple_tag(draft_url)
register.simple_tag(jargon)
register.simple_tag(jargon_not_applied)
register.simple_tag(verdict_badge)
register.simple_tag(pile_href, name="pile_url")
register.simple_tag(retire_preview)
register.simple_tag(pile_target)
register.filter("corrected", has_evidence)
register.filter(action_html)
register.filter(dash)
register.filter(hash8)
register.filter(horizon_days)
register.filter(iso)
register.filter(jargon_title)
register.filter(link_decisions)
register.filter(reason_label)
register.filter("recurring", is_recurring)
register.filter(shown_in)
register.filter(user_role)
register.filter(utc_date)


@register.filter
def coverage_class(verdict: str | None) -> str:
    """A coverage-matrix member's class for its verdict: `` cov-held``, `` cov-regressed``, `` cov-drifted``
    (the verdict mix, lessons/core/verdicts.py), else ``""``."""
    return f" cov-{verdict}" if verdict in VERDICT_MIX else ""
