"""Another writer holds SQLite's lock past the busy timeout between two slices of a background ingest (a
command's one-transaction ingest, a recount): the job waits for it and completes.

``python -m tests.review.jobs.slice_lock_scenario`` on a file database (``DATABASE_URL``): the busy timeout
is set to ``BUSY_SECONDS``; at the first slice's commit a connection of its own takes the write lock
(``BEGIN IMMEDIATE``) and holds it ``HOLD_SECONDS``, longer than one busy timeout and shorter than the
``WRITE_ATTEMPTS`` waits with their backoff. Prints the job's state, error, the lessons stored and the
differences of ``manage.py piles --check`` as one JSON line.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time

BUSY_SECONDS = 1
HOLD_SECONDS = 2.5
LESSONS = 40


def main() -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    settings.DATABASES["default"]["OPTIONS"]["timeout"] = BUSY_SECONDS  # before the first connection
    call_command("migrate", verbosity=0)

    from lessons.ingest import checkpoints, state
    from lessons.models import Lesson
    from lessons.services.entity_counts import entity_counts_check
    from review.models import ImportJob
    from review.services.jobs import job_create, job_run
    from tests.builders import numbered_lesson

    lines = [{"type": "host", "name": "bulk", "max_active": 3, "budget_enabled": True}]
    lines += [
        numbered_lesson(i, namespace="bulk.ns", host="bulk", subject=f"s{i % 4}") for i in range(LESSONS)
    ]
    body = ("\n".join(json.dumps(r) for r in lines) + "\n").encode()
    job = job_create(kind=ImportJob.Kind.API, payload=body, options={})

    taken = threading.Event()

    def hold_the_lock() -> None:
        other = sqlite3.connect(settings.DATABASES["default"]["NAME"], isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        taken.set()
        time.sleep(HOLD_SECONDS)
        other.execute("COMMIT")
        other.close()

    holder = threading.Thread(target=hold_the_lock)

    def at_the_first_commit(name: str) -> None:
        if name == "slice committed" and not holder.is_alive() and not taken.is_set():
            holder.start()
            taken.wait(30)

    settings.INGEST_SLICE_MS = 0  # every chunk its own slice: 4 slices of lessons
    state.CHUNK = 10
    checkpoints.reached = at_the_first_commit
    done = job_run(job.pk)
    holder.join(30)
    print(
        json.dumps(
            {
                "state": done.state,
                "error": done.error,
                "lessons": Lesson.objects.filter(host__name="bulk").count(),
                "check": entity_counts_check(),
            }
        )
    )


if __name__ == "__main__":
    main()
