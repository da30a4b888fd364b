"""A large API ingest runs in the background: 202 and a job URL, the worker (django-tasks-db's
``db_worker``, run for real) does the ingest, the job gives state, progress and the import report; a job
whose worker died is run again and ends with the same rows. spec: issue 13, Build 2; docs/api.md ("Jobs").
"""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

import lessons.ingest.passes as passes
from lessons.core.text import lesson_hash
from lessons.ingest import checkpoints, state
from lessons.ingest.passes import ingest_sources
from lessons.ingest.reading import bytes_source
from lessons.models import Lesson
from lessons.services.entity_counts import entity_counts_check
from review.models import ImportJob
from review.services import jobs
from review.services.jobs import E_INCOMPLETE, job_json, job_run
from review.tasks.ingest import E_REFUSED_WRITTEN, RERUN_NOTE
from tests.builders import numbered_lesson
from tests.scenarios import run_sqlite_scenario

NS = "desk.jobs"
# The worker closes and reopens its database connections between tasks, as in production: the tests see
# committed rows, not a test transaction (which the worker's first close would end).
pytestmark = pytest.mark.django_db(transaction=True)


def batch(n: int, host: str = "alpha") -> bytes:
    lines = [{"type": "host", "name": host, "max_active": 3, "budget_enabled": True}]
    lines += [numbered_lesson(i, namespace=NS, host=host) for i in range(n)]
    return ("\n".join(json.dumps(r) for r in lines) + "\n").encode()


def run_worker(*extra: str) -> None:
    """django-tasks-db's worker, for real: every queued task, then it exits."""
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", "--verbosity", "0", *extra)


@pytest.fixture
def background(settings):
    """Any body of 200 bytes or more goes to the background."""
    settings.INGEST_BACKGROUND_BYTES = 200


def test_a_large_ingest_answers_202_with_a_job_url_and_writes_nothing_yet(background, call, make_token):
    token = make_token()
    response = call("post", "/ingest", token, batch(5), content_type="application/x-ndjson")
    assert response.status_code == 202
    body = response.json()
    assert body["state"] == "queued"
    assert body["url"] == f"/api/v1/jobs/{body['id']}"
    assert response["Location"] == body["url"]
    assert body["progress"] == {"phase": "", "lines_done": 0, "lines_total": 6, "percent": 0}
    assert body["report"] is None
    assert Lesson.objects.count() == 0
    task = DBTaskResult.objects.get()
    assert task.status == "READY"
    assert task.args_kwargs == {"args": [body["id"]], "kwargs": {}}


def test_the_worker_runs_the_job_and_the_job_url_gives_the_report(background, call, make_token):
    token = make_token()
    job_url = call("post", "/ingest", token, batch(5), content_type="application/x-ndjson").json()["url"]
    run_worker()
    assert Lesson.objects.filter(host__name="alpha").count() == 5
    body = call("get", job_url.removeprefix("/api/v1"), token).json()
    assert body["state"] == "succeeded"
    assert body["error"] == ""
    assert body["progress"] == {"phase": "done", "lines_done": 6, "lines_total": 6, "percent": 100}
    assert body["report"]["written"] is True
    assert body["report"]["counts"]["lesson"]["created"] == 5
    assert body["report"]["lines"] == 6
    assert DBTaskResult.objects.get().status == "SUCCESSFUL"
    assert ImportJob.objects.get().payload is None  # written: the body is not kept


def test_a_small_ingest_stays_synchronous(settings, call, make_token):
    settings.INGEST_BACKGROUND_BYTES = 1024 * 1024
    response = call("post", "/ingest", make_token(), batch(5), content_type="application/x-ndjson")
    assert response.status_code == 200
    assert response.json()["written"] is True
    assert ImportJob.objects.count() == 0


def test_a_refused_batch_is_a_failed_job_with_its_report_and_nothing_written(background, call, make_token):
    token = make_token()
    body = batch(5) + b'{"type": "lesson"}\n'
    job_url = call("post", "/ingest", token, body, content_type="application/x-ndjson").json()["url"]
    run_worker()
    job = call("get", job_url.removeprefix("/api/v1"), token).json()
    assert job["state"] == "failed"
    assert job["error"] == "ingest refused: 1 invalid line(s), nothing written"
    assert job["report"]["written"] is False
    assert Lesson.objects.count() == 0


