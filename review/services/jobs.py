"""Jobs: background work run by the task worker instead of the request (issue 13, Build 2). What each
kind of job does is its module in review/tasks/ (``runner_for``); this is what they share.

A job's payload (an API body or an uploaded zip) and options are stored in its ``ImportJob`` row, and the
task (``import_job_task``, django-tasks through the database backend) names only the job's id, so:

- the request answers at once (API: 202 and the job's URL; the import page: the job page);
- a worker that dies mid-job (``kill -9``, a restart, a lost machine) leaves the job ``running`` with a
  stale ``heartbeat_at`` and releases the job's liveness lock (review/services/job_liveness.py);
  ``jobs_recover`` (run by ``manage.py db_worker`` when it starts and every ``RECOVER_EVERY_SECONDS``)
  queues it again, and the next run starts over. A quiet job whose process still holds its lock is
  alive and left alone. The ingest is all-or-nothing
  (one transaction, ``lessons.ingest.passes``), so the dead attempt wrote nothing, and a finished ingest
  run again writes the same rows ("unchanged"): a re-run never duplicates or half-writes;
- only the job's current ``attempt`` may finish it (a conditional update), so a slow first attempt that
  is still alive after all cannot overwrite the report of the attempt that replaced it.

A recount job (kind ``recount``, queued by review/services/recount.py) goes the same way: stored, claimed,
recovered, finished by its attempt; its progress counts hosts.

Progress (``JobProgress``) is written through a second database connection in autocommit, so that the
page can read it while the ingest's own transaction is open; where that connection cannot write (SQLite
allows one writer, and the ingest holds it while it writes), a progress write is skipped, never waited
for. A sliced write (SQLite jobs) therefore reports its progress after each slice's commit, so that its
phase and ``heartbeat_at`` move while it writes (lessons/ingest/passes.py, "Slices").
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import BinaryIO

from django.conf import settings
from django.db import DatabaseError, connection, connections
from django.utils import timezone
from django_tasks import task

from lessons.core.text import format_datetime
from lessons.ingest.passes import IngestIncomplete
from lessons.ingest.reading import Source
from lessons.services.data_version import global_only
from review.models import ImportJob
from review.services.job_liveness import AliveMark, job_alive
from review.tasks import runner_for
from review.tasks.recount import E_RECOUNT_FAILED

logger = logging.getLogger(__name__)

State = ImportJob.State
PROGRESS_EVERY_SECONDS = 0.5
WRITE_PHASES = ("lessons", "references")  # the ingest's passes over its spooled records
RECOVER_EVERY_SECONDS = 30

E_WORKER_FAILED = "the import failed on the server ({kind}); nothing was written"
# A job whose sliced write failed part-way (IngestIncomplete) is queued again, with its body, up to this
# many attempts in all: each run completes what the last one wrote (the batch is idempotent).
INCOMPLETE_ATTEMPTS = 3
E_INCOMPLETE = (
    "the import failed on the server ({kind}) after part of the batch was written (SQLite writes a large "
    "batch in slices); send the batch again to complete it: what is already stored counts as unchanged"
)


def payload_lines(payload: bytes) -> int:
    """The number of lines in ``payload`` (a last line without its newline counts)."""
    if not payload:
        return 0
    return payload.count(b"\n") + (0 if payload.endswith(b"\n") else 1)


def job_create(
    *,
    kind: str,
    payload: bytes,
    options: dict,
    host: str = "",
    filename: str = "",
    created_by=None,
    token_name: str = "",
) -> ImportJob:
    """A new ``queued`` job holding ``payload`` (bytes) and ``options`` (JSON: ``default_host``,
    ``only_host``, ``skip_invalid``, ``dry_run``); not yet enqueued (``job_enqueue`` or ``job_run``)."""
    return ImportJob.objects.create(
        kind=kind,
        payload=payload,
        payload_bytes=len(payload),
        options=options,
        host=host,
        filename=filename,
        lines_total=payload_lines(payload) if kind == ImportJob.Kind.API else 0,
        created_by=created_by,
        token_name=token_name,
    )


def job_enqueue(job: ImportJob) -> ImportJob:
    """Hand ``job`` to the task worker (a ``DBTaskResult`` row beside it); returns the job."""
    result = import_job_task.enqueue(job.pk)
    ImportJob.objects.filter(pk=job.pk).update(task_id=str(result.id))
    job.task_id = str(result.id)
    return job


@task()
def import_job_task(job_id: int) -> str:
    """The task the worker runs: ``job_run(job_id)``; returns the job's final state."""
    job = job_run(job_id)
    return job.state if job is not None else "missing"


