"""The reason-code chart's geometry: pure, no database. spec: the log page (review/log/chart.py)."""

from __future__ import annotations

from datetime import date, timedelta

from django.template import Context, Template
from hypothesis import given, settings
from hypothesis import strategies as st

from review.log.chart import CODE_ORDER, COLOURS, MAX_HOSTS, MAX_WEEKS, NO_CODE, host_chart, log_chart

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


# The charts' loop of review/log/decisions.html before issue 10's last round built each figure in Python.
FORMER_FIGURES = (
    "{% load review_tags %}{% for c in chart.charts %}"
    "\n    {% with cid=forloop.counter %}"
    '\n    <figure class="log-chart">'
    '\n      <svg role="img" aria-labelledby="chart-{{ cid }}-title chart-{{ cid }}-desc"'
    ' viewBox="0 0 {{ c.width }} {{ c.height }}" width="{{ c.width }}" height="{{ c.height }}"'
    ' xmlns="http://www.w3.org/2000/svg">'
    '\n        <title id="chart-{{ cid }}-title">{{ c.title }}</title>'
    '\n        <desc id="chart-{{ cid }}-desc">{{ c.description }}</desc>'
    '\n        <line x1="{{ c.plot_left }}" y1="{{ c.plot_top }}" x2="{{ c.plot_left }}" y2="{{ c.plot_bottom }}"'
    ' stroke="#888" stroke-width="1"/>'
    '\n        <line x1="{{ c.plot_left }}" y1="{{ c.plot_bottom }}" x2="{{ c.plot_right }}"'
    ' y2="{{ c.plot_bottom }}" stroke="#888" stroke-width="1"/>'
    "\n        {{ c.marks }}"
    "\n      </svg>"
    "\n      <figcaption>"
    '\n        <span class="chart-title">{{ c.title }}</span>{% if c.weeks_cut %} <span class="muted">(the last'
    " 26 weeks; {{ c.weeks_cut }} earlier week{{ c.weeks_cut|pluralize }} not drawn)</span>{% elif c.earlier %}"
    ' <span class="muted">(the last 26 weeks of the log; earlier decisions not drawn)</span>{% endif %}'
    '\n        <ul class="legend" aria-label="Legend">'
    '\n          {% for code, colour, n in c.legend %}<li><svg width="10" height="10" aria-hidden="true">'
    '<rect width="10" height="10" fill="{{ colour }}"/></svg> {{ code|reason_label }}: {{ n }}</li>{% endfor %}'
    "\n        </ul>"
    '\n        <details class="chart-data"><summary>The numbers</summary>'
    '\n          <table><thead><tr><th scope="col">Week of</th><th scope="col">Decisions by reason code</th>'
    "</tr></thead>"
    "\n          <tbody>{{ c.table_rows }}</tbody></table>"
    "\n        </details>"
    "\n      </figcaption>"
    "\n    </figure>"
    "\n    {% endwith %}"
    "\n    {% endfor %}"
)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["alpha", "b<&>\"'", "gamma", "delta"]),
            st.integers(0, 40).map(lambda w: MONDAY + timedelta(weeks=w)),
            st.sampled_from([*CODE_ORDER[:-1], None]),
            st.integers(1, 2500),
        ),
        max_size=60,
    ),
    earlier=st.frozensets(st.sampled_from(["alpha", "b<&>\"'", "gamma"])),
)
def test_the_figures_are_what_the_pages_template_loop_printed(rows, earlier):
    chart = log_chart(rows, earlier=earlier)
    assert chart.figures == Template(FORMER_FIGURES).render(Context({"chart": chart}))
