"""The log chart's rollup (``DecisionWeek``): kept by the one writer of the log, it gives the chart the
same window as the decisions themselves, and it is rebuilt and checked from the log. Issue 10, build 3.
spec: decisions.md; review/services/decision_weeks.py."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from lessons.models import Host
from review.log.chart import MAX_HOSTS
from review.log.selectors import decisions_log, reason_codes_by_week, reason_codes_by_week_rollup
from review.models import Decision, DecisionWeek, ReasonCode
from review.services.chain import DecisionEntry, decisions_append_many
from review.services.decision_weeks import decision_weeks_check, decision_weeks_rebuild, week_of

CODES = (*ReasonCode.values, None)


def stored() -> set[tuple[str, date, str, int]]:
    return set(DecisionWeek.objects.values_list("host", "week", "reason_code", "n"))


def append(host: str, moment: datetime, code: str | None, reason: str = "a step") -> None:
    with transaction.atomic():
        decisions_append_many(entries=[entry(host, moment, code, reason)])


def entry(host: str, moment: datetime, code: str | None, reason: str = "a step") -> DecisionEntry:
    return DecisionEntry(
        actor="reviewer", action="set_budget", host=host, namespace=None, subject=None,
        batch="b" * 32, reason=reason, reason_code=code, evidence={}, at=moment,
    )  # fmt: skip


def test_the_spread_fixture_is_counted_per_utc_monday_and_code(spread):
    # alpha's decision of 2026-01-05; beta's Sunday 23:59:59 belongs to the week of Monday 03-16
    assert stored() == {
        ("alpha", date(2026, 1, 5), "other", 1),
        ("beta", date(2026, 3, 16), "duplicate", 1),
        ("beta", date(2026, 3, 23), "obsolete", 1),
        ("beta", date(2026, 9, 14), "", 1),
    }


def test_the_rollup_window_is_the_decisions_window(spread):
    assert reason_codes_by_week_rollup() == reason_codes_by_week(decisions_log())
    for host in ("alpha", "beta"):
        assert reason_codes_by_week_rollup(host=host) == reason_codes_by_week(
            decisions_log().filter(host=host)
        )
    assert reason_codes_by_week_rollup(host="beta").rows == [
        ("beta", date(2026, 3, 23), "obsolete", 1),
        ("beta", date(2026, 9, 14), None, 1),
    ]


def test_an_empty_log_has_no_window(db):
    window = reason_codes_by_week_rollup()
    assert (window.rows, window.hosts, window.start) == ([], [], None)


def test_many_hosts_and_weeks_agree_with_the_log_and_a_recount(db):
    """300 decisions on 11 hosts (more than the chart draws) over 60 weeks, appended in batches of
    1-5 (a batch adds to a week already counted): both windows agree, for the log and for each host."""
    rng = random.Random(20261201)
    names = [f"h{i:02d}" for i in range(MAX_HOSTS + 3)]
    Host.objects.bulk_create([Host(name=name) for name in names])
    start = datetime(2025, 6, 2, tzinfo=UTC)
    moments = sorted(start + timedelta(minutes=rng.randrange(60 * 7 * 24 * 60)) for _ in range(300))
    i = 0
    while i < len(moments):
        size = rng.randint(1, 5)
        with transaction.atomic():
            decisions_append_many(
                entries=[entry(rng.choice(names), m, rng.choice(CODES)) for m in moments[i : i + size]]
            )
        i += size
    assert decision_weeks_check() == []
    assert sum(n for *_k, n in stored()) == 300
    both = reason_codes_by_week_rollup(), reason_codes_by_week(decisions_log())
    assert both[0] == both[1]
    assert len(both[0].hosts) == MAX_HOSTS + 3 and len({r[0] for r in both[0].rows}) == MAX_HOSTS
    for name in names:
        assert reason_codes_by_week_rollup(host=name) == reason_codes_by_week(
            decisions_log().filter(host=name)
        )


def test_a_rolled_back_append_leaves_no_count(db):
    Host.objects.create(name="acme")
    with pytest.raises(RuntimeError), transaction.atomic():
        decisions_append_many(entries=[entry("acme", datetime(2026, 5, 6, tzinfo=UTC), "obsolete")])
        raise RuntimeError("the change the decision records failed")
    assert (Decision.objects.count(), stored()) == (0, set())


def test_the_check_names_each_difference_and_the_rebuild_mends_it(db):
    Host.objects.create(name="acme")
    for day in (4, 5, 12):
        append("acme", datetime(2026, 5, day, 9, tzinfo=UTC), None)
    DecisionWeek.objects.filter(week=date(2026, 5, 4)).update(n=7)
    DecisionWeek.objects.create(host="ghost", week=date(2026, 5, 4), reason_code="drifted", n=1)
    assert decision_weeks_check() == [
        "decision weeks acme 2026-05-04 (no code): stored 7, log 2",
        "decision weeks ghost 2026-05-04 drifted: stored 1, log 0",
    ]
    assert decision_weeks_rebuild() == 2
    assert decision_weeks_check() == []
    assert stored() == {("acme", date(2026, 5, 4), "", 2), ("acme", date(2026, 5, 11), "", 1)}


@pytest.mark.parametrize(
    "moment,monday",
    [
        (datetime(2026, 3, 22, 23, 59, 59, 999000, tzinfo=UTC), date(2026, 3, 16)),
        (datetime(2026, 3, 23, 0, 0, tzinfo=UTC), date(2026, 3, 23)),
        (datetime(2027, 1, 1, 8, 0, tzinfo=UTC), date(2026, 12, 28)),
    ],
)
def test_week_of_is_the_utc_monday(moment, monday):
    assert week_of(moment) == monday


def test_the_page_charts_from_the_rollup_in_the_same_queries(client, viewer, spread):
    """Unfiltered and host-filtered, the chart reads DecisionWeek (and never groups the decisions)."""
    client.force_login(viewer)
    for query in ("", "?host=beta"):
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/decisions/" + query).status_code == 200
        sql = [q["sql"] for q in queries.captured_queries]
        assert sum("review_decisionweek" in s for s in sql) == 2, sql  # the hosts' probes; the window's rows
        assert not any("GROUP BY" in s and 'review_decision"' in s for s in sql)
    with CaptureQueriesContext(connection) as queries:
        assert client.get("/decisions/?actor=reviewer").status_code == 200
    assert not any("review_decisionweek" in q["sql"] for q in queries.captured_queries)
