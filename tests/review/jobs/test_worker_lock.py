"""The background worker pauses while another writer holds SQLite's write lock longer than its busy
timeout, then runs its tasks; the backport's worker stopped with "database is locked" (the attacker's
finding 3). The scenario: tests/review/jobs/worker_lock_scenario.py."""

from __future__ import annotations

from tests.scenarios import run_sqlite_scenario


def test_the_worker_waits_out_a_held_write_lock_and_runs_its_task(tmp_path):
    result = run_sqlite_scenario(
        "tests.review.jobs.worker_lock_scenario", database=tmp_path / "worker.sqlite3"
    )
    assert result == {"status": "SUCCESSFUL", "return_value": 0, "waited_for_the_lock": True}
