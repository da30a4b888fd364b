"""Background work: one module per kind of job, each with ``run(job, progress)`` returning ``(state,
report as JSON or None, error)``. The machinery every kind shares (storing a job, handing it to the
task worker, claiming, recovering a dead worker's job, pruning, progress) is review/services/jobs.py;
the worker is ``manage.py db_worker``. CONTRIBUTING.md ("Background work").

- ``ingest``: an API batch too large to answer in its request;
- ``altimate``: an uploaded altimate learn store (zip);
- ``recount``: the recurrence recount of a web request's large status change.
"""

from __future__ import annotations

from collections.abc import Callable

from review.models import ImportJob
from review.tasks import altimate, ingest, recount

RUNNERS: dict[str, Callable] = {
    ImportJob.Kind.API: ingest.run,
    ImportJob.Kind.ALTIMATE: altimate.run,
    ImportJob.Kind.RECOUNT: recount.run,
}


def runner_for(kind: str) -> Callable:
    """The ``run`` of jobs of ``kind`` (``ImportJob.Kind``); ``KeyError`` for a kind with none."""
    return RUNNERS[kind]
