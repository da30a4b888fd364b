"""Scenario (run by tests/review/jobs/test_worker_lock.py in a process of its own, on a SQLite file): a
task is queued, another connection holds the write lock longer than the worker's busy timeout, and
``manage.py db_worker --batch`` starts meanwhile. Prints what the worker did as JSON."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time


def main() -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connections
    from django_tasks_db.models import DBTaskResult

    from lessons.tasks import regroup_pending

    call_command("migrate", verbosity=0)
    settings.DATABASES["default"]["OPTIONS"]["timeout"] = 0.2  # the worker gives up waiting soon
    connections.close_all()
    regroup_pending.enqueue(12345)  # no such host: the task groups nothing and returns 0
    connections.close_all()
    path = settings.DATABASES["default"]["NAME"]
    held, released = threading.Event(), threading.Event()

    def holder() -> None:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # the write lock, as an ingest's write phase holds it
        held.set()
        time.sleep(1.5)
        other.execute("ROLLBACK")
        other.close()
        released.set()

    thread = threading.Thread(target=holder)
    thread.start()
    held.wait()
    started = time.monotonic()
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", "--interval", "0.1")
    thread.join()
    (task,) = DBTaskResult.objects.all()
    print(
        json.dumps(
            {
                "status": task.status,
                "return_value": task.return_value,
                "waited_for_the_lock": released.is_set() and time.monotonic() - started >= 1.0,
            }
        )
    )


if __name__ == "__main__":
    main()
