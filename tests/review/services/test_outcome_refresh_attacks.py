"""The incremental outcome refresh under attack: two ingests into one host at once (PostgreSQL), a refresh
that fails halfway, a recompute of the attributions between refreshes, and outcomes stored by older rules;
after each, the stored outcomes and kept rows are those ``manage.py outcomes`` (a build from nothing) gives.
docs/decisions.md, "Outcomes" and "What a refresh reads"."""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import pytest
from django.core.management import call_command
from django.db import connection

from lessons.core.outcomes import OUTCOMES_VERSION
from lessons.recurrence.refresh import recurrence_recompute
from review.models import Decision, DecisionOutcome, OutcomeKey, OutcomeMark
from review.services import outcomes as outcomes_module
from review.services.common import DecisionRefused
from review.services.decisions import lessons_retire
from review.services.outcomes import JUDGED, outcomes_refresh
from tests.builders import correction, exposure
from tests.conftest import ingest_records
from tests.review.services.test_concurrency import race
from tests.review.services.test_outcome_charges import (
    HOST,
    SAID,
    T0,
    TEXTS,
    Scenario,
    assert_as_if_read_afresh,
    h,
    iso,
    kept_state,
)

postgres_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")


def stored_outcomes() -> list[tuple]:
    """Every stored outcome of the host as it reads on the decision's page, but when it was computed."""
    return sorted(
        DecisionOutcome.objects.filter(host=HOST).values_list(
            "decision_id", "outcome", "sessions_after", "digest", "version", "evidence"
        )
    )


def assert_a_full_build_changes_nothing(scenario: Scenario) -> None:
    """The stored outcomes and kept rows are what ``manage.py outcomes --host`` builds from nothing: it
    revises no outcome and keeps the same rows."""
    assert_as_if_read_afresh(scenario.host)
    outcomes, kept = stored_outcomes(), kept_state(scenario.host)
    call_command("outcomes", host=HOST, stdout=open("/dev/null", "w"))  # noqa: SIM115
    assert stored_outcomes() == outcomes
    assert kept_state(scenario.host) == kept
    judged = Decision.objects.filter(host=HOST, action__in=JUDGED).count()
    assert len(outcomes) == judged


def retire_two(scenario: Scenario, reviewer) -> None:
    """Retire the contract_number lesson and the gross_amount one at T0 (their topics are in SAID)."""
    hashes = [
        h("invoice_capture", TEXTS["invoice_capture"][0]),
        h("invoice_capture", TEXTS["invoice_capture"][2]),
    ]
    lessons_retire(host=scenario.host, hashes=hashes, actor=reviewer, reason="restates", now=T0)


def session_batch(tag: str, session: str, hours: float, n: int) -> list[dict]:
    """An exposure and ``n`` corrections on the retired lessons' topics in ``session``."""
    when = T0 + timedelta(hours=hours)
    records = [
        exposure(
            host=HOST, session=session, shown_at=iso(when), lesson=h("po_matching", TEXTS["po_matching"][0])
        )
    ]
    for k in range(n):
        records.append(
            correction(
                host=HOST,
                session=session,
                id=f"{tag}-{k}",
                text=SAID[k % 2],
                corrected_at=iso(when + timedelta(minutes=k + 1)),
            )
        )
    return records


def ingested(records: list[dict]) -> None:
    """Ingest ``records``; an ingest refused fails the action (``race`` reports it)."""
    report = ingest_records(records)
    assert report.ok, report.error_lines()


@postgres_only
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("seed", range(3))
def test_two_ingests_into_one_host_at_once_store_what_a_full_build_does(seed, reviewer, settings):
    """Each ingest refreshes the host's outcomes once committed; two at once (the same sessions and new
    ones, on the retired lessons' topics) leave the outcomes and kept rows of a build from nothing."""
    settings.OUTCOME_SUPPORT_SESSIONS = 4
    scenario = Scenario(seed, ingest_records, reviewer)
    retire_two(scenario, reviewer)
    for _ in range(3):
        scenario.batch()
    assert OutcomeMark.objects.filter(host=scenario.host).exists()
    for round_ in range(4):
        shared = f"shared{round_}"
        results = race(
            [
                lambda r=round_, s=shared: ingested(session_batch(f"a{r}", s, 5 + r, 3)),
                lambda r=round_: ingested(session_batch(f"b{r}", f"own{r}", 6 + r, 2)),
                lambda r=round_, s=shared: ingested(session_batch(f"c{r}", s, 7 + r, 1)),
            ]
        )
        assert results == ["ok", "ok", "ok"]
        assert_a_full_build_changes_nothing(scenario)


class Halfway(Exception):
    pass


@pytest.mark.parametrize("where", ["host_outcomes", "_update", "_calibration_moved", "session_names"])
def test_a_refresh_that_fails_halfway_leaves_nothing_half_written(where, ingest, reviewer, settings):
    """A refresh that raises after writing part of its rows (kept corrections and mark, session ends, some
    outcomes) rolls all of it back: the next refresh stores what a full build does."""
    settings.OUTCOME_SUPPORT_SESSIONS = 3
    scenario = Scenario(3, ingest, reviewer)
    retire_two(scenario, reviewer)
    outcomes_refresh(host=scenario.host)
    scenario.batch()
    # two batches whose refresh is left to the next one (their session ends are the ingest's own)
    with mock.patch("review.services.outcomes.outcomes_refresh"):
        assert ingest(session_batch("x", "late", 30, 3)).ok
        assert ingest(session_batch("y", "s1", 40, 2)).ok
    before = (
        stored_outcomes(),
        kept_state(scenario.host),
        list(OutcomeMark.objects.values_list("attribution")),
    )
    real = getattr(outcomes_module, where, None)
    target = f"review.services.outcomes.{where}"

    def fail(*args, **kwargs):
        if real is not None and where == "_update":
            real(*args, **kwargs)  # the rows written, then the failure
        raise Halfway(where)

    with mock.patch(target, side_effect=fail), pytest.raises(Halfway):
        outcomes_refresh(host=scenario.host)
    assert stored_outcomes() == before[0]
    assert kept_state(scenario.host) == before[1]
    assert list(OutcomeMark.objects.values_list("attribution")) == before[2]
    outcomes_refresh(host=scenario.host)
    assert_a_full_build_changes_nothing(scenario)


