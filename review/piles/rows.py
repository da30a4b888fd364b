"""The pile page's member table body, built once in Python: the page's template prints each restatement
group (its head row and its members' rows) as one value instead of running ~25 template nodes, tags and
filters per member (issue 10: rendering 200 members was most of the page's ~350 ms at 1M lessons).

The markup is the one the template wrote, byte for byte (the demo corpus's and the 1M set's pages diff
clean): the group's head (shared words, "keep one of this group"), and for each member the checkbox,
the short hash linking to the lesson, the pending-draft warning, the text cut into marked
pieces (``lessons.core.groups.marked_pieces``), the verdict history, the created time, origin and kind,
the latest-verdict badge and the recurrence block. That block is the markup of the shared template
``review/shared/_recurrence.html`` (the lesson pages include it; ``recurrence_block`` writes the same
bytes, a test compares them), built once per distinct set of counts (most members of a pile have the
same zeros). Every value is escaped (``html_format``, the escaping of ``format_html``); lesson text is never
marked safe as it is. spec: piles.md rules 5-6;
recurrence.md; the restatement groups of issue 12.
"""

from __future__ import annotations

import html
from collections.abc import Callable

from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils.formats import localize
from django.utils.safestring import SafeString

from review.piles.selectors import EntityLesson, GroupRows, HistoryVerdict, PileDetail
from review.web.format import (
    corrected,
    dash,
    hash8,
    horizon_days,
    html_format,
    iso,
    recurring,
    shown_in,
    verdict_badge,
)

RECURRENCE_TEMPLATE = "review/shared/_recurrence.html"  # the lesson pages include it; recurrence_block here
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
METRIC = '<span class="mono">{}</span>'
HISTORY_ITEM = (
    '\n              <li>{badge} {metric}{values}{horizon} · <span class="mono small">{at}</span></li>'
    "\n              "
)


# The markup of RECURRENCE_TEMPLATE, written here (recurrence_block); the lesson pages include the template.
RECURRENCE = '\n<div class="recurrence">\n  {badge}\n  {body}\n</div>\n'
RECURRING = (
    '<span class="badge recurring" title="corrected on its topic after it was shown, in {sessions} sessions">'
    "recurring</span>"
)
NO_CORRECTION = (
    '\n  <p class="no-correction">no observed correction<br><span class="muted small">{shown}</span></p>\n  '
)
CORRECTIONS = (
    '\n  <p class="shown-in small">{shown}</p>'
    '\n  <dl class="counts">'
    "\n    <div><dt>recurred</dt><dd>{recurred}{recurred_in}</dd></div>"
    "\n    <div><dt>during</dt><dd>{during}</dd></div>"
    "\n    <div><dt>unknown</dt><dd>{unknown}</dd></div>"
    "\n    <div><dt>ambiguous</dt><dd>{ambiguous}</dd></div>"
    "\n    <div><dt>earlier version</dt><dd>{earlier_version}</dd></div>"
    "\n  </dl>\n  "
)
RECURRED_IN = ' <span class="muted">in {sessions} session{s}</span>'


def recurrence_block(counts: dict[str, int]) -> SafeString:
    """What ``review/shared/_recurrence.html`` renders for ``counts`` (the seven recurrence counts, as
    ``recurrence_dict`` gives them), byte for byte, built without the template engine: the recurring
    badge, then the correction counts (zeros as dashes) or "no observed correction", and where it was
    shown. Every value escaped. spec: recurrence.md, "Per-lesson counts"."""
    shown = shown_in(counts["sessions_shown"])
    sessions = counts["recurred_sessions"]
    badge = html_format(RECURRING, sessions=localize(sessions)) if recurring(counts) else ""
    if not corrected(counts):
        return html_format(RECURRENCE, badge=badge, body=html_format(NO_CORRECTION, shown=shown))
    recurred_in = ""
    if counts["recurred"]:
        recurred_in = html_format(RECURRED_IN, sessions=localize(sessions), s=pluralize(sessions))
    body = html_format(
        CORRECTIONS,
        shown=shown,
        recurred=dash(counts["recurred"]),
        recurred_in=recurred_in,
        **{name: dash(counts[name]) for name in ("during", "unknown", "ambiguous", "earlier_version")},
    )
    return html_format(RECURRENCE, badge=badge, body=body)