def job_run(job_id: int) -> ImportJob | None:
    """Run job ``job_id`` now, in this process, unless it has finished or is running elsewhere.

    Claims the job (``queued`` → ``running``, ``attempt`` + 1, in one conditional update), runs the ingest
    with progress, then records the report and the final state if this attempt is still the job's.
    Returns the job as it ended (None if there is no such job). Never raises for bad input: a refused
    batch or zip is a ``failed`` job with the reason in ``error``.
    """
    now = timezone.now()
    job = ImportJob.objects.filter(pk=job_id).first()
    if job is None or job.state != State.QUEUED:
        return job
    attempt = job.attempt + 1
    claimed = ImportJob.objects.filter(pk=job_id, state=State.QUEUED, attempt=job.attempt).update(
        state=State.RUNNING,
        attempt=attempt,
        started_at=now,
        heartbeat_at=now,
        phase="",
        lines_done=0,
    )
    if not claimed:
        return ImportJob.objects.get(pk=job_id)
    job.refresh_from_db()
    progress = JobProgress(job)
    progress.hold_alive()
    try:
        state, report, error = runner_for(job.kind)(job, progress)
    except IngestIncomplete as exc:
        logger.exception("import job %s failed after %s committed slice(s)", job_id, exc.slices)
        if attempt < INCOMPLETE_ATTEMPTS:
            return _queue_again(job, attempt)
        state, report, error = State.FAILED, None, E_INCOMPLETE.format(kind=type(exc.__cause__).__name__)
    except Exception as exc:  # noqa: BLE001 - the worker's last line of defence: one line on the job
        logger.exception("import job %s failed", job_id)
        failed = E_RECOUNT_FAILED if job.kind == ImportJob.Kind.RECOUNT else E_WORKER_FAILED
        state, report, error = State.FAILED, None, failed.format(kind=type(exc).__name__)
    finally:
        progress.close()
    finish = {
        "state": state,
        "report": report,
        "error": error,
        "finished_at": timezone.now(),
        "phase": "done",
    }
    if job.kind in (ImportJob.Kind.API, ImportJob.Kind.RECOUNT) and state == State.SUCCEEDED:
        finish["lines_done"] = job.lines_total
    if not keeps_payload(job.kind, state, job.options):
        finish["payload"] = None  # finished: nothing will run it again (issue 21, item 4)
    ImportJob.objects.filter(pk=job_id, attempt=attempt).update(**finish)
    return ImportJob.objects.get(pk=job_id)


def keeps_payload(kind: str, state: str, options: dict | None) -> bool:
    """Whether a job that ended in ``state`` keeps its payload: only a zip upload's successful dry run,
    so that "Import this zip now" imports it without choosing it again, and only until ``jobs_prune``
    drops it (``settings.IMPORT_DRY_RUN_KEEP_SECONDS`` after the job ended). Every other finished job
    (an API ingest, its dry runs too; a recount; a failed upload) drops it as it ends: nothing runs it
    again. docs/production.md, "The background worker"."""
    dry_run = bool((options or {}).get("dry_run"))
    return kind == ImportJob.Kind.ALTIMATE and state == State.SUCCEEDED and dry_run


def jobs_prune(*, now=None) -> tuple[int, int]:
    """Drop the zip a finished dry run kept once ``settings.IMPORT_DRY_RUN_KEEP_SECONDS`` have passed
    since it ended, and delete the rows of jobs that ended more than ``settings.JOBS_KEEP_DAYS`` days
    ago (with their task rows). ``now`` (UTC) defaults to the current time. Returns ``(payloads
    dropped, jobs deleted)``. Run by ``manage.py db_worker`` when it starts and every
    ``RECOVER_EVERY_SECONDS``; a queued or running job is never touched."""
    from django_tasks_db.models import DBTaskResult

    now = now or timezone.now()
    finished = ImportJob.objects.filter(state__in=(State.SUCCEEDED, State.FAILED))
    kept_until = now - timedelta(seconds=settings.IMPORT_DRY_RUN_KEEP_SECONDS)
    dropped = finished.filter(payload__isnull=False, finished_at__lte=kept_until).update(payload=None)
    old = finished.filter(finished_at__lte=now - timedelta(days=settings.JOBS_KEEP_DAYS))
    task_ids = [t for t in old.values_list("task_id", flat=True) if t]
    deleted, _ = old.delete()
    if task_ids:
        DBTaskResult.objects.filter(id__in=task_ids).finished().delete()
    return dropped, deleted


