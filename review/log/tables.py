"""The decision log table (django-tables2). Cells are built with ``html_format`` (``format_html``'s escaping
of every value, without its per-argument lazy checks): reasons and entity names are user-written text.
docs/decisions.md, "The record".
"""

from __future__ import annotations

import html
from urllib.parse import urlencode

import django_tables2 as tables
from django.utils.safestring import SafeString

from lessons.core.piles import pile_target
from lessons.core.text import format_datetime, hash8
from review.log.evidence import evidence_html
from review.log.selectors import STATUS_APPLIED, STATUS_AWAITING, decision_host_status
from review.models import Action, Decision
from review.outcomes.format import decision_cell
from review.web.format import action_html, break_after, html_format, reason_label
from review.web.links import draft_url, host_url, lesson_url, pile_href, route_path
from review.web.tables import LeanTable

LESSON_ACTIONS = {Action.RETIRE, Action.RESTORE}
DRAFT_ACTIONS = {Action.APPROVE, Action.REJECT, Action.ROLLBACK}
# The cells' markup, filled by html_format (every value escaped): format_html per cell cost ~1 ms a page
# of 50 rows in its lazy-string checks (issue 10).
BATCH = (
    '{stamp}<br><a class="batch mono small" href="{href}" title="batch {batch}"'
    ' aria-label="Decisions of batch {short}">batch {short}</a>'
)
AWAITING = f'<span class="badge ack-waiting">{html.escape(STATUS_AWAITING)}</span>'
APPLIED = f'<span class="badge ack-applied">{html.escape(STATUS_APPLIED)}</span> {{stamp}}'
FAILED = '<span class="badge ack-failed">{status}</span> {stamp}: {detail}'
STAMP = (
    '<time datetime="{stamp}"><span class="nowrap">{day}</span><wbr>'
    '<span class="nowrap">T{clock}</span></time>'
)


def _link(url: str | None, text: str) -> SafeString:
    if url:
        return html_format('<a href="{url}">{text}</a>', url=url, text=text)
    return html_format("{text}", text=text)


def _stamp(moment) -> SafeString:
    """``<time>`` with the UTC ISO 8601 time, breakable between the date and the time of day."""
    stamp = format_datetime(moment)
    day, _, clock = stamp.partition("T")
    return html_format(STAMP, stamp=stamp, day=day, clock=clock)


class DecisionTable(LeanTable):
    """One row per decision; sortable by seq, time, actor, action and host (newest first by default).

    A ``LeanTable``: its 50 rows x 9 cells are built in Python (at 1M decisions django-tables2's per-cell
    template rendering was most of the log page's time; issue 10).
    """

    seq = tables.Column(verbose_name="#")
    # Every sort ends in seq (unique), so equal values keep a stable order.
    # The time and, under it, the batch (the records of one submission), in one column: a column of its
    # own would widen the log past a 1024 px window.
    at = tables.Column(verbose_name="At (UTC) · batch", order_by=("at", "seq"))
    actor = tables.Column(order_by=("actor", "seq"))
    action = tables.Column(order_by=("action", "seq"))
    host = tables.Column(order_by=("host", "seq"))
    target = tables.Column(empty_values=(), orderable=False, verbose_name="Acted on")
    reason = tables.Column(empty_values=(), orderable=False)
    evidence = tables.Column(empty_values=(), orderable=False)
    status = tables.Column(empty_values=(), orderable=False, verbose_name="Host status")

    class Meta:
        model = Decision
        fields = ("seq", "at", "actor", "action", "host")
        sequence = ("seq", "at", "actor", "action", "host", "target", "reason", "evidence", "status")
        order_by = ("-seq",)
        attrs = {"class": "data decision-log"}
        row_attrs = {"id": lambda record: f"decision-{record.seq}", "data-seq": lambda record: record.seq}
        empty_text = "No decisions match these filters."

    def render_seq(self, value, record: Decision) -> SafeString:
        """The number, linked to the decision's page, and under it the decision's outcome when it has
        one (docs/decisions.md, "Outcomes")."""
        return decision_cell(record)

    def render_at(self, value, record: Decision) -> SafeString:
        """The UTC time, then the first 8 characters of the batch id linked to the log of that batch
        alone (issue 12, finding 10)."""
        href = route_path("review:decisions") + "?" + urlencode({"batch": record.batch})
        return html_format(
            BATCH, stamp=_stamp(value), href=href, batch=record.batch, short=hash8(record.batch)
        )

    def render_action(self, value, record) -> SafeString:
        """The action's words, the record's term under them (``action_html``)."""
        return action_html(record.action)

    def render_target(self, record: Decision) -> SafeString:
        if record.action == Action.SET_BUDGET:
            return SafeString(f"budget of {_link(host_url(record.host), record.host)}")
        parts = []
        if record.subject is not None:
            parts.append(
                _link(
                    pile_href(record.host, record.namespace or "", record.subject),
                    break_after(pile_target(record.namespace or "", record.subject), ":/"),
                )
            )
        if record.action in LESSON_ACTIONS and record.lesson_hash:
            link = _link(lesson_url(record.host, record.lesson_hash), f"{hash8(record.lesson_hash)}…")
            parts.append(f"lesson {link}")
        if record.action in DRAFT_ACTIONS and record.draft_id:
            # A draft id is a host's name for it: it may break anywhere (class "id"), after its hyphens first.
            link = _link(draft_url(record.host, record.draft_id), record.draft_id)
            parts.append(f'draft <span class="id">{link}</span>')
        if record.created_hash:
            link = _link(lesson_url(record.host, record.created_hash), f"{hash8(record.created_hash)}…")
            parts.append(f"created {link}")
        # each part is built of escaped values
        return SafeString("".join(f'<span class="target-part">{part}</span>' for part in parts))

    def render_reason(self, record: Decision) -> SafeString:
        if record.reason_code:
            return html_format(
                '<span class="badge reason-code">{code}</span> {reason}',
                code=reason_label(record.reason_code),
                reason=record.reason,
            )
        return html_format("{reason}", reason=record.reason)

    def render_evidence(self, record: Decision) -> SafeString:
        """The summary; opened, the evidence as labelled fields and its raw JSON (``review.log.evidence``)."""
        return evidence_html(record.evidence)

    def render_status(self, record: Decision) -> SafeString:
        status, acked_at, detail = decision_host_status(record)
        if status == STATUS_AWAITING:
            return SafeString(AWAITING)
        if status == STATUS_APPLIED:
            return html_format(APPLIED, stamp=_stamp(acked_at))
        return html_format(FAILED, status=status, stamp=_stamp(acked_at), detail=detail or "no detail given")
