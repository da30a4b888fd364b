"""The decision log table (django-tables2). Cells are built with ``format_html``, which escapes every value:
reasons and entity names are user-written text. spec: decisions.md, "The record", "Hosts apply decisions".
"""

from __future__ import annotations

import json
import re
from urllib.parse import urlencode

import django_tables2 as tables
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from lessons.core.piles import pile_target
from lessons.core.text import format_datetime
from review.log.selectors import STATUS_APPLIED, STATUS_AWAITING, decision_host_status
from review.models import Action, Decision
from review.web.format import counted, reason_label
from review.web.links import draft_url, host_url, lesson_url, pile_href
from review.web.tables import LeanTable

LESSON_ACTIONS = {Action.RETIRE, Action.RESTORE}
DRAFT_ACTIONS = {Action.APPROVE, Action.REJECT, Action.ROLLBACK}


def _link(url: str | None, text: str):
    return format_html('<a href="{}">{}</a>', url, text) if url else format_html("{}", text)


def _break_after(text: str, marks: str):
    """``text`` escaped, with a line-break opportunity (``<wbr>``) after each character of ``marks``: a
    narrow column then breaks ``entity:desk.adbuy/invoice_capture`` after ``:`` or ``/``, not mid-word."""
    *head, tail = re.split(f"(?<=[{re.escape(marks)}])", text)
    return format_html("{}{}", format_html_join("", "{}<wbr>", ((p,) for p in head)), tail)


def _stamp(moment) -> str:
    """``<time>`` with the UTC ISO 8601 time, breakable between the date and the time of day."""
    stamp = format_datetime(moment)
    day, _, clock = stamp.partition("T")
    return format_html(
        '<time datetime="{}"><span class="nowrap">{}</span><wbr><span class="nowrap">T{}</span></time>',
        stamp,
        day,
        clock,
    )


def _on_off(enabled: object) -> str:
    return "on" if enabled else "off"


def evidence_summary(evidence: dict) -> str:
    """A one-line summary of the evidence: ``count/max_active``, the verdict and recurrence of a lesson
    decision; ``max_active 8 → 12`` and the pile counts of a budget decision."""
    parts = []
    before, after = evidence.get("before"), evidence.get("after")
    if isinstance(before, dict) and isinstance(after, dict):
        parts.append(f"max_active {before.get('max_active')} → {after.get('max_active')}")
        parts.append(
            f"budget {_on_off(before.get('budget_enabled'))} → {_on_off(after.get('budget_enabled'))}"
        )
        if "piles_before" in evidence and "piles_after" in evidence:
            parts.append(f"piles {evidence['piles_before']} → {evidence['piles_after']}")
    if "count" in evidence and "max_active" in evidence:
        parts.append(f"{evidence['count']}/{evidence['max_active']}")
    if evidence.get("verdict"):
        parts.append(str(evidence["verdict"]))
    recurrence = evidence.get("recurrence")
    if isinstance(recurrence, dict) and "recurred_sessions" in recurrence:
        parts.append(f"recurred in {counted(recurrence['recurred_sessions'], 'session')}")
    return " · ".join(parts) or "see details"


def _evidence_rows(evidence: dict) -> list[tuple[str, str]]:
    rows = []
    for key in sorted(evidence):
        value = evidence[key]
        if isinstance(value, dict):
            rows.extend((f"{key}.{k}", json.dumps(value[k], ensure_ascii=False)) for k in sorted(value))
        else:
            rows.append((key, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)))
    return rows


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

    def render_at(self, value, record: Decision):
        """The UTC time, then the first 8 characters of the batch id linked to the log of that batch
        alone (issue 12, finding 10)."""
        href = reverse("review:decisions") + "?" + urlencode({"batch": record.batch})
        return format_html(
            '{}<br><a class="batch mono small" href="{}" title="batch {}" aria-label="Decisions of batch {}">'
            "batch {}</a>",
            _stamp(value),
            href,
            record.batch,
            record.batch[:8],
            record.batch[:8],
        )

    def render_action(self, value, record):
        return _break_after(record.action, "_")

    def render_target(self, record: Decision):
        if record.action == Action.SET_BUDGET:
            return format_html("budget of {}", _link(host_url(record.host), record.host))
        parts = []
        if record.subject is not None:
            parts.append(
                _link(
                    pile_href(record.host, record.namespace or "", record.subject),
                    _break_after(pile_target(record.namespace or "", record.subject), ":/"),
                )
            )
        if record.action in LESSON_ACTIONS and record.lesson_hash:
            parts.append(
                format_html(
                    "lesson {}",
                    _link(lesson_url(record.host, record.lesson_hash), f"{record.lesson_hash[:8]}…"),
                )
            )
        if record.action in DRAFT_ACTIONS and record.draft_id:
            # A draft id is a host's name for it: it may break anywhere (class "id"), after its hyphens first.
            parts.append(
                format_html(
                    'draft <span class="id">{}</span>',
                    _link(draft_url(record.host, record.draft_id), record.draft_id),
                )
            )
        if record.created_hash:
            parts.append(
                format_html(
                    "created {}",
                    _link(lesson_url(record.host, record.created_hash), f"{record.created_hash[:8]}…"),
                )
            )
        return format_html_join("", '<span class="target-part">{}</span>', ((p,) for p in parts))

    def render_reason(self, record: Decision):
        if record.reason_code:
            return format_html(
                '<span class="badge reason-code">{}</span> {}',
                reason_label(record.reason_code),
                record.reason,
            )
        return format_html("{}", record.reason)

    def render_evidence(self, record: Decision):
        evidence = record.evidence if isinstance(record.evidence, dict) else {}
        rows = format_html_join("", "<dt>{}</dt><dd>{}</dd>", _evidence_rows(evidence))
        return format_html(
            '<details><summary>{}</summary><dl class="evidence">{}</dl></details>',
            evidence_summary(evidence),
            rows,
        )

    def render_status(self, record: Decision):
        status, acked_at, detail = decision_host_status(record)
        if status == STATUS_AWAITING:
            return format_html('<span class="badge ack-waiting">{}</span>', STATUS_AWAITING)
        if status == STATUS_APPLIED:
            return format_html(
                '<span class="badge ack-applied">{}</span> {}', STATUS_APPLIED, _stamp(acked_at)
            )
        return format_html(
            '<span class="badge ack-failed">{}</span> {}: {}',
            status,
            _stamp(acked_at),
            detail or "no detail given",
        )