def _queue_again(job: ImportJob, attempt: int) -> ImportJob:
    """Attempt ``attempt`` of ``job`` stopped after committing some slices: queued again, its body kept, so
    that the next attempt writes the rest (``RERUN_NOTE`` in its report)."""
    logger.warning("import job %s: attempt %s stopped part-way; queued again", job.pk, attempt)
    requeued = ImportJob.objects.filter(pk=job.pk, attempt=attempt, state=State.RUNNING).update(
        state=State.QUEUED, phase="", lines_done=0
    )
    if requeued:
        job_enqueue(job)
    return ImportJob.objects.get(pk=job.pk)


def jobs_recover(*, stale_after: float | None = None) -> list[int]:
    """Queue again every ``running`` job whose attempt has shown no progress for ``stale_after`` seconds
    (default ``settings.JOBS_STALE_SECONDS``) and whose process no longer holds the job's lock
    (``review.services.job_liveness``): its worker is gone. A live attempt is never taken, however long
    it has been quiet. Returns their ids.

    The conditional update (state and heartbeat unchanged) lets only one recoverer take a job; the dead
    task's ``DBTaskResult`` is marked failed so that it no longer looks like it is running.
    """
    from django_tasks_db.models import DBTaskResult

    seconds = settings.JOBS_STALE_SECONDS if stale_after is None else stale_after
    cutoff = timezone.now() - timedelta(seconds=seconds)
    recovered = []
    for job in ImportJob.objects.filter(state=State.RUNNING, heartbeat_at__lte=cutoff).order_by("id"):
        if job_alive(job.pk):
            continue  # quiet, not dead: its process still holds the job's lock (job_liveness)
        taken = ImportJob.objects.filter(
            pk=job.pk, state=State.RUNNING, attempt=job.attempt, heartbeat_at=job.heartbeat_at
        ).update(state=State.QUEUED, phase="", lines_done=0)
        if not taken:
            continue
        if job.task_id:
            DBTaskResult.objects.filter(id=job.task_id, status="RUNNING").update(
                status="FAILED", finished_at=timezone.now()
            )
        logger.warning("import job %s: its worker stopped answering; queued again", job.pk)
        job_enqueue(job)
        recovered.append(job.pk)
    return recovered


# --- progress -----------------------------------------------------------------------------------


@dataclass
class _Counter:
    lines: int = 0


