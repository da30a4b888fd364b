"""The reason-code chart's geometry: pure, no database. spec: the log page (review/log/chart.py)."""

from __future__ import annotations

from datetime import date, timedelta

from review.log.chart import COLOURS, MAX_HOSTS, MAX_WEEKS, NO_CODE, host_chart, log_chart

MONDAY = date(2026, 3, 2)


def test_segments_stack_in_reason_code_order_from_the_bottom():
    chart = host_chart("alpha", [(MONDAY, "other", 1), (MONDAY, "duplicate", 2), (MONDAY, None, 1)])
    assert [(s.code, s.count) for s in chart.segments] == [("duplicate", 2), ("other", 1), (NO_CODE, 1)]
    bottom = chart.plot_bottom
    first, second, third = chart.segments
    assert first.y + first.height == bottom
    assert second.y + second.height == first.y
    assert third.y + third.height == second.y
    assert chart.legend == (("duplicate", COLOURS["duplicate"], 2), ("other", COLOURS["other"], 1),
                            (NO_CODE, COLOURS[NO_CODE], 1))  # fmt: skip


def test_the_scale_tops_at_a_round_number():
    chart = host_chart("alpha", [(MONDAY, "other", 3)])
    assert [t.label for t in chart.y_ticks] == ["0", "5"]
    assert chart.segments[0].height == round((chart.plot_bottom - chart.plot_top) * 3 / 5, 1)


def test_weeks_without_decisions_are_gaps():
    chart = host_chart("alpha", [(MONDAY, "other", 1), (MONDAY + timedelta(weeks=3), "other", 1)])
    assert [s.week for s in chart.segments] == ["2026-03-02", "2026-03-23"]
    assert chart.weeks == (("2026-03-02", (("other", 1),)), ("2026-03-23", (("other", 1),)))
    step = (chart.plot_right - chart.plot_left) / 4
    assert round(chart.segments[1].x - chart.segments[0].x, 1) == round(3 * step, 1)


def test_only_the_last_26_weeks_are_drawn():
    rows = [(MONDAY + timedelta(weeks=i), "other", 1) for i in range(30)]
    chart = host_chart("alpha", rows)
    assert (chart.weeks_cut, len(chart.segments), chart.total) == (4, MAX_WEEKS, MAX_WEEKS)
    assert chart.segments[0].week == (MONDAY + timedelta(weeks=4)).isoformat()


def test_the_description_names_the_span_and_the_counts():
    chart = host_chart("beta", [(MONDAY, "drifted", 2), (MONDAY + timedelta(weeks=1), None, 1)])
    assert chart.title == "Reason codes per week on beta"
    assert chart.description == (
        "3 decisions on beta in the weeks of 2026-03-02 to 2026-03-09, stacked by reason code: "
        "drifted 2, (no code) 1"
    )


def test_one_chart_per_host_sorted_and_capped():
    rows = [(f"host-{i:02d}", MONDAY, "other", 1) for i in range(MAX_HOSTS + 2)]
    chart = log_chart(rows)
    assert [c.host for c in chart.charts] == [f"host-{i:02d}" for i in range(MAX_HOSTS)]
    assert chart.hosts_cut == 2


def test_no_rows_no_charts():
    assert log_chart([]).charts == ()
