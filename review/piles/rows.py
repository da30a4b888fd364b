"""The pile page's member table body, built once in Python: the page's template prints each restatement
group (its head row and its members' rows) as one value instead of running ~25 template nodes, tags and
filters per member (issue 10: rendering 200 members was most of the page's ~350 ms at 1M lessons).

The markup is the one the template wrote, byte for byte (the demo corpus's and the 1M set's pages diff
clean): the group's head (shared words, "keep one of this group"), and for each member the checkbox,
the short hash linking to the lesson, the pending-draft warning, the text cut into marked
pieces (``lessons.core.groups.marked_pieces``), the verdict history, the created time, origin and kind,
the latest-verdict badge and the recurrence block. That block is the shared template
``review/shared/_recurrence.html``, rendered once per distinct set of counts (most members of a pile
have the same zeros), so every page shows one recurrence markup. Every value is escaped (``_html``, the
escaping of ``format_html``); lesson text is never marked safe as it is. spec: piles.md rules 5-6;
recurrence.md; the restatement groups of issue 12.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.formats import localize
from django.utils.html import format_html
from django.utils.safestring import SafeData, SafeString, mark_safe

from lessons.models import Lesson, Verdict
from review.piles.selectors import GroupRows, PileDetail
from review.web.format import hash8, horizon_days, iso, verdict_badge

RECURRENCE_TEMPLATE = "review/shared/_recurrence.html"
MARKED = '<mark class="shared">{}</mark>'  # a word the member shares with its group
_SLOT = "0" * 64  # stands for the hash in the one reversed lesson URL
# One member's row; {check}, {warning}, {history} are "" or HTML built below.
ROW = (
    '\n      <tr data-hash="{hash}" data-row="{hash}" data-group="{group}"{in_group}>'
    "\n        {check}"
    '\n        <td class="hash"><a href="{url}" title="{hash}">{short}</a></td>'
    '\n        <td class="text">'
    "\n          {warning}"
    '\n          <div class="lesson-text">{text}</div>'
    "\n          {history}"
    "\n        </td>"
    '\n        <td class="nowrap"><time datetime="{created_iso}">{created_day}</time></td>'
    '\n        <td>{origin}<br><span class="muted small">{kind}</span></td>'
    "\n        <td>{badge}</td>"
    '\n        <td class="rec">{recurrence}</td>'
    "\n      </tr>\n    "
)
CHECK = (
    '<td class="check"><input type="checkbox" name="members" value="{hash}" id="m-{short}"'
    ' aria-label="Select {short}"{checked}></td>'
)
WARNING = (
    '<p class="draft-warn small" data-testid="draft-warn">superseded by pending draft{s} {drafts}:'
    " retiring it makes {them} stale</p>"
)
HISTORY = (
    '\n          <details class="history">'
    "\n            <summary>Verdict history ({n})</summary>"
    '\n            <ul class="history-list">'
    "\n              {items}"
    "\n            </ul>"
    "\n          </details>"
    "\n          "
)
# One group's part of the table body: its head row (groups of two or more) and its members' rows.
GROUP = "\n    {head}\n    {rows}\n    "
HEAD = (
    '\n      <tr class="group-head" data-group="{name}">'
    '\n        <td colspan="{colspan}">'
    "\n          <b>{size} lessons restate one another</b>"
    '\n          <span class="muted small">shared words:</span> {words}'
    "\n          {keep}"
    "\n        </td>"
    "\n      </tr>\n    "
)
KEEP_ONE = (
    '\n          <a class="btn btn-small keep-one" href="?{entity_qs}&amp;keep={name}#retire-form"'
    '\n             data-keep-one="{others}"'
    '\n             aria-keyshortcuts="o"'
    '\n             aria-label="Keep one of this group: keep {keep}, select the other {n} to retire">Keep one'
    ' of this group <kbd aria-hidden="true">o</kbd></a>'
    '\n          <span class="muted small">keeps <span class="mono">{keep}</span> (held, else measured, else'
    " not measured; then the newest) and selects the others</span>"
    "\n          "
)
HISTORY_ITEM = (
    '\n              <li>{badge} {metric}{values}{horizon} · <span class="mono small">{at}</span></li>'
    "\n              "
)


@dataclass(frozen=True)
class GroupView:
    """One restatement group of the member table: ``rows`` (``GroupRows``: the group and its lessons) and
    ``html``, its head row (when it has two members or more) and its members' rows."""

    rows: GroupRows
    html: SafeString


def _html(template: str, **values) -> SafeString:
    """``format_html(template, **values)`` without its per-argument lazy-string checks (a row has ~15
    values and a pile ~3,000): a ``SafeData`` value as it is, anything else ``html.escape``d, the same
    escaping as Django's ``escape``."""
    escaped = {k: v if isinstance(v, SafeData) else html.escape(str(v)) for k, v in values.items()}
    return mark_safe(template.format(**escaped))


def _pieces_html(lesson: Lesson) -> SafeString:
    pieces = (MARKED.format(html.escape(p)) if shared else html.escape(p) for p, shared in lesson.pieces)
    return mark_safe("".join(pieces))