class _CountingStream:
    """Reads the lines of ``inner`` by ``readline`` (as ``lessons.ingest.reading`` does) and counts them in
    ``counter`` (reset on each open: one pass)."""

    def __init__(self, inner: BinaryIO, counter: _Counter):
        self._inner = inner
        self._counter = counter
        counter.lines = 0

    def read(self, *args) -> bytes:
        return self._inner.read(*args)

    def readline(self, size: int = -1) -> bytes:
        """One line, or ``size`` bytes of a longer one; a line is counted at its end (its newline, or
        the end of the stream)."""
        raw = self._inner.readline(size)
        if raw.endswith(b"\n") or (raw and (size < 0 or len(raw) < size)):
            self._counter.lines += 1
        return raw

    def close(self) -> None:
        self._inner.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class JobProgress:
    """The ingest's progress callback for ``job``: ``(phase, bytes read in that pass)``, as
    ``lessons.ingest.passes.Progress``. The lines read in the validation pass come from the job's source
    (``counted``); the write passes (``WRITE_PHASES``) read the records spooled by it, not the source, so
    their lines are the bytes reached as a share of the source's size (``lines_total`` x bytes / size,
    rounded down). At most every ``PROGRESS_EVERY_SECONDS`` they are written to the job row with
    ``heartbeat_at``, through a connection of its own (autocommit). A write that would have to wait for a
    lock is skipped (SQLite: timeout 0; PostgreSQL: ``lock_timeout`` 100 ms)."""

    # Observers of every job's progress, called with (job id, phase, lines read in that pass) in the
    # worker, inside the ingest: the concurrency acceptance test and bench/concurrency_bench.py act there.
    listeners: list[Callable[[int, str, int], None]] = []

    def __init__(self, job: ImportJob):
        self.job_id = job.pk
        self.counter = _Counter()
        self.lines_total = job.lines_total
        self.size: int | None = None  # bytes of the counted source
        self._last = 0.0
        self._connection = None
        self._alive: AliveMark | None = None

    def counted(self, source: Source) -> Source:
        """``source`` whose passes count their lines into this progress."""
        self.size = source.size
        return Source(
            name=source.name, open=lambda: _CountingStream(source.open(), self.counter), size=source.size
        )

    def total(self, lines: int) -> None:
        """Set the job's ``lines_total`` (an upload knows it once its store is translated)."""
        self.lines_total = lines
        self._write({"lines_total": lines}, force=True)

    def step(self, phase: str, done: int) -> None:
        """Report ``done`` units (a recount: hosts) of ``lines_total`` in ``phase``."""
        self.counter.lines = done
        self(phase, 0)

    def __call__(self, phase: str, done_bytes: int) -> None:
        lines = self.counter.lines
        if phase in WRITE_PHASES and self.size:
            lines = self.lines_total * min(done_bytes, self.size) // self.size
        for listener in self.listeners:
            listener(self.job_id, phase, lines)
        self._write({"phase": phase, "lines_done": min(lines, self.lines_total or lines)})

    def _write(self, values: dict, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < PROGRESS_EVERY_SECONDS:
            return
        self._last = now
        values["heartbeat_at"] = timezone.now()
        try:
            connection = self._open()
            columns = ", ".join(f"{connection.ops.quote_name(k)} = %s" for k in values)
            table = connection.ops.quote_name(ImportJob._meta.db_table)
            with global_only(), connection.cursor() as cursor:  # no host's page shows it
                cursor.execute(
                    f"UPDATE {table} SET {columns} WHERE id = %s",
                    [*(_db_value(connection, v) for v in values.values()), self.job_id],
                )
        except DatabaseError as exc:  # busy: this report is skipped, the next one may pass
            logger.debug("import job %s: progress not written: %s", self.job_id, exc)

    def _open(self):
        if self._connection is None:
            self._connection = progress_connection()
        return self._connection

    def hold_alive(self) -> None:
        """Take the job's liveness lock for this run (PostgreSQL: on this progress's own connection,
        opened now and kept until ``close``), so that no recoverer queues the job again while it runs."""
        self._alive = AliveMark(self.job_id)
        try:
            conn = self._open() if connection.vendor == "postgresql" else connection
        except DatabaseError as exc:
            logger.warning("import job %s: no progress connection: %s", self.job_id, exc)
            return
        self._alive.hold(conn)

    def close(self) -> None:
        if self._alive is not None:
            self._alive.release()
            self._alive = None
        if self._connection is not None:
            self._connection.close()
            self._connection = None


def progress_connection():
    """A new connection to the default database, in autocommit, that never waits for a lock."""
    base = connections["default"]
    params = dict(base.settings_dict)
    options = dict(params.get("OPTIONS") or {})
    if base.vendor == "sqlite":
        options["timeout"] = 0
        options.pop("init_command", None)  # WAL is a property of the file, set by the main connection
        options.pop("transaction_mode", None)
    params["OPTIONS"] = options
    connection = type(base)(params, alias="job-progress")
    connection.ensure_connection()
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '100ms'")
    return connection


def _db_value(connection, value):
    if hasattr(value, "tzinfo"):
        return connection.ops.adapt_datetimefield_value(value)
    return value


def job_percent(job: ImportJob) -> int:
    """How far ``job`` is, 0..100: the three ingest passes (validate, lessons, references) weigh the same."""
    if job.finished:
        return 100
    if job.phase == "recount" and job.lines_total:
        return min(99, int(100 * job.lines_done / job.lines_total))
    passes = ("validate", "lessons", "references")
    if job.phase not in passes or not job.lines_total:
        return 0
    done = passes.index(job.phase) + min(job.lines_done, job.lines_total) / job.lines_total
    return min(99, int(100 * done / len(passes)))


def job_json(job: ImportJob) -> dict:
    """The job as the API answers it: ``id``, ``state`` (queued, running, succeeded, failed),
    ``progress`` (``phase``, ``lines_done`` and ``lines_total`` of the current pass, ``percent``),
    ``report`` (the import report, once finished; None before), ``error`` (one line when failed, else
    ""), and the UTC times ``created_at``, ``started_at``, ``finished_at`` (ISO 8601 or None)."""

    def when(value):
        return format_datetime(value) if value else None

    return {
        "id": job.pk,
        "state": job.state,
        "progress": {
            "phase": job.phase,
            "lines_done": job.lines_done,
            "lines_total": job.lines_total,
            "percent": job_percent(job),
        },
        "report": job.report if job.finished else None,
        "error": job.error,
        "dry_run": bool((job.options or {}).get("dry_run")),
        "created_at": when(job.created_at),
        "started_at": when(job.started_at),
        "finished_at": when(job.finished_at),
    }