def test_a_host_token_sees_only_its_hosts_jobs(background, call, make_token, hosts):
    all_hosts = make_token(name="all")
    beta = make_token(host=hosts["beta"], name="beta")
    job_id = call("post", "/ingest", all_hosts, batch(5), content_type="application/x-ndjson").json()["id"]
    response = call("get", f"/jobs/{job_id}", beta)
    assert response.status_code == 404
    assert response.json() == {"error": "not found", "details": [f"no ingest job {job_id} for this token"]}
    assert call("get", f"/jobs/{job_id}", all_hosts).status_code == 200


def test_a_job_needs_a_token_with_the_ingest_scope(background, call, make_token):
    job_id = call("post", "/ingest", make_token(), batch(5), content_type="application/x-ndjson").json()["id"]
    assert call("get", f"/jobs/{job_id}").status_code == 401
    reader = make_token(ingest=False, name="reader")
    assert call("get", f"/jobs/{job_id}", reader).status_code == 403


def _die_mid_job(job: ImportJob, minutes_ago: int = 10) -> None:
    """What a worker killed mid-job leaves: its task claimed and running, the job running on attempt 1
    with a heartbeat from before it died (its ingest transaction rolled back with the process)."""
    then = timezone.now() - timedelta(minutes=minutes_ago)
    DBTaskResult.objects.filter(id=job.task_id).update(status="RUNNING", started_at=then, worker_ids=["dead"])
    ImportJob.objects.filter(pk=job.pk).update(
        state="running", attempt=1, started_at=then, heartbeat_at=then, phase="lessons", lines_done=3
    )


def test_a_job_whose_worker_died_is_run_again_by_the_next_worker(background, call, make_token):
    token = make_token()
    job_id = call("post", "/ingest", token, batch(5), content_type="application/x-ndjson").json()["id"]
    job = ImportJob.objects.get(pk=job_id)
    _die_mid_job(job)
    assert DBTaskResult.objects.ready().count() == 0  # nothing left for a worker without recovery
    run_worker("--stale-after", "60")
    job.refresh_from_db()
    assert (job.state, job.attempt, job.error) == ("succeeded", 2, "")
    assert job.report["counts"]["lesson"]["created"] == 5
    assert Lesson.objects.filter(host__name="alpha").count() == 5
    assert sorted(DBTaskResult.objects.values_list("status", flat=True)) == ["FAILED", "SUCCESSFUL"]


def test_a_job_that_died_after_its_ingest_committed_reruns_with_the_same_rows(background, call, make_token):
    token = make_token()
    body = batch(5)
    job_id = call("post", "/ingest", token, body, content_type="application/x-ndjson").json()["id"]
    # the dead attempt's ingest committed, then the worker died before it recorded the report
    assert ingest_sources(sources=[bytes_source(body)], default_host=None).written
    rows = sorted(Lesson.objects.values_list("id", "hash", "status", "updated_at"))
    _die_mid_job(ImportJob.objects.get(pk=job_id))
    run_worker("--stale-after", "60")
    job = ImportJob.objects.get(pk=job_id)
    assert job.state == "succeeded"
    assert job.report["counts"]["lesson"] == {
        "created": 0,
        "unchanged": 5,
        "updated": 0,
        "held": 0,
        "rejected": 0,
    }
    assert sorted(Lesson.objects.values_list("id", "hash", "status", "updated_at")) == rows


def test_a_running_job_with_a_recent_heartbeat_is_left_alone(background, call, make_token):
    job_id = call("post", "/ingest", make_token(), batch(5), content_type="application/x-ndjson").json()["id"]
    job = ImportJob.objects.get(pk=job_id)
    _die_mid_job(job, minutes_ago=1)
    run_worker("--stale-after", "600")
    job.refresh_from_db()
    assert (job.state, job.attempt) == ("running", 1)
    assert Lesson.objects.count() == 0


