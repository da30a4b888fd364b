"""The decision log's cells (``DecisionTable.render_*``, built with ``html_format``) are what ``format_html``
built before them, byte for byte, for decisions of every action, code, evidence, target and host status;
the reference is the former code, kept here. The evidence and action cells are no longer the former ones
(readable fields and the raw JSON: tests/review/log/test_evidence_fields.py; the action's words and its
term: tests/review/web/test_action_labels.py)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from urllib.parse import urlencode

import pytest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.core.piles import pile_target
from lessons.core.text import format_datetime
from review.log.selectors import STATUS_APPLIED, STATUS_AWAITING, decision_host_status
from review.log.tables import (
    DRAFT_ACTIONS,
    LESSON_ACTIONS,
    DecisionTable,
)
from review.models import Action, Decision, DecisionAck, ReasonCode
from review.web.format import reason_label
from review.web.links import draft_url, host_url, lesson_url, pile_href


def _link(url, text):
    return format_html('<a href="{}">{}</a>', url, text) if url else format_html("{}", text)


def _break_after(text, marks):
    *head, tail = re.split(f"(?<=[{re.escape(marks)}])", text)
    return format_html("{}{}", format_html_join("", "{}<wbr>", ((p,) for p in head)), tail)


def _stamp(moment):
    stamp = format_datetime(moment)
    day, _, clock = stamp.partition("T")
    return format_html(
        '<time datetime="{}"><span class="nowrap">{}</span><wbr><span class="nowrap">T{}</span></time>',
        stamp,
        day,
        clock,
    )


def _former_cells(record: Decision) -> dict[str, str]:
    """The cells as the log's table built them with ``format_html`` (before issue 10's last round)."""
    href = reverse("review:decisions") + "?" + urlencode({"batch": record.batch})
    at = format_html(
        '{}<br><a class="batch mono small" href="{}" title="batch {}" aria-label="Decisions of batch {}">'
        "batch {}</a>",
        _stamp(record.at),
        href,
        record.batch,
        record.batch[:8],
        record.batch[:8],
    )
    if record.action == Action.SET_BUDGET:
        target = format_html("budget of {}", _link(host_url(record.host), record.host))
    else:
        parts = []
        if record.subject is not None:
            entity = pile_target(record.namespace or "", record.subject)
            parts.append(
                _link(
                    pile_href(record.host, record.namespace or "", record.subject), _break_after(entity, ":/")
                )
            )
        if record.action in LESSON_ACTIONS and record.lesson_hash:
            link = _link(lesson_url(record.host, record.lesson_hash), f"{record.lesson_hash[:8]}…")
            parts.append(format_html("lesson {}", link))
        if record.action in DRAFT_ACTIONS and record.draft_id:
            link = _link(draft_url(record.host, record.draft_id), record.draft_id)
            parts.append(format_html('draft <span class="id">{}</span>', link))
        if record.created_hash:
            link = _link(lesson_url(record.host, record.created_hash), f"{record.created_hash[:8]}…")
            parts.append(format_html("created {}", link))
        target = format_html_join("", '<span class="target-part">{}</span>', ((p,) for p in parts))
    if record.reason_code:
        reason = format_html(
            '<span class="badge reason-code">{}</span> {}', reason_label(record.reason_code), record.reason
        )
    else:
        reason = format_html("{}", record.reason)
    status, acked_at, detail = decision_host_status(record)
    if status == STATUS_AWAITING:
        status_cell = format_html('<span class="badge ack-waiting">{}</span>', STATUS_AWAITING)
    elif status == STATUS_APPLIED:
        status_cell = format_html(
            '<span class="badge ack-applied">{}</span> {}', STATUS_APPLIED, _stamp(acked_at)
        )
    else:
        status_cell = format_html(
            '<span class="badge ack-failed">{}</span> {}: {}',
            status,
            _stamp(acked_at),
            detail or "no detail given",
        )
    return {
        "at": at,
        "target": target,
        "reason": reason,
        "status": status_cell,
    }


def _cells(record: Decision) -> dict[str, str]:
    table = DecisionTable([])
    return {
        "at": table.render_at(record.at, record),
        "target": table.render_target(record),
        "reason": table.render_reason(record),
        "status": table.render_status(record),
    }


WORDS = st.text(alphabet="ab<>&\"'/:_-. é", min_size=0, max_size=12)
NAMES = st.one_of(st.sampled_from(["bench-001", "qa", "a/b", "x<y", ""]), WORDS)
EVIDENCE = st.one_of(
    st.just({}),
    st.just([1, 2]),
    st.dictionaries(
        st.sampled_from(
            ["count", "max_active", "verdict", "recurrence", "before", "after", "piles_before", "<k>"]
        ),
        st.one_of(
            st.none(),
            st.integers(-3, 300),
            WORDS,
            st.dictionaries(
                st.sampled_from(["max_active", "budget_enabled", "recurred_sessions", "&"]),
                st.one_of(st.integers(0, 20), st.booleans(), WORDS),
                max_size=3,
            ),
        ),
        max_size=5,
    ),
)
MOMENTS = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2999, 1, 1), timezones=st.just(UTC))


@settings(max_examples=400, deadline=None)
@given(
    action=st.sampled_from(Action.values),
    host=NAMES,
    namespace=st.one_of(st.none(), NAMES),
    subject=st.one_of(st.none(), NAMES),
    lesson_hash=st.one_of(st.none(), st.just(""), st.sampled_from(["ab" * 32, "c/d" * 4]), WORDS),
    draft_id=st.one_of(st.none(), st.just(""), NAMES),
    created_hash=st.one_of(st.none(), st.just(""), st.just("ef" * 32)),
    batch=st.sampled_from(["dc8e47b7d54be7a4b4905825a3fc8bdb", "a<b&c", "x"]),
    reason_code=st.one_of(st.none(), st.just(""), st.sampled_from([*ReasonCode.values, "unknown_code"])),
    reason=WORDS,
    evidence=EVIDENCE,
    at=MOMENTS,
    ack=st.one_of(st.none(), st.tuples(st.sampled_from(["applied", "failed"]), WORDS, MOMENTS)),
)
def test_the_log_cells_are_what_format_html_built(ack, **fields):
    record = Decision(seq=7, actor="reviewer", **fields)
    if ack is not None:
        status, detail, acked_at = ack
        record.ack = DecisionAck(status=status, detail=detail, acked_at=acked_at)
    assert _cells(record) == _former_cells(record)


@pytest.mark.parametrize("action", [Action.SET_BUDGET, Action.RETIRE, Action.APPROVE])
def test_a_cell_is_marked_safe_with_every_word_escaped(action):
    record = Decision(
        seq=1, action=action, host="h<1>", namespace="n&", subject="s\"", lesson_hash="<hash>", draft_id="d<",
        batch="b<", reason_code=ReasonCode.OTHER, reason="<script>", evidence={"<k>": "<v>"},
        at=datetime(2026, 1, 2, tzinfo=UTC),
    )  # fmt: skip
    cells = {**_cells(record), "evidence": DecisionTable([]).render_evidence(record)}
    assert all(hasattr(cell, "__html__") for cell in cells.values())
    assert "<script>" not in cells["reason"] and "&lt;script&gt;" in cells["reason"]
    assert "&lt;k&gt;" in cells["evidence"] and "&lt;v&gt;" in cells["evidence"]
