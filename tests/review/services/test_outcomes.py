"""The outcome of a decision (docs/decisions.md, "Outcomes"), built from stored events with exact times:
a retire supported, contradicted, too early; a retire whose fact another live lesson keeps; a restore
held then regressed; recomputed when an ingest brings new evidence; exported; on both databases."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import OperationalError, connection

from lessons.core.outcomes import EVIDENCE_CORRECTIONS, OUTCOMES_VERSION
from lessons.models import Lesson
from review.models import DecisionOutcome
from review.services.decisions import lesson_restore, lessons_retire
from review.services.outcomes import outcomes_refresh
from tests.builders import lesson
from tests.fixtures.outcomes import HOST, KEEPER, NS, RETIRED, SUBJECT, T, h, retire, session


def stored(decision) -> DecisionOutcome:
    return DecisionOutcome.objects.get(decision=decision)


def test_a_retire_corrected_again_in_two_sessions_is_contradicted(outcome_host, reviewer, ingest):
    decision = retire(outcome_host, reviewer)
    assert ingest(session(1, hours=1, corrected=True) + session(2, hours=2, corrected=True)).ok
    row = stored(decision)  # the ingest's signal recomputed the host's outcomes
    assert (row.outcome, row.sessions_after, row.version) == ("contradicted", 2, OUTCOMES_VERSION)
    ids = {c.ext_id: c.id for c in outcome_host.corrections.all()}
    assert row.evidence == {
        "corrections": [
            {"id": ids["c1"], "session": "s1", "at_ms": int(T.timestamp() * 1000) + 3_660_000},
            {"id": ids["c2"], "session": "s2", "at_ms": int(T.timestamp() * 1000) + 7_260_000},
        ],
        "corrections_total": 2,
        "verdicts": [],
        "why": "corrected on its topic again in 2 sessions after the retire",
    }


def test_a_retire_with_enough_quiet_sessions_is_supported_and_one_too_few_too_early(
    outcome_host, reviewer, ingest
):
    decision = retire(outcome_host, reviewer)
    assert ingest(session(1, hours=1, corrected=False) + session(2, hours=2, corrected=False)).ok
    assert (stored(decision).outcome, stored(decision).sessions_after) == ("too_early", 2)
    assert stored(decision).evidence["why"] == (
        "2 sessions after the retire (3 needed), corrected on its topic in 0"
    )
    assert ingest(session(3, hours=3, corrected=False)).ok
    row = stored(decision)
    assert (row.outcome, row.sessions_after) == ("supported", 3)
    assert row.evidence["why"] == "no correction on its topic in at least 3 sessions after the retire"


def test_sessions_before_the_retire_do_not_count(outcome_host, reviewer, ingest):
    decision = retire(outcome_host, reviewer)
    assert ingest(session(1, hours=-5, corrected=True) + session(2, hours=-4, corrected=True)).ok
    assert (stored(decision).outcome, stored(decision).sessions_after) == ("too_early", 0)


def test_one_session_corrected_among_many_is_not_yet_a_verdict(outcome_host, reviewer, ingest):
    decision = retire(outcome_host, reviewer)
    rows = session(1, hours=1, corrected=True)
    for n in range(2, 6):
        rows += session(n, hours=n, corrected=False)
    assert ingest(rows).ok
    assert (stored(decision).outcome, stored(decision).sessions_after) == ("too_early", 5)
    # enough sessions (3), but one corrected: the sentence says what it waits for (the attacker's finding)
    assert stored(decision).evidence["why"] == (
        "corrected on its topic in 1 session of the 5 after the retire; a second contradicts it"
    )


def test_a_retire_whose_fact_a_live_lesson_keeps_looks_at_the_kept_lesson(outcome_host, reviewer, ingest):
    keeper = lesson(host=HOST, namespace=NS, subject=SUBJECT, text=KEEPER, created_at=1767225600005)
    assert ingest([keeper]).ok
    decision = retire(outcome_host, reviewer)
    # The kept lesson is shown, then the agent is corrected on the topic anyway: charged to the keeper.
    rows = session(1, hours=1, corrected=True, shown=KEEPER, turn=True)
    rows += session(2, hours=2, corrected=True, shown=KEEPER, turn=True)
    assert ingest(rows).ok
    row = stored(decision)
    assert row.outcome == "contradicted"
    assert row.evidence["why"] == (
        "corrected on its topic again in 2 sessions after the retire "
        "(or with the lesson that keeps its fact shown)"
    )


def test_a_restore_held_then_regressed(outcome_host, reviewer, ingest):
    retire(outcome_host, reviewer)
    back = lesson_restore(
        lesson=Lesson.objects.get(hash=h(RETIRED)),
        actor=reviewer,
        reason="needed after all",
        now=datetime(2026, 2, 2, tzinfo=UTC),
    )
    outcomes_refresh(host=outcome_host)
    assert stored(back).outcome == "too_early"
    verdict = {"type": "verdict", "host": HOST, "lesson": h(RETIRED), "metric": "field_accuracy"}
    # a neutral verdict is no verdict either way, and the sentence says which it was (the attacker's finding)
    assert ingest([{**verdict, "verdict": "held_costlier", "measured_at": "2026-02-02T12:00:00Z"}]).ok
    assert (stored(back).outcome, stored(back).evidence["why"]) == (
        "too_early",
        "the restored lesson: re-measured as held_costlier, which neither supports nor contradicts it,"
        " corrected on its topic in 0 sessions",
    )
    assert ingest([{**verdict, "verdict": "held", "measured_at": "2026-02-03T00:00:00Z"}]).ok
    row = stored(back)
    assert (row.outcome, row.evidence["why"]) == ("supported", "the restored lesson: held when re-measured")
    assert row.evidence["verdicts"] == [{"lesson": h(RETIRED), "verdict": "held", "at_ms": 1770076800000}]
    assert ingest([{**verdict, "verdict": "regressed", "measured_at": "2026-02-04T00:00:00Z"}]).ok
    row = stored(back)
    assert (row.outcome, row.evidence["why"]) == (
        "contradicted",
        "the restored lesson: regressed when re-measured",
    )


@pytest.mark.skipif(connection.vendor != "postgresql", reason="PostgreSQL's statistics")
def test_a_whole_recompute_brings_the_outcomes_statistics_up_to_date(outcome_host, reviewer):
    """``manage.py outcomes`` rewrites outcomes wholesale: the planner must not read the log's outcome
    filter by counts from before it (``ANALYZE`` of the table: its row estimate is the one outcome)."""
    retire(outcome_host, reviewer)
    DecisionOutcome.objects.all().delete()

    def estimate() -> float:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT reltuples FROM pg_class WHERE relname = %s", [DecisionOutcome._meta.db_table]
            )
            return cursor.fetchone()[0]

    assert estimate() != 1
    call_command("outcomes", stdout=StringIO())
    assert estimate() == 1


def test_the_command_computes_every_host_and_the_export_streams_them(outcome_host, reviewer, ingest):
    decision = retire(outcome_host, reviewer)
    DecisionOutcome.objects.all().delete()
    out = StringIO()
    call_command("outcomes", stdout=out)
    assert out.getvalue().strip() == "1 outcomes computed, 1 changed: too_early 1"
    out = StringIO()
    call_command(
        "outcomes", stdout=out
    )  # again: nothing new, nothing rewritten (the attacker's "0 computed")
    assert out.getvalue().strip() == "1 outcomes computed, 0 changed: too_early 1"
    out = StringIO()
    call_command("export_outcomes", stdout=out)
    (record,) = [json.loads(line) for line in out.getvalue().splitlines()]
    assert {k: record[k] for k in ("seq", "hash", "host", "action", "outcome", "sessions_after")} == {
        "seq": decision.seq,
        "hash": decision.hash,
        "host": HOST,
        "action": "retire",
        "outcome": "too_early",
        "sessions_after": 0,
    }
    out = StringIO()
    call_command("export_outcomes", "--format", "csv", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "seq,hash,host,action,actor,at,outcome,sessions_after,evidence,computed_at,version"
    assert lines[1].startswith(f"{decision.seq},{decision.hash},{HOST},retire,rita,")


def test_the_evidence_lists_the_first_corrections_and_counts_them_all(outcome_host, reviewer, ingest):
    decision = retire(outcome_host, reviewer)
    rows = []
    for n in range(1, EVIDENCE_CORRECTIONS + 3):
        rows += session(n, hours=n, corrected=True)
    assert ingest(rows).ok
    row = stored(decision)
    assert row.evidence["corrections_total"] == EVIDENCE_CORRECTIONS + 2
    assert [c["session"] for c in row.evidence["corrections"]] == [
        f"s{n}" for n in range(1, EVIDENCE_CORRECTIONS + 1)
    ]
    assert (
        row.evidence["why"]
        == f"corrected on its topic again in {EVIDENCE_CORRECTIONS + 2} sessions after the retire"
    )


def test_a_refresh_rewrites_only_what_it_revised(outcome_host, reviewer, ingest):
    decision = retire(outcome_host, reviewer)
    assert ingest(session(1, hours=1, corrected=False)).ok
    first = stored(decision)
    assert (first.outcome, first.sessions_after) == ("too_early", 1)
    assert outcomes_refresh(host=outcome_host) == 0  # nothing new: nothing written
    assert stored(decision).computed_at == first.computed_at
    # too early: its count of sessions is what it waits on, so a new session revises it
    assert ingest(session(2, hours=2, corrected=True)).ok
    assert (stored(decision).outcome, stored(decision).sessions_after) == ("too_early", 2)
    assert ingest(session(3, hours=3, corrected=True)).ok
    contradicted = stored(decision)
    assert (contradicted.outcome, contradicted.sessions_after) == ("contradicted", 3)
    # contradicted: a quiet session changes only the count, which is dated by computed_at: not rewritten
    assert ingest(session(4, hours=4, corrected=False)).ok
    row = stored(decision)
    assert (row.outcome, row.sessions_after, row.computed_at) == ("contradicted", 3, contradicted.computed_at)
    # a new correction on its topic adds to the corrections it lists: rewritten, with the count of then
    assert ingest(session(5, hours=5, corrected=True)).ok
    row = stored(decision)
    assert (row.outcome, row.sessions_after, row.evidence["corrections_total"]) == ("contradicted", 5, 3)


def test_a_too_early_restore_is_not_rewritten_for_a_larger_count_of_sessions(outcome_host, reviewer, ingest):
    """A restore waits for verdicts and corrections, not sessions: a quiet session changes only its count,
    which stays as of its computed_at; a retire still too early waits for sessions, and is rewritten."""
    from datetime import timedelta

    retire(outcome_host, reviewer)
    restore = lesson_restore(
        lesson=Lesson.objects.get(hash=h(RETIRED)),
        actor=reviewer,
        reason="back",
        now=T + timedelta(minutes=5),
    )
    (other,) = lessons_retire(
        host=outcome_host, hashes=[h(RETIRED)], actor=reviewer, reason="again", now=T + timedelta(minutes=10)
    )
    assert ingest(session(1, hours=1, corrected=False)).ok
    first, waiting = stored(restore), stored(other)
    assert (first.outcome, first.sessions_after, waiting.outcome, waiting.sessions_after) == (
        "too_early",
        1,
        "too_early",
        1,
    )
    assert ingest(session(2, hours=2, corrected=False)).ok
    row = stored(restore)
    assert (row.outcome, row.sessions_after, row.computed_at) == ("too_early", 1, first.computed_at)
    assert (stored(other).sessions_after, stored(other).computed_at > waiting.computed_at) == (2, True)


def test_a_contradicted_retire_listing_its_first_corrections_is_not_rewritten_for_later_ones(
    outcome_host, reviewer, ingest
):
    """Once it lists its first ``EVIDENCE_CORRECTIONS`` corrections, a contradicted retire stays as computed:
    more corrections after those change its total and the count in its sentence only (rules' version 3)."""
    decision = retire(outcome_host, reviewer)
    rows = []
    for n in range(1, EVIDENCE_CORRECTIONS + 1):
        rows += session(n, hours=n, corrected=True)
    assert ingest(rows).ok
    first = stored(decision)
    assert (first.outcome, first.evidence["corrections_total"]) == ("contradicted", EVIDENCE_CORRECTIONS)
    assert ingest(session(20, hours=20, corrected=True)).ok
    row = stored(decision)
    assert (row.computed_at, row.digest, row.evidence) == (first.computed_at, first.digest, first.evidence)
    # what a whole recompute finds says one more, and is still not a revision of it
    assert outcomes_refresh(host=outcome_host, full=True) == 0
    # a correction among the first listed (before the tenth) changes what it lists: rewritten
    assert ingest(session(30, hours=0.5, corrected=True)).ok
    row = stored(decision)
    assert row.evidence["corrections"][0]["session"] == "s30"
    assert (row.evidence["corrections_total"], row.evidence["why"]) == (
        EVIDENCE_CORRECTIONS + 2,
        f"corrected on its topic again in {EVIDENCE_CORRECTIONS + 2} sessions after the retire",
    )


def test_outcomes_of_an_older_rules_version_are_rewritten(outcome_host, reviewer, ingest):
    decision = retire(outcome_host, reviewer)
    DecisionOutcome.objects.filter(decision=decision).update(version=OUTCOMES_VERSION - 1)
    assert outcomes_refresh(host=outcome_host) == 1
    assert stored(decision).version == OUTCOMES_VERSION


def test_a_lock_met_by_the_recompute_leaves_the_committed_batch_as_it_is(
    outcome_host, reviewer, ingest, monkeypatch, caplog
):
    """The attacker's finding: the recompute ran inside the ingest's write retries, so a lock it met made a
    committed batch count as refused ("nothing was kept"), or be written again and counted "unchanged"."""
    import review.services.outcomes as outcomes

    decision = retire(outcome_host, reviewer)
    calls = []

    def locked(**kwargs):
        calls.append(kwargs)
        raise OperationalError("database is locked")

    monkeypatch.setattr(outcomes, "outcomes_refresh", locked)
    report = ingest(session(1, hours=1, corrected=True))
    assert (report.ok, report.counts["correction"]["created"], len(calls)) == (True, 1, 1)
    assert outcome_host.corrections.filter(ext_id="c1").exists()
    assert not DecisionOutcome.objects.filter(decision=decision).exists()  # left for the next refresh
    assert outcomes.NOT_RECOMPUTED % (HOST, "database is locked", HOST) in caplog.text


def test_a_correction_charged_to_the_kept_lesson_still_counts_after_it_is_retired(
    outcome_host, reviewer, ingest
):
    """The attacker's finding: retiring the kept restatement later took its corrections out of the first
    retire's evidence (they were counted only while it was live); it was shown when they were made."""
    keeper = lesson(host=HOST, namespace=NS, subject=SUBJECT, text=KEEPER, created_at=1767225600005)
    assert ingest([keeper]).ok
    decision = retire(outcome_host, reviewer)
    rows = session(1, hours=1, corrected=True) + session(2, hours=2, corrected=True, shown=KEEPER, turn=True)
    assert ingest(rows).ok
    assert (stored(decision).outcome, stored(decision).evidence["corrections_total"]) == ("contradicted", 2)
    retire(outcome_host, reviewer, text=KEEPER)
    assert ingest(session(3, hours=3, corrected=False)).ok
    row = stored(decision)
    assert (row.outcome, [c["session"] for c in row.evidence["corrections"]]) == (
        "contradicted",
        ["s1", "s2"],
    )


def test_two_retires_of_one_lesson_too_early_each_name_their_own_count(outcome_host, reviewer, ingest):
    # the same lesson, no correction since either: one outcome kind, but each sentence has its own count
    first = retire(outcome_host, reviewer)
    lesson_restore(
        lesson=Lesson.objects.get(hash=h(RETIRED)),
        actor=reviewer,
        reason="needed after all",
        now=datetime.fromtimestamp(T.timestamp() + 1800, tz=UTC),
    )
    (second,) = lessons_retire(
        host=outcome_host,
        hashes=[h(RETIRED)],
        actor=reviewer,
        reason="restates another after all",
        now=datetime.fromtimestamp(T.timestamp() + 5400, tz=UTC),
    )
    assert ingest(session(1, hours=1, corrected=False) + session(2, hours=2, corrected=False)).ok
    assert [
        (stored(d).outcome, stored(d).sessions_after, stored(d).evidence["why"]) for d in (first, second)
    ] == [
        ("too_early", 2, "2 sessions after the retire (3 needed), corrected on its topic in 0"),
        ("too_early", 1, "1 session after the retire (3 needed), corrected on its topic in 0"),
    ]


def test_corrections_within_one_millisecond_are_listed_by_id_as_before(outcome_host, reviewer, ingest):
    """The evidence lists corrections in ``(at_ms, id)`` order (``TopicIndex``, as before the rewrite of
    the refresh, d7fa7e0): two corrections stored within one millisecond, the later-numbered one first
    by its microseconds (a row not written by the ingest, which keeps milliseconds), keep that order."""
    from datetime import timedelta

    from lessons.models import Correction

    decision = retire(outcome_host, reviewer)
    assert ingest(session(1, hours=1, corrected=True) + session(2, hours=2, corrected=True)).ok
    same_ms = T + timedelta(hours=3)
    Correction.objects.filter(ext_id="c1").update(corrected_at=same_ms + timedelta(microseconds=900))
    Correction.objects.filter(ext_id="c2").update(corrected_at=same_ms + timedelta(microseconds=100))
    outcomes_refresh(host=outcome_host)
    ids = {c.ext_id: c.id for c in outcome_host.corrections.all()}
    assert ids["c1"] < ids["c2"]
    listed = [c["id"] for c in stored(decision).evidence["corrections"]]
    assert listed == [ids["c1"], ids["c2"]]