def test_a_finished_job_is_not_run_twice(background, call, make_token):
    job_id = call("post", "/ingest", make_token(), batch(5), content_type="application/x-ndjson").json()["id"]
    run_worker()
    finished = ImportJob.objects.get(pk=job_id)
    again = job_run(job_id)
    assert (again.state, again.attempt, again.finished_at) == ("succeeded", 1, finished.finished_at)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="only SQLite writes a job's batch in slices")
def test_a_sliced_job_stopped_after_a_slice_is_run_again_by_the_worker_and_completes(
    background, call, make_token, settings, monkeypatch
):
    settings.INGEST_SLICE_MS = 0  # every chunk of 2 lessons its own slice
    monkeypatch.setattr(state, "CHUNK", 2)
    monkeypatch.setattr(passes, "SLICE_PAUSE_SECONDS", 0)
    commits: list[str] = []

    def disk_full_once_after_two_slices(name: str) -> None:
        commits.append(name)
        if commits.count("slice committed") == 2 and commits[-1] == "slice committed":
            raise OSError("No space left on device")

    monkeypatch.setattr(checkpoints, "reached", disk_full_once_after_two_slices)
    token = make_token()
    job_id = call("post", "/ingest", token, batch(5), content_type="application/x-ndjson").json()["id"]
    run_worker()  # attempt 1 stops after two slices (4 lessons); the worker runs attempt 2 at once
    job = ImportJob.objects.get(pk=job_id)
    assert (job.state, job.attempt, job.error, job.payload) == ("succeeded", 2, "", None)
    assert job.report["counts"]["lesson"]["created"] == 1 and job.report["counts"]["lesson"]["unchanged"] == 4
    assert job.report["notes"] == [RERUN_NOTE.format(n=2)]
    assert Lesson.objects.filter(host__name="alpha").count() == 5
    assert sorted(DBTaskResult.objects.values_list("status", flat=True)) == ["SUCCESSFUL", "SUCCESSFUL"]


@pytest.mark.skipif(connection.vendor != "sqlite", reason="only SQLite writes a job's batch in slices")
def test_a_sliced_job_that_keeps_stopping_part_way_fails_after_three_attempts_saying_part_is_written(
    background, call, make_token, settings, monkeypatch
):
    settings.INGEST_SLICE_MS = 0
    monkeypatch.setattr(state, "CHUNK", 2)
    monkeypatch.setattr(passes, "SLICE_PAUSE_SECONDS", 0)

    def disk_full_after_each_slice(name: str) -> None:
        if name == "slice committed":
            raise OSError("No space left on device")

    monkeypatch.setattr(checkpoints, "reached", disk_full_after_each_slice)
    job_id = call("post", "/ingest", make_token(), batch(5), content_type="application/x-ndjson").json()["id"]
    run_worker()
    job = ImportJob.objects.get(pk=job_id)
    assert (job.state, job.attempt, job.error) == ("failed", 3, E_INCOMPLETE.format(kind="OSError"))
    assert Lesson.objects.filter(host__name="alpha").count() == 2  # each attempt wrote its first slice
    assert job.payload is None
    # the counts of what was written were to follow the rows: behind until the batch is sent again
    assert {line.split(":")[0] for line in entity_counts_check()} == {
        "host alpha entity desk.jobs/invoice_capture",
        "host alpha totals",
    }
    monkeypatch.setattr(checkpoints, "reached", lambda name: None)
    again = call("post", "/ingest", make_token(name="again"), batch(5), content_type="application/x-ndjson")
    run_worker()
    assert ImportJob.objects.get(pk=again.json()["id"]).state == "succeeded"
    assert Lesson.objects.filter(host__name="alpha").count() == 5
    assert entity_counts_check() == []


