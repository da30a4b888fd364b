"""A transaction's status changes run ONE recurrence refresh (issue 9): re-ingesting 20 lessons as
retracted, and a retire of several lessons. spec: docs/piles-and-recurrence.md, "Lesson keys and versions".
"""

from __future__ import annotations

from unittest import mock

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lessons.models import Host
from lessons.recurrence import refresh
from lessons.recurrence.refresh import recurrence_recompute
from review.services.decisions import lessons_retire
from tests.builders import correction, exposure, host, lesson
from tests.lessons.recurrence.builders import (
    ENTITY,
    HOST,
    OCT_1,
    clock,
    correction_id,
    counts,
    hash_of,
    snapshot,
    stored_counts,
)

N = 20
ID = {"store": "team-playbook"}
OCT_2 = "2026-10-02T00:00:00.000Z"


def older(i: int) -> str:
    return f"Convert `col_{i}` timestamps with `to_utc` in staging models."


def newer(i: int) -> str:
    return f"Convert the `col_{i}` timestamp columns with `to_utc` in every staging model."


def newer_record(i: int, **fields) -> dict:
    return lesson(host=HOST, **ENTITY, text=newer(i), created_at=OCT_2, lesson_id=f"L-{i}", **ID, **fields)


@pytest.fixture
def keys(ingest):
    """N lesson keys with two live versions (the newer current); session s<i> saw the newer text and was
    corrected on its topic."""
    records = [host(name=HOST)]
    for i in range(N):
        records += [
            lesson(host=HOST, **ENTITY, text=older(i), created_at=OCT_1, lesson_id=f"L-{i}", **ID),
            newer_record(i),
            exposure(
                host=HOST, session=f"s{i}", shown_at=clock("10:00"), text=newer(i), lesson_id=f"L-{i}", **ID
            ),
            correction(
                host=HOST,
                session=f"s{i}",
                id=correction_id(f"s{i}", "10:01"),
                text=f"No, convert `col_{i}` with `to_utc`.",
                corrected_at=clock("10:01"),
                turn_started_at=clock("10:00:30"),
            ),
        ]
    report = ingest(records)
    assert report.ok, report.error_lines()


@pytest.fixture
def refreshes():
    """Count the refresh entry points while the test runs: ``{"keys": n, "sessions": n}``."""
    calls = {"keys": 0, "sessions": 0}
    keys_changed, sessions_refresh = refresh.recurrence_keys_changed, refresh.recurrence_refresh

    def count_keys(**kwargs):
        calls["keys"] += 1
        return keys_changed(**kwargs)

    def count_sessions(**kwargs):
        calls["sessions"] += 1
        return sessions_refresh(**kwargs)

    with (
        mock.patch.object(refresh, "recurrence_keys_changed", count_keys),
        mock.patch.object(refresh, "recurrence_refresh", count_sessions),
    ):
        yield calls


def test_the_newer_versions_hold_the_counts_first(keys):
    stored = stored_counts()
    assert stored[("desk", hash_of(newer(0)))] == counts(sessions_shown=1, recurred=1, recurred_sessions=1)
    assert ("desk", hash_of(older(0))) not in stored


def test_re_ingesting_20_lessons_as_retracted_runs_one_refresh(
    keys, ingest, refreshes, django_capture_on_commit_callbacks
):
    records = [newer_record(i, status="retracted") for i in range(N)]
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with CaptureQueriesContext(connection) as queries:
            report = ingest(records)
    assert report.counts["lesson"] == {"created": 0, "unchanged": 0, "updated": N, "held": 0, "rejected": 0}
    # One refresh of the 20 keys, inside the ingest's transaction; nothing left for after the commit.
    assert refreshes == {"keys": 1, "sessions": 0}
    assert callbacks == []
    # Savepoint, host, the lessons (locked), ONE status update; then the refresh: savepoint, host lock,
    # versions (read once for the whole refresh), count rows, exposed sessions, the sessions' attributions
    # rebuilt (delete, corrections, exposures, insert), the counts (two sums, upsert, stale rows), the
    # entities of the touched versions; then the one entity-counts refresh (the host's totals locked with
    # its budget, the lessons, the pending drafts, the stored rows, one upsert, the totals moved); two
    # releases; after the write, which of the batch's hosts have decisions to judge (docs/decisions.md,
    # "Outcomes": none here).
    assert len(queries) == 27
    stored = stored_counts()
    for i in range(N):
        # The counts moved to the older version, live and now current; the newer text is an earlier one.
        assert stored[("desk", hash_of(older(i)))] == counts(sessions_shown=0, earlier_version=1)
        assert ("desk", hash_of(newer(i))) not in stored
    kept = snapshot()
    recurrence_recompute()
    assert snapshot() == kept


def test_retiring_20_lessons_runs_one_refresh_after_the_commit(
    keys, reviewer, refreshes, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        lessons_retire(
            host=Host.objects.get(name="desk"),
            hashes=[hash_of(newer(i)) for i in range(N)],
            actor=reviewer,
            reason="worse wording",
        )
    assert len(callbacks) == 1
    assert refreshes == {"keys": 1, "sessions": 0}
    stored = stored_counts()
    assert stored[("desk", hash_of(older(0)))] == counts(sessions_shown=0, earlier_version=1)
    kept = snapshot()
    recurrence_recompute()
    assert snapshot() == kept


def test_a_new_current_version_re_attributes_the_sessions_outside_its_batch(ingest):
    # Found by test_incremental's generated batches: the batch that brings V2 (now current) also shows
    # V1 in a new session. Refreshing that session first put L-1's counts on V2, so the key looked
    # unchanged and session "a" kept its attribution made when V1 was current.
    ref = {"store": "team", "lesson_id": "L-1"}
    v1, v2, text = "convert convert `to_utc`", "convert convert convert", "convert convert `to_utc` now"
    first = [
        lesson(host=HOST, **ENTITY, text=v1, created_at=OCT_1, **ref),
        exposure(host=HOST, session="a", shown_at=clock("10:00"), text=v1, **ref),
        correction(
            host=HOST, session="a", id=correction_id("a", "10:00"), text=text, corrected_at=clock("10:00")
        ),
    ]
    assert ingest(first).ok
    assert ingest(
        [
            lesson(host=HOST, **ENTITY, text=v2, created_at=OCT_2, **ref),
            exposure(host=HOST, session="b", shown_at=clock("10:00"), text=v1, **ref),
        ]
    ).ok
    assert stored_counts() == {("desk", hash_of(v2)): counts(earlier_version=1)}
    kept = snapshot()
    recurrence_recompute()
    assert snapshot() == kept