def _history_item(v: Verdict, badge: Callable[[str | None], SafeString]) -> SafeString:
    has_values = v.baseline is not None or v.current is not None
    return _html(
        HISTORY_ITEM,
        badge=badge(v.verdict),
        metric=format_html('<span class="mono">{}</span>', v.metric) if v.metric else "",
        values=format_html(
            " {} → {}",
            "?" if v.baseline is None else localize(v.baseline),
            "?" if v.current is None else localize(v.current),
        )
        if has_values
        else "",
        horizon=format_html(" · {}", horizon_days(v.horizon_ms)) if v.horizon_ms is not None else "",
        at=iso(v.measured_at),
    )


def _history_html(lesson: Lesson, badge: Callable[[str | None], SafeString]) -> SafeString:
    if not lesson.history:
        return mark_safe("")
    items = mark_safe("".join(_history_item(v, badge) for v in lesson.history))  # each item escaped by _html
    return _html(HISTORY, n=len(lesson.history), items=items)


def _warning_html(drafts: list[str]) -> SafeString:
    one = len(drafts) == 1
    return _html(WARNING, s="" if one else "s", drafts=", ".join(drafts), them="it" if one else "them")


def _lesson_url(host: str) -> Callable[[str], str]:
    """``hash -> /lessons/<host>/<hash>/``. ``reverse`` runs once for the usual hex hashes (their URLs
    differ only by the hash); any other hash is reversed on its own, so it is quoted as ``reverse`` does."""
    before, after = reverse("review:lesson", args=[host, _SLOT]).rsplit(_SLOT, 1)

    def url(lesson_hash: str) -> str:
        if lesson_hash.isascii() and lesson_hash.isalnum():
            return f"{before}{lesson_hash}{after}"
        return reverse("review:lesson", args=[host, lesson_hash])

    return url


def _head_html(group: GroupRows, *, form, entity_qs: str) -> SafeString | str:
    if len(group.lessons) < 2:
        return ""
    rule = group.group
    keep = ""
    if form is not None:
        short = hash8(rule.keep)
        others = " ".join(rule.others)
        n = len(rule.others)
        keep = _html(KEEP_ONE, entity_qs=entity_qs, name=rule.name, others=others, keep=short, n=n)
    words = mark_safe(" ".join(MARKED.format(html.escape(word)) for word in group.shared_words))
    colspan = 7 if form is not None else 6
    return _html(HEAD, name=rule.name, colspan=colspan, size=len(group.lessons), words=words, keep=keep)


def member_groups(
    detail: PileDetail, *, form, selected: frozenset[str], entity_qs: str
) -> tuple[GroupView, ...]:
    """``detail.groups`` in the page's order, each as HTML: its head row and its members' rows. No query.

    ``form``: the retire form, or ``None`` (no checkboxes, no "keep one" link, no pending-draft warnings:
    viewers); ``selected``: the hashes whose checkboxes are checked; ``entity_qs``: the entity's query
    string (the "keep one" link without JavaScript).
    """
    url = _lesson_url(detail.host.name)
    recurrence: dict[tuple, SafeString] = {}
    badges: dict[str | None, SafeString] = {}

    def badge(verdict: str | None) -> SafeString:
        if verdict not in badges:
            badges[verdict] = verdict_badge(verdict)
        return badges[verdict]

    def recurrence_html(counts: dict) -> SafeString:
        key = tuple(counts.items())
        if key not in recurrence:
            recurrence[key] = mark_safe(render_to_string(RECURRENCE_TEMPLATE, {"counts": counts}))
        return recurrence[key]

    def row(lesson: Lesson, group: GroupRows) -> SafeString:
        short = hash8(lesson.hash)
        check = ""
        if form is not None:
            checked = mark_safe(" checked") if lesson.hash in selected else ""
            check = _html(CHECK, hash=lesson.hash, short=short, checked=checked)
        drafts = lesson.pending_drafts
        created = iso(lesson.created_at)
        return _html(
            ROW,
            hash=lesson.hash,
            group=group.group.name,
            in_group=mark_safe(' class="in-group"') if len(group.lessons) > 1 else "",
            check=check,
            url=url(lesson.hash),
            short=short,
            warning=_warning_html(drafts) if drafts and form is not None else "",
            text=_pieces_html(lesson),
            history=_history_html(lesson, badge),
            created_iso=created,
            created_day=created[:10],  # utc_date: the date part of the same ISO time
            origin=lesson.origin or "—",
            kind=lesson.kind,
            badge=badge(lesson.latest_verdict),
            recurrence=recurrence_html(lesson.counts),
        )

    def group_html(group: GroupRows) -> SafeString:
        rows = mark_safe("".join(row(x, group) for x in group.lessons))  # each row escaped by _html
        return _html(GROUP, head=_head_html(group, form=form, entity_qs=entity_qs), rows=rows)

    return tuple(GroupView(rows=g, html=group_html(g)) for g in detail.groups)


def selected_hashes(form) -> frozenset[str]:
    """The members the retire form has selected (its bound or initial ``members``), read once per page."""
    return frozenset(form["members"].value() or ()) if form is not None else frozenset()