@pytest.mark.skipif(connection.vendor != "sqlite", reason="only SQLite writes a job's batch in slices")
def test_a_line_refused_after_slices_were_written_does_not_say_nothing_was_written(
    background, call, make_token, settings, monkeypatch
):
    """The check before the first slice passes the batch; between slices another writer stores other
    content under the hash its last lesson gives, so the write phase refuses that line only: the job's
    error says the rest was written, as it was."""
    settings.INGEST_SLICE_MS = 0  # every chunk of 2 lessons its own slice
    monkeypatch.setattr(state, "CHUNK", 2)
    monkeypatch.setattr(passes, "SLICE_PAUSE_SECONDS", 0)
    other = {"type": "lesson", "host": "alpha", "namespace": NS, "subject": "other", "text": "Other text."}
    other_hash = lesson_hash(NS, "other", "Other text.")
    lines = [json.loads(line) for line in batch(5).splitlines()]
    lines[-1]["hash"] = other_hash

    def another_writer_after_the_first_slice(name: str) -> None:
        if name == "slice committed" and not Lesson.objects.filter(hash=other_hash).exists():
            ingest_sources(sources=[bytes_source(json.dumps({**other, "created_at": 1}).encode(), name="b")])

    monkeypatch.setattr(checkpoints, "reached", another_writer_after_the_first_slice)
    body = "\n".join(json.dumps(r) for r in lines).encode()
    job_id = call("post", "/ingest", make_token(), body, content_type="application/x-ndjson").json()["id"]
    run_worker()
    job = ImportJob.objects.get(pk=job_id)
    assert (job.state, job.error) == ("failed", E_REFUSED_WRITTEN.format(n=1))
    assert (job.report["written"], job.report["counts"]["lesson"]["created"]) == (True, 4)
    assert [e["line"] for e in job.report["errors"]] == [6]
    assert Lesson.objects.filter(host__name="alpha", subject="invoice_capture").count() == 4


