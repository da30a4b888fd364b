"""The job of an API ingest too large to answer in its request (issue 13, Build 2): the body stored in the
job is ingested by the worker, in slices on SQLite. docs/api.md ("Large batches")."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.db import connection

from lessons.ingest.passes import ingest_sources
from lessons.ingest.reading import bytes_source
from lessons.ingest.report import ImportReport
from review.models import ImportJob

if TYPE_CHECKING:
    from review.services.jobs import JobProgress

State = ImportJob.State
E_REFUSED = "ingest refused: {n} invalid line(s), nothing written"
E_REFUSED_WRITTEN = (
    "ingest refused {n} line(s) while the batch was being written (another writer changed the lessons "
    "they name meanwhile); the rest of the batch was written (SQLite writes a large batch in slices)"
)
E_OUTSIDE_HOST = "this token may only ingest into host {host}; nothing was written"
RERUN_NOTE = (
    "attempt {n}: an earlier attempt of this job stopped part-way; what it had written counts as unchanged"
)


def run(job: ImportJob, progress: JobProgress) -> tuple[str, dict | None, str]:
    """Ingest the job's body (an API batch) with ``progress``; ``(state, report as JSON, error)``."""
    payload = bytes(job.payload or b"")
    options = job.options or {}
    source = progress.counted(bytes_source(payload, name="body"))
    report = ingest_sources(
        sources=[source],
        default_host=options.get("default_host"),
        only_host=options.get("only_host"),
        skip_invalid=bool(options.get("skip_invalid")),
        dry_run=bool(options.get("dry_run")),
        progress=progress,
        sliced=True,  # on SQLite: reviewers' decisions go in between slices (ingest_sources)
    )
    if job.attempt > 1 and report.written and connection.vendor == "sqlite":  # PostgreSQL: all or nothing
        report.notes.append(RERUN_NOTE.format(n=job.attempt))
    return _outcome(
        report, only_host=options.get("only_host"), skip_invalid=bool(options.get("skip_invalid"))
    )


def _outcome(report: ImportReport, *, only_host: str | None, skip_invalid: bool) -> tuple[str, dict, str]:
    body = report.as_dict()
    if report.outside_host_count:
        return State.FAILED, body, E_OUTSIDE_HOST.format(host=only_host)
    if report.error_count and not skip_invalid:
        # Sliced (SQLite): refusals the check before the first slice could not see leave the rest written.
        refused = E_REFUSED_WRITTEN if report.written else E_REFUSED
        return State.FAILED, body, refused.format(n=report.error_count)
    return State.SUCCEEDED, body, ""
