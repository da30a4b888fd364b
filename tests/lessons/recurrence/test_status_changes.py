"""A status change moves a key's current version, and its counts with it, whichever path made it.

spec: docs/piles-and-recurrence.md, "Lesson keys and versions" (current text: the live version's, else the newest).
"""

from __future__ import annotations

import pytest

from lessons.models import Host, Lesson
from lessons.recurrence.refresh import recurrence_lessons_changed, recurrence_recompute
from review.services.decisions import lesson_restore, lessons_retire
from tests.builders import correction, exposure, host, lesson
from tests.lessons.recurrence.builders import (
    ENTITY,
    HOST,
    clock,
    correction_id,
    counts,
    hash_of,
    snapshot,
    stored_counts,
)

V1 = "Convert `*_at` timestamp columns with `to_utc` in staging models."
V2 = "Convert timestamp columns with `to_utc` in every staging model."
SOLO = "Quote `customer_id` joins explicitly in the orders model."
CORRECTION = "No, convert the `created_at` timestamps with `to_utc`."
ID = {"store": "team-playbook", "lesson_id": "L-1"}


@pytest.fixture
def two_versions(ingest):
    """L-1 has two live texts (V2 newer, so current); s1 and s3 saw only V1, s2 saw V2; all corrected."""
    records = [
        host(name=HOST),
        lesson(host=HOST, **ENTITY, text=V1, created_at="2026-10-01T00:00:00.000Z", **ID),
        lesson(host=HOST, **ENTITY, text=V2, created_at="2026-10-02T00:00:00.000Z", **ID),
        lesson(host=HOST, **ENTITY, text=SOLO, created_at="2026-10-01T00:00:00.000Z"),
    ]
    for session, text in (("s1", V1), ("s2", V2), ("s3", V1)):
        records += [
            exposure(host=HOST, session=session, shown_at=clock("10:00"), text=text, **ID),
            exposure(host=HOST, session=session, shown_at=clock("10:00"), lesson=hash_of(SOLO)),
            correction(
                host=HOST,
                session=session,
                id=correction_id(session, "10:01"),
                text=CORRECTION,
                corrected_at=clock("10:01"),
                turn_started_at=clock("10:00:30"),
            ),
        ]
    records.append(
        correction(
            host=HOST,
            session="s1",
            id=correction_id("s1", "10:02"),
            text="Quote the `customer_id` joins in the orders model.",
            corrected_at=clock("10:02"),
            turn_started_at=clock("10:01:30"),
        )
    )
    report = ingest(records)
    assert report.ok, report.error_lines()
    return {text: Lesson.objects.get(hash=hash_of(text)) for text in (V1, V2, SOLO)}


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Run what a decision defers to its commit (the test's transaction never commits)."""

    def capture(*, execute: bool = True):
        return django_capture_on_commit_callbacks(execute=execute)

    return capture


def key(text: str) -> tuple[str, str]:
    return ("desk", hash_of(text))


def assert_equals_full_recompute() -> None:
    kept = snapshot()
    recurrence_recompute()
    assert snapshot() == kept


def test_the_newest_live_version_holds_the_counts_and_the_other_text_counts_as_earlier(two_versions):
    stored = stored_counts()
    assert stored[key(V2)] == counts(sessions_shown=1, recurred=1, recurred_sessions=1, earlier_version=2)
    assert key(V1) not in stored
    assert stored[key(SOLO)] == counts(sessions_shown=3, recurred=1, recurred_sessions=1)


def test_retiring_the_current_version_moves_the_counts_to_the_live_one(two_versions, reviewer, committed):
    with committed():
        lessons_retire(
            host=Host.objects.get(name="desk"), hashes=[hash_of(V2)], actor=reviewer, reason="worse wording"
        )
    stored = stored_counts()
    assert stored[key(V1)] == counts(sessions_shown=2, recurred=2, recurred_sessions=2, earlier_version=1)
    assert key(V2) not in stored
    assert_equals_full_recompute()


def test_restoring_it_moves_them_back(two_versions, reviewer, committed):
    desk = Host.objects.get(name="desk")
    with committed():
        lessons_retire(host=desk, hashes=[hash_of(V2)], actor=reviewer, reason="worse wording")
    with committed():
        lesson_restore(lesson=Lesson.objects.get(hash=hash_of(V2)), actor=reviewer, reason="it was fine")
    stored = stored_counts()
    assert stored[key(V2)] == counts(sessions_shown=1, recurred=1, recurred_sessions=1, earlier_version=2)
    assert key(V1) not in stored
    assert_equals_full_recompute()


def test_a_source_retracting_the_current_version_moves_the_counts_too(two_versions, ingest):
    # Ingest rebuilds the host in its own transaction; no commit callback is needed.
    report = ingest(
        [
            lesson(
                host=HOST, **ENTITY, text=V2, created_at="2026-10-02T00:00:00.000Z", status="retracted", **ID
            )
        ]
    )
    assert report.ok, report.error_lines()
    assert stored_counts()[key(V1)] == counts(
        sessions_shown=2, recurred=2, recurred_sessions=2, earlier_version=1
    )
    assert key(V2) not in stored_counts()
    assert_equals_full_recompute()


def test_retiring_every_version_leaves_the_counts_on_the_newest(two_versions, reviewer, committed):
    with committed():
        lessons_retire(
            host=Host.objects.get(name="desk"),
            hashes=[hash_of(V1), hash_of(V2)],
            actor=reviewer,
            reason="obsolete",
        )
    assert stored_counts()[key(V2)] == counts(
        sessions_shown=1, recurred=1, recurred_sessions=1, earlier_version=2
    )
    assert_equals_full_recompute()


def test_retiring_a_lesson_without_other_versions_keeps_its_counts(two_versions, reviewer, committed):
    with committed():
        lessons_retire(
            host=Host.objects.get(name="desk"), hashes=[hash_of(SOLO)], actor=reviewer, reason="obsolete"
        )
    assert stored_counts()[key(SOLO)] == counts(sessions_shown=3, recurred=1, recurred_sessions=1)
    assert_equals_full_recompute()


def test_the_counts_move_once_the_decision_is_committed_not_before(two_versions, reviewer, committed):
    with committed(execute=False) as callbacks:
        lessons_retire(host=Host.objects.get(name="desk"), hashes=[hash_of(V2)], actor=reviewer, reason="x")
    solo = counts(sessions_shown=3, recurred=1, recurred_sessions=1)
    assert stored_counts() == {
        key(V2): counts(sessions_shown=1, recurred=1, recurred_sessions=1, earlier_version=2),
        key(SOLO): solo,
    }
    (callback,) = callbacks
    callback()
    assert stored_counts() == {
        key(V1): counts(sessions_shown=2, recurred=2, recurred_sessions=2, earlier_version=1),
        key(SOLO): solo,
    }


def test_a_status_change_that_keeps_the_current_version_writes_nothing(two_versions):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as queries:
        recurrence_lessons_changed(lessons=[two_versions[V1]])
    writes = [q["sql"] for q in queries if q["sql"].split()[0] in ("INSERT", "UPDATE", "DELETE")]
    assert writes == []
    assert len(queries) <= 5  # savepoint, host lock, versions, count rows, release


def test_new_corrections_in_one_session_refresh_only_that_session(two_versions, ingest):
    report = ingest(
        [
            correction(
                host=HOST,
                session="s2",
                id="late",
                text=CORRECTION,
                corrected_at=clock("10:05"),
                turn_started_at=clock("10:04"),
            )
        ]
    )
    assert report.ok
    assert stored_counts()[key(V2)] == counts(
        sessions_shown=1, recurred=2, recurred_sessions=1, earlier_version=2
    )
    assert_equals_full_recompute()


def test_timestamps_in_the_builders_are_utc_with_milliseconds():
    assert clock("10:00") == "2026-10-05T10:00:00.000Z"
    assert clock("10:00:00.019") == "2026-10-05T10:00:00.019Z"
