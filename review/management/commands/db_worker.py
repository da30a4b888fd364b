"""``manage.py db_worker``: django-tasks-db's worker, which also resumes import jobs whose worker died.

The backport's worker (every option of ``django_tasks_db``'s ``db_worker``: ``--batch``, ``--interval``,
``--queue-name``, ...) runs the queued tasks. Before it starts, and then every
``review.services.jobs.RECOVER_EVERY_SECONDS`` from a thread of its own, ``jobs_recover`` queues again
each running import job that has shown no progress for ``--stale-after`` seconds (default
``settings.JOBS_STALE_SECONDS``) and whose process no longer holds its liveness lock
(review/services/job_liveness.py: a quiet live job is never taken): a worker killed mid-job leaves
nothing half-written (the ingest is one transaction), and the job runs again from the start. The same
rounds run ``jobs_prune``: a dry run's kept zip is dropped after ``IMPORT_DRY_RUN_KEEP_SECONDS``, a
finished job's row deleted after ``JOBS_KEEP_DAYS``. A database locked longer than its busy timeout
(SQLite during a long ingest) pauses the worker instead of stopping it. spec: issue 13, Build 2; issue
21, item 4 and "also seen"; docs/production.md.
"""

from __future__ import annotations

import logging
import threading
import time

from django.db import DatabaseError, OperationalError, connections
from django_tasks_db.management.commands.db_worker import Command as WorkerCommand
from django_tasks_db.utils import is_locked_database_exception

from review.services.jobs import RECOVER_EVERY_SECONDS, jobs_prune, jobs_recover

logger = logging.getLogger(__name__)
LOCKED_PAUSE_SECONDS = 1.0
LOCKED_WAITING = "the database is locked by another writer; the worker tries again in %s s"


class Command(WorkerCommand):
    help = "Run the background worker (django-tasks-db), resuming import jobs whose worker died"

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument(
            "--stale-after",
            type=float,
            default=None,
            help="seconds without progress after which a running import job is taken as orphaned "
            "(default: JOBS_STALE_SECONDS)",
        )

    def handle(self, *args, stale_after: float | None = None, **options) -> None:
        _recover_once(stale_after)
        if not options.get("batch"):
            threading.Thread(target=_recover_forever, args=(stale_after,), daemon=True).start()
        while True:
            try:
                super().handle(*args, **options)
                return
            except OperationalError as exc:
                # SQLite's write lock held longer than the busy timeout (a long ingest) when the worker
                # starts its claim: the backport's worker stops with a traceback; this one waits and
                # goes on (the attacker's finding 3: background work stopped, silently, until a restart).
                if not is_locked_database_exception(exc):
                    raise
                logger.warning(LOCKED_WAITING, LOCKED_PAUSE_SECONDS)
                connections.close_all()
                time.sleep(LOCKED_PAUSE_SECONDS)


def _recover_once(stale_after: float | None) -> None:
    try:
        for job_id in jobs_recover(stale_after=stale_after):
            logger.warning("import job %s queued again (its worker had stopped)", job_id)
        jobs_prune()
    except DatabaseError as exc:  # the database busy or away: the next round tries again
        logger.warning("could not look for orphaned or old import jobs: %s", exc)


def _recover_forever(stale_after: float | None) -> None:
    event = threading.Event()
    while not event.wait(RECOVER_EVERY_SECONDS):
        _recover_once(stale_after)
        connections.close_all()
