"""The decision log at scale: the chart reads only its 26-week window (bucketed by the database, no
per-row Python call), the table counts at most 10,000 rows, the actor choices skip through an index.
Issue 10, build 3. spec: decisions.md; review/log/chart.py."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
from django.db import connection

from review.log.selectors import WeekStart, decisions_log, log_actor_names, reason_codes_by_week
from review.models import Decision
from review.web.paging import BoundedPaginator
from tests.fixtures.log import row_seqs


def page(client, user, query=""):
    client.force_login(user)
    response = client.get("/decisions/" + (f"?{query}" if query else ""))
    assert response.status_code == 200
    return response.content.decode()


def test_the_chart_reads_the_26_weeks_ending_with_the_newest_decision(spread):
    window = reason_codes_by_week(decisions_log())
    assert window.start == date(2026, 3, 23)
    assert window.rows == [("beta", date(2026, 3, 23), "obsolete", 1), ("beta", date(2026, 9, 14), None, 1)]
    assert (window.hosts, window.earlier) == (["beta"], frozenset({"beta"}))


def test_the_page_says_earlier_decisions_are_not_drawn(client, viewer, spread):
    html = page(client, viewer)
    assert "Reason codes per week on alpha" not in html  # all its decisions precede the window
    assert (
        '<desc id="chart-1-desc">2 decisions on beta in the weeks of 2026-03-23 to 2026-09-14, stacked by '
        "reason code: obsolete 1, (no code) 1</desc>"
    ) in html
    assert "(the last 26 weeks of the log; earlier decisions not drawn)" in html


def test_a_filter_moves_the_window_to_its_own_newest_decision(client, viewer, spread):
    html = page(client, viewer, "host=alpha")
    assert '<desc id="chart-1-desc">1 decision on alpha in the weeks of 2026-01-05 to 2026-01-05' in html
    assert "earlier decisions not drawn" not in html


@pytest.mark.parametrize(
    "moment,monday",
    [
        (datetime(2026, 3, 22, 23, 59, 59, 999000, tzinfo=UTC), date(2026, 3, 16)),  # Sunday: its week's end
        (datetime(2026, 3, 23, 0, 0, tzinfo=UTC), date(2026, 3, 23)),  # Monday midnight starts the next
        (datetime(2026, 3, 25, 12, 0, tzinfo=UTC), date(2026, 3, 23)),
        (datetime(2027, 1, 1, 8, 0, tzinfo=UTC), date(2026, 12, 28)),  # ISO week across the new year
    ],
)
def test_week_start_is_the_utc_monday_on_the_database(two_hosts, budget_steps, moment, monday):
    _alpha, beta = two_hosts
    budget_steps(beta, 1, now=moment)
    assert Decision.objects.annotate(week=WeekStart("at")).values_list("week", flat=True).get() == monday


def test_the_chart_query_is_served_by_the_host_at_index(spread):
    from django.test.utils import CaptureQueriesContext

    if connection.vendor != "sqlite":
        pytest.skip("EXPLAIN QUERY PLAN is SQLite's")
    with CaptureQueriesContext(connection) as queries:
        reason_codes_by_week(decisions_log())
    probe, counts = (q["sql"] for q in queries.captured_queries[1:])
    with connection.cursor() as cursor:
        plans = []
        for sql in (probe, counts):
            cursor.execute("EXPLAIN QUERY PLAN " + sql)
            plans.append(" ".join(str(row[-1]) for row in cursor.fetchall()))
    assert "USING COVERING INDEX decision_host_at (host=? AND at>? AND at<?)" in plans[0]  # the EXISTS
    assert "USING COVERING INDEX decision_host_at (host=? AND at>? AND at<?)" in plans[1]  # the counts


def test_the_table_counts_at_most_the_cap_and_pages_on(client, viewer, two_hosts, budget_steps, monkeypatch):
    _alpha, beta = two_hosts
    budget_steps(beta, 23)
    monkeypatch.setattr(BoundedPaginator, "cap", 10)  # the same code path as 10,000 of a million rows
    html = page(client, viewer, "per_page=5")
    assert "More than 10 decisions. Export them" in html
    assert "Page 1 · more than 10 rows" in html
    assert row_seqs(page(client, viewer, "per_page=5&page=5")) == [3, 2, 1]
    assert row_seqs(page(client, viewer, "per_page=5&page=99")) == [23, 22, 21, 20, 19]  # past the end
    monkeypatch.setattr(BoundedPaginator, "cap", 23)  # exactly the cap: exact count and pages
    html = page(client, viewer, "per_page=5")
    assert "23 decisions. Export them" in html
    assert "Page 1 of 5 · 23 rows" in html


def test_the_count_reads_no_more_than_the_cap(client, viewer, two_hosts, budget_steps, monkeypatch):
    from django.test.utils import CaptureQueriesContext

    _alpha, beta = two_hosts
    budget_steps(beta, 3)
    with CaptureQueriesContext(connection) as queries:
        page(client, viewer)
    counts = [q["sql"] for q in queries if q["sql"].startswith("SELECT COUNT(*) FROM (")]
    assert len(counts) == 1 and "LIMIT 10001" in counts[0]


def test_actor_names_are_every_actor_once_sorted(two_hosts, budget_steps, reviewer, admin_user):
    from lessons.core.text import lesson_hash
    from review.services.decisions import lessons_retire

    alpha, beta = two_hosts
    budget_steps(beta, 2)
    lessons_retire(host=alpha, hashes=[lesson_hash("ns", "s", "rule 0")], actor=reviewer, reason="dup")
    budget_steps(beta, 1)
    assert log_actor_names() == sorted({admin_user.username, reviewer.username})
