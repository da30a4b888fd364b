"""The pile page's member rows (review/piles/rows.py) write what the template engine and ``format_html``
wrote before them: the shared recurrence block and each verdict of a member's history."""

from __future__ import annotations

from datetime import UTC, datetime

from django.template.loader import render_to_string
from django.utils.formats import localize
from django.utils.html import format_html
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.core.recurrence import COUNT_FIELDS
from review.piles.rows import RECURRENCE_TEMPLATE, _history_item, recurrence_block
from review.piles.selectors import HistoryVerdict
from review.web.format import horizon_days, iso, verdict_badge

# Zero, one and two are where the words change (a dash, "session" or "sessions", recurring from 2).
COUNTS = st.fixed_dictionaries(
    {name: st.one_of(st.sampled_from([0, 1, 2]), st.integers(0, 12_345)) for name in COUNT_FIELDS}
)


@settings(max_examples=300, deadline=None)
@given(COUNTS)
def test_the_recurrence_block_is_the_shared_templates_markup_byte_for_byte(counts):
    assert recurrence_block(counts) == render_to_string(RECURRENCE_TEMPLATE, {"counts": counts})


def _history_item_by_format_html(v: HistoryVerdict) -> str:
    """The history item as the page built it with ``format_html`` and ``localize`` (before issue 10's
    last round)."""
    has_values = v.baseline is not None or v.current is not None
    return format_html(
        '\n              <li>{} {}{}{} · <span class="mono small">{}</span></li>\n              ',
        verdict_badge(v.verdict),
        format_html('<span class="mono">{}</span>', v.metric) if v.metric else "",
        format_html(
            " {} → {}",
            "?" if v.baseline is None else localize(v.baseline),
            "?" if v.current is None else localize(v.current),
        )
        if has_values
        else "",
        format_html(" · {}", horizon_days(v.horizon_ms)) if v.horizon_ms is not None else "",
        iso(v.measured_at),
    )


NUMBERS = st.one_of(
    st.none(),
    st.floats(allow_nan=False),
    st.sampled_from([0.0, -0.0, 1e-7, 0.58, 123456789.5, 1e22]),
)


@settings(max_examples=300, deadline=None)
@given(
    verdict=st.sampled_from(["held", "regressed", "drifted", "unmeasured", "<odd & new>"]),
    metric=st.one_of(st.none(), st.just(""), st.text(max_size=12)),
    baseline=NUMBERS,
    current=NUMBERS,
    horizon_ms=st.one_of(st.none(), st.integers(0, 10**12)),
    measured_at=st.datetimes(min_value=datetime(2000, 1, 1), timezones=st.just(UTC)),
)
def test_a_history_item_is_what_format_html_built(
    verdict, metric, baseline, current, horizon_ms, measured_at
):
    v = HistoryVerdict(verdict, metric, baseline, current, horizon_ms, measured_at)
    assert _history_item(v, verdict_badge) == _history_item_by_format_html(v)
