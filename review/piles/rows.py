"""The pile page's member table body, built once in Python: the page's template prints each fact (its head
row and its members' rows) as one value instead of running ~25 template nodes, tags and filters per
member (issue 10: rendering 200 members was most of the page's ~350 ms at 1M lessons).

The markup: each fact's head (its label and size, an umbrella's covered facts, why its members are one
group, who corrected it, and for reviewers the keeper, "keep one of this fact" and "same fact as…"), and
for each member the checkbox, the short hash linking to the lesson (the suggested keeper tagged, "take
out" for reviewers), the pending-draft warning, the text cut into marked
pieces (``lessons.core.groups.marked_pieces``), the verdict history, the created time, origin and kind,
the latest-verdict badge and the recurrence block. That block is the markup of the shared template
``review/shared/_recurrence.html`` (the lesson pages include it; ``recurrence_block`` writes the same
bytes, a test compares them), built once per distinct set of counts (most members of a pile have the
same zeros). Every value is escaped (``html_format``, the escaping of ``format_html``); lesson text is never
marked safe as it is. docs/piles-and-recurrence.md, "Piles" rules 5-6;
docs/piles-and-recurrence.md, "Recurrence"; docs/reviewing.md ("Facts").
"""

from __future__ import annotations

import html
from collections.abc import Callable
from datetime import datetime

from django.template.defaultfilters import pluralize
from django.urls import reverse
from django.utils.formats import localize
from django.utils.safestring import SafeString

