"""Concurrency bench (issue 13, acceptance): reviewers at work during a 200k-line background ingest.

Usage: .venv/bin/python bench/concurrency_bench.py [--lines 200000] [--database-url URL]
(default: a fresh SQLite file in a temporary folder; for PostgreSQL pass an empty throwaway database,
e.g. postgres://postgres@127.0.0.1:5432/lpr_bench — it is migrated, and its tables are written).

The batch (one host, distinct lessons) is sent to ``POST /api/v1/ingest`` and answered 202; django-tasks-db's
worker runs it in this process's main thread. Meanwhile a reviewer thread, on its own connection, loops
until the job has finished: a fresh sign-in, the queue, a pile, a retire and the restore of that member.
Every answer's status and wall time is recorded; the result is one table per request kind (count,
statuses, median and maximum milliseconds) and the ingest's wall time. Requests go through Django's test
client (the whole middleware stack, no network). The acceptance: no 500 and no wait over 5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000)
    parser.add_argument("--database-url", default=None)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="lpr-concurrency-")
    os.environ["DATABASE_URL"] = args.database_url or f"sqlite:///{folder}/bench.sqlite3"
    os.environ.setdefault("DEBUG", "1")
    os.environ["ALLOWED_HOSTS"] = "testserver"
    os.environ["INGEST_BACKGROUND_BYTES"] = "1"
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    import django

    django.setup()
    import logging

    logging.disable(logging.WARNING)  # the 503s of a busy SQLite are expected; the table counts them
    from django.core.management import call_command
    from django.db import connection, connections
    from django.test import Client

    from lessons.models import Host, Lesson
    from lessons.selectors.piles import entity_lessons, pile_version
    from review.models import ImportJob
    from tests.review.jobs.concurrency_scenario import bulk_batch
    from tests.review.web.lock_scenario import NS, PASSWORD, SUBJECT, world

    call_command("migrate", verbosity=0)
    hashes, token = world()
    body = bulk_batch(args.lines)
    query = f"?host=acme&namespace={NS}&subject={SUBJECT}"
    submitted = Client().post(
        "/api/v1/ingest", data=body, content_type="application/x-ndjson", HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    assert submitted.status_code == 202, submitted.content
    job_id = submitted.json()["id"]
    timings: dict[str, list[float]] = defaultdict(list)
    statuses: dict[str, dict[int, int]] = defaultdict(lambda: defaultdict(int))
    stop = threading.Event()

    def timed(kind: str, client, method: str, *args):
        connection.close()  # a request's own connection, as a server opens one per request
        start = time.perf_counter()
        response = getattr(client, method)(*args)
        timings[kind].append((time.perf_counter() - start) * 1000)
        statuses[kind][response.status_code] += 1
        return response

    def version() -> str:
        host = Host.objects.get(name="acme")
        return pile_version(list(entity_lessons(host=host, namespace=NS, subject=SUBJECT)))

    def reviewer_loop():
        try:
            while not stop.is_set():
                client = Client(raise_request_exception=False)
                login = {"username": "rita", "password": PASSWORD}
                signed = timed("sign in", client, "post", "/accounts/login/", login)
                if signed.status_code != 302:
                    continue
                timed("queue", client, "get", "/")
                timed("pile", client, "get", "/pile/" + query)
                form = {"members": [hashes[0]], "reason": "restated", "pile_version": version()}
                retired = timed("retire", client, "post", "/pile/retire/" + query, form)
                if retired.status_code == 302:
                    again = {"reason": "needed after all", "pile_version": version()}
                    timed("restore", client, "post", f"/lessons/acme/{hashes[0]}/restore/", again)
        finally:
            connections.close_all()

    thread = threading.Thread(target=reviewer_loop)
    started = time.perf_counter()
    thread.start()
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", "--verbosity", "0")
    ingest_seconds = time.perf_counter() - started
    stop.set()
    thread.join(120)
    job = ImportJob.objects.get(pk=job_id)
    vendor = connection.vendor
    print(
        f"{vendor}: {args.lines} lines, job {job.state} in {ingest_seconds:.1f} s, "
        f"{Lesson.objects.filter(host__name='bulk').count()} lessons written; load {os.getloadavg()[0]:.1f}"
    )
    print("| request | count | statuses | median ms | max ms |")
    print("|---|---|---|---|---|")
    for kind in ("sign in", "queue", "pile", "retire", "restore"):
        values = timings.get(kind, [])
        if not values:
            continue
        codes = ", ".join(f"{code}×{n}" for code, n in sorted(statuses[kind].items()))
        print(f"| {kind} | {len(values)} | {codes} | {statistics.median(values):.0f} | {max(values):.0f} |")
    worst = max((max(v) for v in timings.values() if v), default=0)
    errors = sum(n for kind in statuses.values() for code, n in kind.items() if code >= 500 and code != 503)
    print(json.dumps({"vendor": vendor, "max_ms": round(worst), "server_errors": errors}))


if __name__ == "__main__":
    main()
