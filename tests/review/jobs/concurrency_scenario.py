"""Reviewers at work while a large ingest runs in the background worker (issue 13, acceptance: "under a
large ingest, reviewers on another connection sign in, read piles and retire with no 500").

``run(lines, before_request)`` builds a pile (host ``acme``) and reviewer ``rita``, sends a batch of
``lines`` lessons for host ``bulk`` through the API (a background job), runs django-tasks-db's worker in a
thread, and — while the worker is inside the ingest's write phase (paused there, so the requests land
mid-ingest whatever the machine's speed: on PostgreSQL by a progress listener inside its one transaction,
on SQLite, whose background ingest commits in slices, between two slices) — signs in, reads the queue and the pile and
retires a member from another connection, a second browser signing in meanwhile. Then it lets the ingest finish and retires again if the first was
refused as busy. Returns each answer's status (and Retry-After) and the job's outcome as JSON.

PostgreSQL runs it in the test process; SQLite in a process of its own on a file database
(``python -m tests.review.jobs.concurrency_scenario LINES``), since pytest's SQLite database is in memory.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from collections.abc import Callable

from tests.review.web.lock_scenario import NS, PASSWORD, SUBJECT, world


def bulk_batch(lines: int) -> bytes:
    """A host record and ``lines - 1`` distinct lessons for host ``bulk``."""
    out = [json.dumps({"type": "host", "name": "bulk", "max_active": 5, "budget_enabled": True})]
    for i in range(lines - 1):
        out.append(
            json.dumps(
                {
                    "type": "lesson",
                    "host": "bulk",
                    "namespace": "bulk.ns",
                    "subject": f"s{i % 200}",
                    "text": f"Bulk lesson {i}: check field {i} before saving.",
                    "created_at": 1_700_000_000_000 + i,
                }
            )
        )
    return ("\n".join(out) + "\n").encode()


def run(lines: int, before_request: Callable[[], None]) -> dict:
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connections
    from django.test import Client

    from lessons.ingest import checkpoints
    from lessons.models import Host, Lesson
    from lessons.selectors.piles import entity_lessons, pile_version
    from review.models import Decision, ImportJob
    from review.services.jobs import JobProgress

    hashes, token = world()
    query = f"?host=acme&namespace={NS}&subject={SUBJECT}"
    submitted = Client().post(
        "/api/v1/ingest",
        data=bulk_batch(lines),
        content_type="application/x-ndjson",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert submitted.status_code == 202, submitted.content
    job_id = submitted.json()["id"]

    inside, resume = threading.Event(), threading.Event()

    def pause_in_write_phase(job, phase, done):
        if job == job_id and phase == "lessons" and done and not inside.is_set():
            inside.set()
            resume.wait(120)

    sliced = connections["default"].vendor == "sqlite"
    checkpoint = checkpoints.reached

    def pause_between_slices(name: str) -> None:
        if name == "slice committed" and not inside.is_set():
            inside.set()
            resume.wait(120)

    def answer(response) -> dict:
        return {"status": response.status_code, "retry_after": response.get("Retry-After")}

    def form() -> dict:
        host = Host.objects.get(name="acme")
        version = pile_version(list(entity_lessons(host=host, namespace=NS, subject=SUBJECT)))
        return {"members": [hashes[0]], "reason": "restated", "pile_version": version}

    out: dict = {"during": {}, "after": {}}
    # signed in before the ingest (another browser signs in during it)
    reviewer = Client(raise_request_exception=False)
    reviewer.force_login(User.objects.get(username="rita"))

    def review_mid_ingest():
        """Another connection (this thread's): the reviewer's requests while the worker is paused."""
        try:
            if not inside.wait(300):
                out["error"] = "the worker never reached the ingest's write phase"
                return
            before_request()
            newcomer = Client(raise_request_exception=False)
            signed = newcomer.post("/accounts/login/", {"username": "rita", "password": PASSWORD})
            out["during"]["sign_in"] = answer(signed)
            before_request()
            out["during"]["queue"] = answer(reviewer.get("/"))
            before_request()
            out["during"]["pile"] = answer(reviewer.get("/pile/" + query))
            before_request()
            out["during"]["retire"] = answer(reviewer.post("/pile/retire/" + query, form()))
            out["job_state_during"] = ImportJob.objects.get(pk=job_id).state
        finally:
            resume.set()
            connections.close_all()

    # the worker in this (main) thread, as it runs in production: it installs signal handlers
    if sliced:
        checkpoints.reached = pause_between_slices
    else:
        JobProgress.listeners.append(pause_in_write_phase)
    thread = threading.Thread(target=review_mid_ingest)
    thread.start()
    try:
        call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", "--verbosity", "0")
    finally:
        inside.set()
        if sliced:
            checkpoints.reached = checkpoint
        else:
            JobProgress.listeners.remove(pause_in_write_phase)
        thread.join(600)
    assert "error" not in out, out["error"]
    before_request()
    if out["during"]["retire"]["status"] != 302:
        out["after"]["retire"] = answer(reviewer.post("/pile/retire/" + query, form()))
    before_request()
    out["after"]["sign_in"] = answer(
        Client(raise_request_exception=False).post(
            "/accounts/login/", {"username": "rita", "password": PASSWORD}
        )
    )
    job = ImportJob.objects.get(pk=job_id)
    out["job"] = {
        "state": job.state,
        "error": job.error,
        "created": job.report["counts"]["lesson"]["created"],
    }
    out["bulk_lessons"] = Lesson.objects.filter(host__name="bulk").count()
    out["decisions"] = Decision.objects.count()
    out["retired"] = Lesson.objects.get(host__name="acme", hash=hashes[0]).status
    return out


def _sqlite_main(lines: int) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    print(json.dumps(run(lines, lambda: None)))


if __name__ == "__main__":
    _sqlite_main(int(sys.argv[1]))
