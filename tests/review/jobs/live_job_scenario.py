"""A live job that has been quiet longer than ``--stale-after`` is not taken by a second worker (issue 21,
"also seen": ``db_worker --stale-after 5`` queued a live PostgreSQL job again, twice).

``run(database_url)``: worker A (django-tasks-db's ``db_worker``, in this process) runs an API ingest job;
inside the ingest, the job's ``heartbeat_at`` is set an hour back (the quiet of a long step) and worker B,
a real ``manage.py db_worker --stale-after 1`` in a process of its own (queue ``elsewhere``: it only looks
for orphaned jobs), starts and ends. Returns, as JSON, the job as B left it and as it ended, and the task
rows' statuses. PostgreSQL runs it in the test process; SQLite as
``python -m tests.review.jobs.live_job_scenario`` on a file database (``DATABASE_URL``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[3]
LESSONS = 30


def database_url() -> str:
    """The URL of the default database as this process uses it (the test database under pytest)."""
    from django.db import connection

    s = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{s['NAME']}"
    auth = s["USER"] + (f":{s['PASSWORD']}" if s["PASSWORD"] else "")
    return f"postgres://{auth}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def second_worker(url: str) -> None:
    subprocess.run(
        [
            sys.executable,
            "manage.py",
            "db_worker",
            "--batch",
            "--no-startup-delay",
            "--no-reload",
            "--queue-name",
            "elsewhere",
            "--stale-after",
            "1",
            "--verbosity",
            "0",
        ],
        cwd=BASE_DIR,
        env={**os.environ, "DEBUG": "1", "DATABASE_URL": url},
        check=True,
        timeout=120,
    )


def run() -> dict:
    from django.core.management import call_command
    from django.utils import timezone
    from django_tasks_db.models import DBTaskResult

    from review.models import ImportJob
    from review.services.jobs import JobProgress, job_create, job_enqueue, progress_connection
    from tests.builders import numbered_lesson

    records = [{"type": "host", "name": "alpha", "max_active": 3, "budget_enabled": True}]
    records += [numbered_lesson(i, namespace="desk.live", host="alpha") for i in range(LESSONS)]
    payload = "".join(json.dumps(r) + "\n" for r in records).encode()
    job = job_enqueue(job_create(kind=ImportJob.Kind.API, payload=payload, options={}))
    url = database_url()
    out: dict = {}

    def quiet_then_second_worker(job_id: int, phase: str, _lines: int) -> None:
        if job_id != job.pk or out:
            return
        side = progress_connection()  # autocommit: B sees the old heartbeat
        try:
            table = side.ops.quote_name(ImportJob._meta.db_table)
            hour_ago = side.ops.adapt_datetimefield_value(timezone.now() - timedelta(hours=1))
            with side.cursor() as cursor:
                cursor.execute(f"UPDATE {table} SET heartbeat_at = %s WHERE id = %s", [hour_ago, job_id])
            second_worker(url)
            with side.cursor() as cursor:
                cursor.execute(f"SELECT state, attempt FROM {table} WHERE id = %s", [job_id])
                state, attempt = cursor.fetchone()
        finally:
            side.close()
        out["after_second_worker"] = {"state": state, "attempt": attempt, "phase": phase}

    JobProgress.listeners.append(quiet_then_second_worker)
    try:
        call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", "--verbosity", "0")
    finally:
        JobProgress.listeners.remove(quiet_then_second_worker)
    job.refresh_from_db()
    out["ended"] = {"state": job.state, "attempt": job.attempt, "error": job.error}
    out["tasks"] = sorted(DBTaskResult.objects.values_list("status", flat=True))
    return out


def _sqlite_main() -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    print(json.dumps(run()))


if __name__ == "__main__":
    _sqlite_main()