from lessons.core.facts import Fact
from lessons.core.recurrence import has_evidence, is_recurring
from lessons.core.text import hash8
from review.piles.selectors import EntityLesson, FactRows, HistoryVerdict, PileDetail
from review.web.format import (
    dash,
    horizon_days,
    html_format,
    iso,
    relative_age,
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
    '\n        <td class="hash"><a href="{url}" title="{hash}">{short}</a>{keeper_tag}{take_out}</td>'
    '\n        <td class="text">'
    "\n          {warning}"
    '\n          <div class="lesson-text">{text}</div>'
    "\n          {history}"
    "\n        </td>"
    '\n        <td class="nowrap"><time datetime="{created_iso}">{created_day}</time>'
    '<br><span class="muted small">{age}</span></td>'
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
# One fact's part of the table body: its head row and its members' rows.
GROUP = "\n    {head}\n    {rows}\n    "
HEAD = (
    '\n      <tr class="fact-head{multi}" data-group="{name}" data-fact-head id="fact-{name}">'
    '\n        <td colspan="{colspan}">'
    '\n          <p class="fact-line"><b class="fact-label">{label}</b>'
    ' <span class="fact-size">{size}</span>{marked}</p>'
    "\n          {covers}"
    '\n          <p class="why muted small">{why}</p>'
    "\n          {tools}"
    "\n        </td>"
    "\n      </tr>\n    "
)
FACT_SIZE = "{n} rule{s} state{v} this fact"
UMBRELLA_SIZE = "umbrella: one rule stating {n} of the pile's facts"
UMBRELLA_BADGE = '<span class="badge umbrella">umbrella</span> '
MARKED_BY = (
    ' <span class="badge marked" title="a reviewer\'s mark decided this grouping">corrected by {users}</span>'
)
COVERS = '<p class="covers small">covers {links}</p>'
COVER_LINK = '<a href="#fact-{name}">{label}</a>'
WHY_ANCHORS = "shared anchors {marks}"
WHY_WORDS = "shared words {marks}"
WHY_SIMILARITY = "similarity {value}"
WHY_ALONE = "restates no other rule of the pile"
WHY_UMBRELLA = "states the anchors of several facts"
TOOLS = '\n          <div class="fact-tools">{keeper}{merge}</div>'
KEEPER = (
    '\n          <label class="keeper small">Keeper'
    ' <select name="keepers" data-keeper aria-label="Keeper of {label}">{options}</select></label>'
    "{keep}"
)
KEEPER_OPTION = '<option value="{hash}"{selected}>{short} · {verdict}{suggested}</option>'
KEEP_ONE = (
    '\n          <a class="btn btn-small keep-one" href="?{entity_qs}&amp;keep={name}#retire-form"'
    '\n             data-keep-one="{others}"'
    '\n             aria-keyshortcuts="o"'
    '\n             aria-label="Keep one of this fact: keep {keep}, select the other {n} to retire">Keep one'
    ' of this fact <kbd aria-hidden="true">o</kbd></a>'
)
MERGE_LINK = (
    '\n          <a class="btn btn-small merge-link" href="?{entity_qs}&amp;merge={name}#merge-form"'
    ' data-merge="{name}" aria-keyshortcuts="m" aria-label="Mark {label} as the same fact as another">'
    'Same fact as… <kbd aria-hidden="true">m</kbd></a>'
)
TAKE_OUT = (
    '<br><a class="take-out small" href="?{entity_qs}&amp;split={hash}#split-form" data-split="{hash}"'
    ' aria-keyshortcuts="s" aria-label="Take {short} out as a fact of its own">take out</a>'
)
KEEPER_TAG = '<br><span class="keeper-tag small">suggested keeper</span>'
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
    shown. Every value escaped. docs/piles-and-recurrence.md, "The seven counts"."""
    shown = shown_in(counts["sessions_shown"])
    sessions = counts["recurred_sessions"]
    badge = html_format(RECURRING, sessions=localize(sessions)) if is_recurring(counts) else ""
    if not has_evidence(counts):
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


def age_text(created_at: datetime, now: datetime) -> str:
    """A member's age as its row shows it: "10 months old", "3 days old", "today" (``relative_age``)."""
    age = relative_age(created_at, now)
    return age if age in ("today", "in the future") else f"{age} old"


def _marks(words) -> SafeString:
    return SafeString(" ".join(MARKED.format(html.escape(word)) for word in words))


def fact_why(fact: Fact) -> SafeString:
    """Why the members are one group: the shared anchors and words (marked) and the lowest pairwise
    similarity; for a group of one, that it restates no other rule (or, an umbrella, what it states)."""
    parts = []
    if fact.anchors:
        parts.append(html_format(WHY_ANCHORS, marks=_marks(fact.anchors)))
    if fact.words:
        parts.append(html_format(WHY_WORDS, marks=_marks(fact.words)))
    if fact.similarity is not None:
        parts.append(html_format(WHY_SIMILARITY, value=f"{fact.similarity:.2f}"))
    if len(fact.members) < 2:
        parts.insert(0, SafeString(WHY_UMBRELLA if fact.umbrella else WHY_ALONE))
    return SafeString("; ".join(parts))


def fact_size(fact: Fact) -> str:
    """ "2 rules state this fact", "1 rule states this fact", or an umbrella's "umbrella: one rule stating 3
    of the pile's facts"."""
    if fact.umbrella:
        return UMBRELLA_SIZE.format(n=len(fact.covers))
    n = len(fact.members)
    return FACT_SIZE.format(n=n, s="" if n == 1 else "s", v="s" if n == 1 else "")


def _keeper_html(rows: FactRows, *, entity_qs: str, keepers: frozenset[str]) -> SafeString:
    fact = rows.fact
    kept = next((h for h in fact.members if h in keepers), fact.keep)
    options = SafeString(
        "".join(
            html_format(
                KEEPER_OPTION,
                hash=x.hash,
                selected=SafeString(" selected" if x.hash == kept else ""),
                short=hash8(x.hash),
                verdict=x.latest_verdict or "not measured",
                suggested=" · suggested" if x.hash == fact.keep else "",
            )
            for x in rows.lessons
        )
    )
    others = [h for h in fact.members if h != kept]
    keep = html_format(
        KEEP_ONE,
        entity_qs=entity_qs,
        name=fact.name,
        others=" ".join(others),
        keep=hash8(kept),
        n=len(others),
    )
    return html_format(KEEPER, options=options, keep=keep, label=fact.label or f"fact {hash8(fact.name)}")


def _head_html(rows: FactRows, *, form, entity_qs: str, keepers: frozenset[str]) -> SafeString:
    fact = rows.fact
    tools = ""
    if form is not None:
        keeper = ""
        if not fact.umbrella and len(fact.members) > 1:
            keeper = _keeper_html(rows, entity_qs=entity_qs, keepers=keepers)
        merge = html_format(MERGE_LINK, entity_qs=entity_qs, name=fact.name, label=rows.label)
        tools = html_format(TOOLS, keeper=keeper, merge=merge)
    covers = ""
    if rows.covers:
        links = SafeString(
            ", ".join(html_format(COVER_LINK, name=n, label=label) for n, label in rows.covers)
        )
        covers = html_format(COVERS, links=links)
    marked = html_format(MARKED_BY, users=", ".join(rows.marked_by)) if rows.marks and fact.marked else ""
    badge = SafeString(UMBRELLA_BADGE if fact.umbrella else "")
    label = html_format("{badge}{label}", badge=badge, label=rows.label)
    return html_format(
        HEAD,
        multi=" group-head" if len(fact.members) > 1 else "",
        name=fact.name,
        colspan=7 if form is not None else 6,
        label=label,
        size=fact_size(fact),
        marked=marked,
        covers=covers,
        why=fact_why(fact),
        tools=tools,
    )


def member_rows(
    detail: PileDetail,
    *,
    form,
    selected: frozenset[str],
    entity_qs: str,
    now: datetime,
    keepers: frozenset[str] = frozenset(),
) -> SafeString:
    """The member table's body: ``detail.facts`` in the page's order, each fact's head row (its label,
    size, why, and for reviewers the keeper, "keep one of this fact" and "same fact as…") and its members'
    rows, as one value (a template loop over 160 groups cost ~2 ms more). No query.

    ``form``: the retire form, or ``None`` (no checkboxes, no keeper, no "keep one", no mark links, no
    pending-draft warnings: viewers); ``selected``: the hashes whose checkboxes are checked; ``entity_qs``:
    the entity's query string (the links that work without JavaScript); ``now``: for each member's age
    (UTC); ``keepers``: the keepers the reviewer picked (each fact's suggested keeper otherwise).
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

    def row(lesson: EntityLesson, fact: Fact) -> SafeString:
        # ROW.format with each value escaped here: what html_format does, without testing each value's type.
        hash_ = html.escape(lesson.hash)
        short = html.escape(hash8(lesson.hash))
        multi = len(fact.members) > 1
        check = take_out = ""
        if form is not None:
            checked = " checked" if lesson.hash in selected else ""
            check = CHECK.format(hash=hash_, short=short, checked=checked)
            if multi:
                take_out = TAKE_OUT.format(entity_qs=html.escape(entity_qs), hash=hash_, short=short)
        drafts = lesson.pending_drafts
        created = html.escape(iso(lesson.created_at))
        return SafeString(
            ROW.format(
                hash=hash_,
                group=html.escape(fact.name),
                in_group=' class="in-group"' if multi else "",
                check=check,
                url=html.escape(url(lesson.hash)),
                short=short,
                keeper_tag=KEEPER_TAG if multi and lesson.hash == fact.keep else "",
                take_out=take_out,
                warning=_warning_html(drafts) if drafts and form is not None else "",
                text=_pieces_html(lesson),
                history=_history_html(lesson, badge),
                created_iso=created,
                created_day=created[:10],  # utc_date: the date part of the same ISO time
                age=html.escape(age_text(lesson.created_at, now)),
                origin=html.escape(lesson.origin or "—"),
                kind=html.escape(lesson.kind),
                badge=badge(lesson.latest_verdict),
                recurrence=recurrence_html(lesson.counts),
            )
        )

    def fact_html(rows: FactRows) -> SafeString:
        body = SafeString("".join(row(x, rows.fact) for x in rows.lessons))  # each row escaped by html_format
        head = _head_html(rows, form=form, entity_qs=entity_qs, keepers=keepers)
        return html_format(GROUP, head=head, rows=body)

    return SafeString("".join(fact_html(f) for f in detail.facts))  # each fact escaped by html_format


def selected_hashes(form) -> frozenset[str]:
    """The members the retire form has selected (its bound or initial ``members``), read once per page."""
    return frozenset(form["members"].value() or ()) if form is not None else frozenset()