def _pieces_html(lesson: EntityLesson) -> SafeString:
    pieces = (MARKED.format(html.escape(p)) if shared else html.escape(p) for p, shared in lesson.pieces)
    return SafeString("".join(pieces))


def _history_item(v: HistoryVerdict, badge: Callable[[str | None], SafeString]) -> SafeString:
    # The pieces as format_html built them, escaped by html.escape (Django's escape) without its lazy-string
    # checks: a pile of 200 members shows ~120 verdicts (issue 10).
    metric = METRIC.format(html.escape(v.metric)) if v.metric else ""
    values = ""
    if v.baseline is not None or v.current is not None:
        baseline = "?" if v.baseline is None else html.escape(localize(v.baseline))
        current = "?" if v.current is None else html.escape(localize(v.current))
        values = f" {baseline} → {current}"
    horizon = f" · {html.escape(horizon_days(v.horizon_ms))}" if v.horizon_ms is not None else ""
    return html_format(
        HISTORY_ITEM,
        badge=badge(v.verdict),
        metric=SafeString(metric),
        values=SafeString(values),
        horizon=SafeString(horizon),
        at=iso(v.measured_at),
    )


def _history_html(lesson: EntityLesson, badge: Callable[[str | None], SafeString]) -> SafeString:
    if not lesson.history:
        return SafeString("")
    items = SafeString("".join(_history_item(v, badge) for v in lesson.history))  # each item escaped
    return html_format(HISTORY, n=len(lesson.history), items=items)


def _warning_html(drafts: list[str]) -> SafeString:
    one = len(drafts) == 1
    return html_format(WARNING, s="" if one else "s", drafts=", ".join(drafts), them="it" if one else "them")


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
        keep = html_format(KEEP_ONE, entity_qs=entity_qs, name=rule.name, others=others, keep=short, n=n)
    words = SafeString(" ".join(MARKED.format(html.escape(word)) for word in group.shared_words))
    colspan = 7 if form is not None else 6
    return html_format(HEAD, name=rule.name, colspan=colspan, size=len(group.lessons), words=words, keep=keep)


def member_rows(detail: PileDetail, *, form, selected: frozenset[str], entity_qs: str) -> SafeString:
    """The member table's body: ``detail.groups`` in the page's order, each group's head row and its
    members' rows, as one value (a template loop over 160 groups cost ~2 ms more). No query.

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
            recurrence[key] = recurrence_block(counts)
        return recurrence[key]

    def row(lesson: EntityLesson, group: GroupRows) -> SafeString:
        # ROW.format with each value escaped here: what html_format does, without testing each value's type.
        hash_ = html.escape(lesson.hash)
        short = html.escape(hash8(lesson.hash))
        check = ""
        if form is not None:
            checked = " checked" if lesson.hash in selected else ""
            check = CHECK.format(hash=hash_, short=short, checked=checked)
        drafts = lesson.pending_drafts
        created = html.escape(iso(lesson.created_at))
        return SafeString(
            ROW.format(
                hash=hash_,
                group=html.escape(group.group.name),
                in_group=' class="in-group"' if len(group.lessons) > 1 else "",
                check=check,
                url=html.escape(url(lesson.hash)),
                short=short,
                warning=_warning_html(drafts) if drafts and form is not None else "",
                text=_pieces_html(lesson),
                history=_history_html(lesson, badge),
                created_iso=created,
                created_day=created[:10],  # utc_date: the date part of the same ISO time
                origin=html.escape(lesson.origin or "—"),
                kind=html.escape(lesson.kind),
                badge=badge(lesson.latest_verdict),
                recurrence=recurrence_html(lesson.counts),
            )
        )

    def group_html(group: GroupRows) -> SafeString:
        rows = SafeString("".join(row(x, group) for x in group.lessons))  # each row escaped by html_format
        return html_format(GROUP, head=_head_html(group, form=form, entity_qs=entity_qs), rows=rows)

    return SafeString("".join(group_html(g) for g in detail.groups))  # each group escaped by html_format


def selected_hashes(form) -> frozenset[str]:
    """The members the retire form has selected (its bound or initial ``members``), read once per page."""
    return frozenset(form["members"].value() or ()) if form is not None else frozenset()