@pytest.mark.skipif(connection.vendor != "sqlite", reason="only SQLite writes a job's batch in slices")
def test_a_sliced_job_writes_its_progress_and_heartbeat_between_slices(
    background, call, make_token, settings, monkeypatch
):
    """The progress connection never waits for the lock, so inside a slice it cannot write: the job's
    phase and heartbeat go in after each commit. Before, they stood at the validation's last report for
    the whole write phase, and one longer than JOBS_STALE_SECONDS looked like a dead worker (queued
    again while it ran)."""
    settings.INGEST_SLICE_MS = 0  # every chunk of 2 lessons its own slice
    monkeypatch.setattr(state, "CHUNK", 2)
    monkeypatch.setattr(passes, "SLICE_PAUSE_SECONDS", 0)
    monkeypatch.setattr(jobs, "PROGRESS_EVERY_SECONDS", 0)
    seen: list[tuple[str, int, int, bool]] = []
    last = {"heartbeat": None}

    def look_at_the_job(name: str) -> None:
        if name == "slice committed":
            job = ImportJob.objects.get()
            percent = job_json(job)["progress"]["percent"]
            seen.append((job.phase, job.lines_done, percent, job.heartbeat_at != last["heartbeat"]))
            last["heartbeat"] = job.heartbeat_at

    monkeypatch.setattr(checkpoints, "reached", look_at_the_job)
    body = batch(5)
    call("post", "/ingest", make_token(), body, content_type="application/x-ndjson")
    run_worker()
    assert ImportJob.objects.get().state == "succeeded"
    # the write passes' lines: the bytes up to a chunk's last line, as a share of the body's 6 lines
    ends = [len(b"".join(body.splitlines(keepends=True)[:n])) for n in (3, 5, 6)]
    assert [6 * end // len(body) for end in ends] == [2, 4, 6]
    # 3 slices of lessons (2 + 2 + 1), then the entity counts' one step (1 entity)
    assert seen == [
        ("lessons", 2, 44, True),
        ("lessons", 4, 55, True),
        ("lessons", 6, 66, True),
        ("lessons", 6, 66, True),
    ]


def test_a_sliced_job_waits_for_another_writer_holding_the_lock_between_its_slices(tmp_path):
    """Between two slices another writer holds SQLite's lock past the busy timeout: the next slice waits
    for it as a one-transaction ingest does (up to WRITE_ATTEMPTS tries), and the job completes. Before,
    the job failed part-way ("after part of the batch was written"), its counts behind its rows and its
    body dropped (tests/review/jobs/slice_lock_scenario.py, on a file database)."""
    result = run_sqlite_scenario(
        "tests.review.jobs.slice_lock_scenario", database=tmp_path / "slices.sqlite3"
    )
    assert result == {"state": "succeeded", "error": "", "lessons": 40, "check": []}


# --- what a finished job keeps (issue 21, item 4) -----------------------------------------------


@pytest.mark.parametrize("query", ["?dry_run=1", "", "?skip_invalid=1&dry_run=1"])
def test_a_finished_job_keeps_no_body_a_dry_run_neither(background, call, make_token, query):
    body = batch(5)
    job_id = call("post", "/ingest" + query, make_token(), body, content_type="application/x-ndjson").json()[
        "id"
    ]
    assert bytes(ImportJob.objects.get(pk=job_id).payload) == body  # queued: the worker needs it
    run_worker()
    job = ImportJob.objects.get(pk=job_id)
    assert (job.state, job.payload, job.payload_bytes) == ("succeeded", None, len(body))


def test_a_refused_job_keeps_no_body(background, call, make_token):
    body = batch(5) + b"{not json\n"
    job_id = call("post", "/ingest", make_token(), body, content_type="application/x-ndjson").json()["id"]
    run_worker()
    assert ImportJob.objects.filter(pk=job_id).values_list("state", "payload").get() == ("failed", None)


def finished_job(days_ago: float, *, state: str = "succeeded", kind: str = "api") -> int:
    """A job that ended ``days_ago`` days ago, with its task row; its id."""
    job = jobs.job_enqueue(jobs.job_create(kind=kind, payload=b"", options={}))
    ended = timezone.now() - timedelta(days=days_ago)
    ImportJob.objects.filter(pk=job.pk).update(state=state, finished_at=ended, attempt=1, payload=None)
    DBTaskResult.objects.filter(id=job.task_id).update(status="SUCCESSFUL", finished_at=ended)
    return job.pk


def test_the_worker_deletes_the_rows_of_jobs_that_ended_before_the_kept_days(settings):
    settings.JOBS_KEEP_DAYS = 30
    finished_job(31), finished_job(30.5, state="failed")
    recent = finished_job(29)
    queued = jobs.job_create(kind="api", payload=b"{}\n", options={}).pk
    ImportJob.objects.filter(pk=queued).update(created_at=timezone.now() - timedelta(days=90))
    task_of = dict(ImportJob.objects.values_list("id", "task_id"))

    run_worker()

    assert sorted(ImportJob.objects.values_list("id", flat=True)) == sorted([recent, queued])
    kept_tasks = {str(t) for t in DBTaskResult.objects.values_list("id", flat=True)}
    assert kept_tasks == {task_of[recent]}


def test_jobs_prune_counts_what_it_dropped_and_deleted(settings):
    settings.JOBS_KEEP_DAYS = 7
    finished_job(8), finished_job(1)
    assert jobs.jobs_prune() == (0, 1)
    assert jobs.jobs_prune() == (0, 0)


# --- a live job is never taken (issue 21, also seen) --------------------------------------------

LIVE_EXPECTED = {
    "after_second_worker": {"state": "running", "attempt": 1, "phase": "validate"},
    "ended": {"state": "succeeded", "attempt": 1, "error": ""},
    "tasks": ["SUCCESSFUL"],
}


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the in-process run needs PostgreSQL")
def test_on_postgresql_a_quiet_live_job_is_not_taken_by_a_second_worker():
    from tests.review.jobs.live_job_scenario import run

    assert run() == LIVE_EXPECTED


def test_on_sqlite_a_quiet_live_job_is_not_taken_by_a_second_worker(tmp_path):
    result = run_sqlite_scenario("tests.review.jobs.live_job_scenario", database=tmp_path / "live.sqlite3")
    assert result == LIVE_EXPECTED


def test_a_job_whose_process_holds_its_lock_is_alive_and_one_whose_process_let_go_is_not(background):
    from review.services.job_liveness import AliveMark, job_alive
    from review.services.jobs import progress_connection

    job = jobs.job_create(kind="api", payload=b"{}\n", options={})
    assert job_alive(job.pk) is False
    holder = progress_connection()
    mark = AliveMark(job.pk)
    assert mark.hold(holder) is True
    assert job_alive(job.pk) is True
    mark.release()
    holder.close()
    assert job_alive(job.pk) is False