def test_a_recompute_of_the_attributions_between_refreshes(ingest, reviewer, settings):
    """``manage.py recurrence --recompute`` writes every attribution of the host again (new ids): the next
    refresh counts every session again and stores what a full build does."""
    settings.OUTCOME_SUPPORT_SESSIONS = 3
    scenario = Scenario(4, ingest, reviewer)
    retire_two(scenario, reviewer)
    for _ in range(4):
        scenario.batch()
    mark = OutcomeMark.objects.get(host=scenario.host).attribution
    recurrence_recompute(host=scenario.host)
    call_command("recurrence", "--recompute", host=HOST, stdout=open("/dev/null", "w"))  # noqa: SIM115
    scenario.decide()
    assert ingest(session_batch("r", "s2", 50, 2)).ok
    assert OutcomeMark.objects.get(host=scenario.host).attribution > mark
    assert_a_full_build_changes_nothing(scenario)
    for _ in range(3):
        recurrence_recompute(host=scenario.host)
        scenario.step()
        outcomes_refresh(host=scenario.host)
        assert_a_full_build_changes_nothing(scenario)


@pytest.mark.parametrize("mark_too", [True, False])
def test_outcomes_of_older_rules_are_rebuilt_not_mixed(mark_too, ingest, reviewer, settings):
    """Outcomes (and kept rows) stored by an older rules' version are judged again, all of them, at the
    next refresh: none is left at the old version, and the rows are a full build's."""
    settings.OUTCOME_SUPPORT_SESSIONS = 3
    scenario = Scenario(5, ingest, reviewer)
    retire_two(scenario, reviewer)
    for _ in range(5):
        scenario.step()
    outcomes_refresh(host=scenario.host)
    # what the older rules left: another evidence, another digest, another version
    DecisionOutcome.objects.filter(host=HOST).update(
        version=OUTCOMES_VERSION - 1, evidence={"corrections": [], "why": "old"}, digest="0" * 16
    )
    if mark_too:
        OutcomeMark.objects.filter(host=scenario.host).update(version=(OUTCOMES_VERSION - 1) * 1000 + 1)
        OutcomeKey.objects.filter(host=scenario.host).update(corrections=b"", times=b"", sessions=b"")
    outcomes_refresh(host=scenario.host)
    assert set(DecisionOutcome.objects.filter(host=HOST).values_list("version", flat=True)) == {
        OUTCOMES_VERSION
    }
    assert not DecisionOutcome.objects.filter(host=HOST, digest="0" * 16).exists()
    assert_a_full_build_changes_nothing(scenario)


@postgres_only
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("seed", range(2))
def test_ingests_decisions_verdicts_and_full_builds_at_once(seed, reviewer, second_reviewer, settings):
    """Four writers at once on one host, each several steps: ingests of sessions old and new, retires and
    restores, verdicts, a full build; then one refresh leaves what a build from nothing stores."""
    import random

    from lessons.models import Lesson
    from review.services.decisions import lesson_restore as restore

    settings.OUTCOME_SUPPORT_SESSIONS = 4
    scenario = Scenario(seed, ingest_records, reviewer)
    retire_two(scenario, reviewer)
    scenario.batch()

    def ingester(tag):
        rng = random.Random(f"{seed}{tag}")

        def run():
            for n in range(4):
                session = f"s{rng.randint(0, 6)}"
                ingested(session_batch(f"{tag}{n}", session, rng.choice([2, 5, 30, 90]), rng.randint(1, 3)))

        return run

    def decider():
        rng = random.Random(f"{seed}d")

        def run():
            from django.utils import timezone

            for _ in range(4):
                lessons = list(Lesson.objects.filter(host__name=HOST).order_by("id"))
                live = [x for x in lessons if x.status == "live"]
                retired = [x for x in lessons if x.status == "retracted"]
                try:
                    if retired and rng.random() < 0.5:
                        restore(
                            lesson=rng.choice(retired),
                            actor=second_reviewer,
                            reason="back",
                            now=timezone.now(),
                        )
                    elif live:
                        pick = rng.choice(live)
                        lessons_retire(
                            host=pick.host, hashes=[pick.hash], actor=second_reviewer, reason="dup"
                        )
                except DecisionRefused:  # the lesson changed meanwhile (a stale pile among them)
                    pass

        return run

    def builder():
        def run():
            for _ in range(2):
                call_command("outcomes", host=HOST, stdout=open("/dev/null", "w"))  # noqa: SIM115

        return run

    results = race([ingester("p"), ingester("q"), decider(), builder()])
    assert results == ["ok"] * 4
    outcomes_refresh(host=scenario.host)
    assert_a_full_build_changes_nothing(scenario)
