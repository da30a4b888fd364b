"""The host over time (issue 24, Build 2): user corrections per 100 sessions by ISO week, the weeks with
decisions marked, as a chart and a table on the host page; three queries whatever the weeks."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lessons.models import Host
from review.outcomes.host_weeks import Later, Week, host_weeks, window_end
from review.services.decisions import lessons_retire
from tests.builders import correction, exposure
from tests.fixtures.outcomes import HOST, OTHER, RETIRED, h
from tests.html import parse

pytestmark = pytest.mark.django_db


@pytest.fixture
def weeks(outcome_host, ingest, reviewer):
    """Week of 2026-02-02: 2 sessions, 1 correction, the retire; week of 2026-02-09: 1 session, 0."""
    rows = [
        exposure(host=HOST, session="a", shown_at="2026-02-03T10:00:00Z", lesson=h(OTHER)),
        exposure(host=HOST, session="b", shown_at="2026-02-04T10:00:00Z", lesson=h(OTHER)),
        exposure(host=HOST, session="b", shown_at="2026-02-04T11:00:00Z", lesson=h(RETIRED)),
        correction(
            host=HOST,
            session="b",
            id="c1",
            text="wrong gross_amount decimals",
            corrected_at="2026-02-04T12:00:00Z",
        ),
        exposure(host=HOST, session="c", shown_at="2026-02-10T10:00:00Z", lesson=h(OTHER)),
    ]
    assert ingest(rows).ok
    lessons_retire(
        host=outcome_host,
        hashes=[h(RETIRED)],
        actor=reviewer,
        reason="dup",
        now=datetime(2026, 2, 5, tzinfo=UTC),
    )
    return outcome_host


def test_the_weeks_count_sessions_corrections_and_decisions(weeks):
    found = host_weeks(weeks, weeks=3).weeks
    assert found == [
        Week(date(2026, 1, 26), 0, 0, 0),
        Week(date(2026, 2, 2), 2, 1, 1),
        Week(date(2026, 2, 9), 1, 0, 0),
    ]
    assert [w.per_100 for w in found] == [None, 50.0, 0.0]


def test_the_host_page_shows_the_chart_and_the_numbers(weeks, as_viewer):
    with CaptureQueriesContext(connection) as queries:
        page = parse(as_viewer.get(f"/hosts/{HOST}/").content)
    section = page.find("section", id="host-weeks")
    assert section.find("svg") is not None and len(section.find("svg").find_all("rect", cls="decided")) == 1
    rows = [[td.text for td in tr.find_all("td")] for tr in section.find("tbody").find_all("tr")]
    assert rows[-2:] == [["2026-02-02", "2", "1", "50.0", "1"], ["2026-02-09", "1", "0", "0.0", "0"]]
    assert len(rows) == 26
    caption = " ".join(section.find("figcaption").text.split())
    assert caption.startswith(
        "From 2025-08-18 to the week of 2026-02-09; the tallest bar is 50.0 corrections per 100"
    )
    week_queries = [q for q in queries if "lessons_exposure" in q["sql"] or "lessons_correction" in q["sql"]]
    assert len(week_queries) == 3  # the newest of both in one query, then the weeks of each


def test_a_host_without_sessions_says_so(outcome_host, as_viewer):
    section = parse(as_viewer.get(f"/hosts/{HOST}/").content).find("section", id="host-weeks")
    assert section.find("p", cls="empty").text.startswith("No session of this host yet")
    assert Host.objects.filter(name=HOST).exists()


def test_a_decision_after_the_last_session_ends_the_range(weeks, reviewer):
    # the newcomer's finding: a retire made weeks after the host's last session was in neither the chart nor
    # the table (the range ended at the newest exposure or correction)
    lessons_retire(
        host=weeks, hashes=[h(OTHER)], actor=reviewer, reason="dup", now=datetime(2026, 3, 4, tzinfo=UTC)
    )
    timeline = host_weeks(weeks, weeks=6)
    assert timeline.later is None
    assert timeline.weeks == [
        Week(date(2026, 1, 26), 0, 0, 0),
        Week(date(2026, 2, 2), 2, 1, 1),
        Week(date(2026, 2, 9), 1, 0, 0),
        Week(date(2026, 2, 16), 0, 0, 0),
        Week(date(2026, 2, 23), 0, 0, 0),
        Week(date(2026, 3, 2), 0, 0, 1),
    ]


def test_a_decision_long_after_the_last_session_is_drawn_after_a_break(weeks, reviewer, as_viewer):
    # the newcomer's finding (demo, 2026-12-04): a retire made months after the host's last session moved the
    # 26 weeks past every session, so the chart could not show whether it helped. The weeks now end with the
    # newest session's week; the decisions after them get one slot after a break in the axis.
    lessons_retire(
        host=weeks, hashes=[h(OTHER)], actor=reviewer, reason="dup", now=datetime(2026, 12, 4, tzinfo=UTC)
    )
    timeline = host_weeks(weeks, weeks=3)
    assert timeline.weeks == [
        Week(date(2026, 1, 26), 0, 0, 0),
        Week(date(2026, 2, 2), 2, 1, 1),
        Week(date(2026, 2, 9), 1, 0, 0),
    ]
    assert timeline.later == Later(first=date(2026, 11, 30), last=date(2026, 11, 30), weeks=1, decisions=1)
    section = parse(as_viewer.get(f"/hosts/{HOST}/").content).find("section", id="host-weeks")
    caption = " ".join(section.find("figcaption").text.split())
    assert caption == (
        "From 2025-08-18 to the week of 2026-02-09; the tallest bar is 50.0 corrections per 100 sessions."
        " After the break at the right end: 1 decision made after the host's newest session, in the week of"
        " 2026-11-30; no session has come since, so there is nothing after them to compare yet."
        " Did the agent get corrected less after a cut? The numbers:"
    )
    svg = section.find("svg")
    assert len(svg.find_all("rect", cls="bar")) == 1
    decided = svg.find_all("rect", cls="decided")
    assert [r.attrs["x"] for r in decided] == ["481.0", "541.0"]  # 28 slots of 20 px: week 24, then the last
    assert "later" in decided[1].classes
    assert svg.find("path", cls="axis").attrs["d"] == (
        "M0 107 H520.0 M540.0 107 H560 M525.0 112 L529.0 102 M531.0 112 L535.0 102"
    )
    row = [td.text for td in section.find("tr", data_testid="weeks-later-row").find_all("td")]
    assert row == ["after the break: 2026-11-30", "0", "0", "—", "1"]
    link = section.find("tr", data_testid="weeks-later-row").find("a").attrs["href"]
    assert link == f"/decisions/?host={HOST}&from=2026-11-30"


@pytest.mark.parametrize(
    ("decided", "end", "later"),
    [
        (None, date(2026, 2, 9), None),
        (date(2026, 1, 5), date(2026, 2, 9), None),  # before the newest session: the data ends the weeks
        (date(2026, 4, 6), date(2026, 4, 6), None),  # 8 weeks after: the weeks run to it
        (date(2026, 4, 13), date(2026, 2, 9), True),  # 9 weeks after: a break
    ],
)
def test_the_window_ends_with_the_data_or_a_decision_up_to_eight_weeks_after_it(decided, end, later):
    assert window_end(date(2026, 2, 9), decided) == end
    assert (decided is not None and decided > end) is bool(later)


def test_without_data_the_newest_decision_ends_the_window():
    assert window_end(None, date(2026, 3, 2)) == date(2026, 3, 2)
    assert window_end(None, None) is None


def test_the_caption_names_no_older_session_when_the_range_has_sessions(weeks, as_viewer):
    caption = (
        parse(as_viewer.get(f"/hosts/{HOST}/").content).find("section", id="host-weeks").find("figcaption")
    )
    assert "newest session" not in caption.text
