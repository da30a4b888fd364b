"""The calibration page's rollup (CalibrationCount, issue 24): rebuilt with a host's outcomes, so it always
equals the outcomes grouped by actor, month, host, reason code and outcome; the page reads it in one query
whatever the number of decisions; the migration fills it from outcomes stored before it existed."""

from __future__ import annotations

import importlib
from datetime import date, timedelta

from django.apps import apps
from django.db.models import Count, DateField
from django.db.models.functions import TruncMonth

from lessons.models import Lesson
from review.models import CalibrationCount, DecisionOutcome
from review.services.decisions import lesson_restore, lessons_retire
from review.services.outcomes import outcomes_refresh
from tests.fixtures.outcomes import HOST, OTHER, RETIRED, T, h, retire, session


def rollup() -> list[tuple]:
    return sorted(
        CalibrationCount.objects.values_list("actor", "month", "host", "reason_code", "outcome", "n")
    )


def grouped_outcomes() -> list[tuple]:
    """The same figures straight from the outcomes (what the page grouped per view before the rollup)."""
    rows = (
        DecisionOutcome.objects.annotate(month=TruncMonth("decision__at", output_field=DateField()))
        .values_list("decision__actor", "month", "host", "decision__reason_code", "outcome")
        .annotate(n=Count("pk"))
        .order_by()
    )
    return sorted((a, m, host, code or "", o, n) for a, m, host, code, o, n in rows)


def test_the_rollup_follows_each_refresh_of_a_hosts_outcomes(outcome_host, reviewer, ingest):
    decision = retire(outcome_host, reviewer)
    outcomes_refresh(host=outcome_host)
    assert rollup() == [("rita", date(2026, 2, 1), HOST, "", "too_early", 1)] == grouped_outcomes()
    # two corrected sessions after the retire: contradicted; the too-early count is gone, not left behind
    assert ingest(session(1, hours=1, corrected=True) + session(2, hours=2, corrected=True)).ok
    assert DecisionOutcome.objects.get(decision=decision).outcome == "contradicted"
    assert rollup() == [("rita", date(2026, 2, 1), HOST, "", "contradicted", 1)] == grouped_outcomes()


def test_the_calibration_page_reads_the_same_queries_whatever_the_decisions(outcome_host, reviewer, client):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    retire(outcome_host, reviewer)
    outcomes_refresh(host=outcome_host)
    client.force_login(reviewer)
    client.get("/decisions/calibration/")

    def page_queries() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert client.get("/decisions/calibration/").status_code == 200
        return len(queries)

    few = page_queries()
    for i in range(10):  # ten restore and retire pairs more: twenty more judged decisions, in February
        lesson = Lesson.objects.get(hash=h(RETIRED))
        lesson_restore(lesson=lesson, actor=reviewer, reason=f"back {i}", now=T + timedelta(hours=2 * i + 1))
        lessons_retire(
            host=outcome_host,
            hashes=[h(RETIRED)],
            actor=reviewer,
            reason=f"again {i}",
            now=T + timedelta(hours=2 * i + 2),
        )
    outcomes_refresh(host=outcome_host)
    assert DecisionOutcome.objects.count() == 21
    assert page_queries() == few
    assert rollup() == [("rita", date(2026, 2, 1), HOST, "", "too_early", 21)] == grouped_outcomes()


def test_the_migration_fills_the_rollup_from_outcomes_stored_before_it(outcome_host, reviewer, admin_user):
    retire(outcome_host, reviewer)
    lessons_retire(
        host=outcome_host,
        hashes=[h(OTHER)],
        actor=admin_user,
        reason="obsolete",
        reason_code="obsolete",
        now=T + timedelta(days=40),
    )
    outcomes_refresh(host=outcome_host)
    expected = rollup()
    assert len(expected) == 2
    CalibrationCount.objects.all().delete()
    migration = importlib.import_module("review.migrations.0014_calibration_count")
    migration.fill(apps, None)
    assert rollup() == expected == grouped_outcomes()


def test_a_rollup_that_is_not_the_outcomes_is_rebuilt_rather_than_counted_below_zero(
    outcome_host, reviewer, ingest
):
    """Rows removed outside a refresh (an admin's delete): the next move would count below zero, so the
    refresh rebuilds the host's rollup from its outcomes instead of failing on it."""
    decision = retire(outcome_host, reviewer)
    outcomes_refresh(host=outcome_host)
    CalibrationCount.objects.all().delete()
    assert ingest(session(1, hours=1, corrected=True) + session(2, hours=2, corrected=True)).ok
    assert DecisionOutcome.objects.get(decision=decision).outcome == "contradicted"
    assert rollup() == [("rita", date(2026, 2, 1), HOST, "", "contradicted", 1)] == grouped_outcomes()
