"""Recurrence recounts in the background (issue 13, Build 2: "recurrence recomputes after a status change
... return at once with a job").

A status change (retire, restore, approve, rollback) refreshes recurrence once its transaction commits
(``lessons.services.status``). While a web request is being answered (``RecountNoticeMiddleware`` opens
the scope), a refresh of more than ``settings.RECURRENCE_BACKGROUND_KEYS`` lesson keys is not run in the
request: ``recount_enqueue`` stores the keys in an ``ImportJob`` of kind ``recount`` and hands it to the
task worker, and the page that made the change says "a recount is running" with a link to the job's page
(``/jobs/<id>/``). Smaller refreshes, and every refresh outside a web request, run at once as before.

Correctness of the delay. Which keys are off their current version is read when the job is queued
(``stale``, one read per host), and the job re-attributes every session shown one of them
(``recurrence_keys_changed(stale=...)``): another refresh that runs first (a small retire, an ingest) may
move a key's counts onto its current version, after which the key would no longer look stale, and the
sessions only the job would visit would keep attributions made against the old current text.

A job survives a worker restart: each host is recounted in one transaction (the entities' counts with
it), so a dead attempt leaves each host either recounted or untouched, and ``jobs_recover`` queues the job
again; a re-run attributes the same sessions against the same current versions and writes the same rows
(idempotent). A failed job shows its error and the remedy, ``manage.py recurrence --recompute``.
"""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import Callable

from django.db import DatabaseError, transaction

from lessons.recurrence.refresh import RecurrenceChanges, recurrence_keys_changed, recurrence_stale_keys
from review.models import ImportJob

logger = logging.getLogger(__name__)

E_RECOUNT_FAILED = (
    "the recount failed on the server ({kind}); the decisions are saved, the recurrence counts may be "
    "behind: run manage.py recurrence --recompute"
)

# The recount jobs queued while the current web request is answered (None: not in a request).
_started: contextvars.ContextVar[list[ImportJob] | None] = contextvars.ContextVar("recounts", default=None)
_user: contextvars.ContextVar[object | None] = contextvars.ContextVar("recount_user", default=None)


def recount_enqueue(changes: RecurrenceChanges) -> bool:
    """``lessons.services.status.background_refresh``: inside a web request, queue a recount job for the
    lesson keys of ``changes`` (with the keys then off their current version, per host) and return True;
    outside one (no scope), or when the job cannot be stored, return False: the caller refreshes at once.
    ``changes.sessions`` must be empty (status changes note keys only)."""
    started = _started.get()
    if started is None or changes.sessions:
        return False
    from review.services.jobs import job_create, job_enqueue

    hosts = {
        str(host_id): {
            "keys": sorted(keys),
            "stale": sorted(recurrence_stale_keys(host_id=host_id, keys=keys)),
        }
        for host_id, keys in sorted(changes.keys.items())
        if keys
    }
    user = _user.get()
    try:
        with transaction.atomic():
            job = job_create(
                kind=ImportJob.Kind.RECOUNT,
                payload=json.dumps({"hosts": hosts}, sort_keys=True).encode(),
                options={},
                created_by=user if getattr(user, "is_authenticated", False) else None,
            )
            job.lines_total = len(hosts)
            job.save(update_fields=["lines_total"])
            job_enqueue(job)
    except DatabaseError:
        logger.exception("recount job not queued; recounting in the request")
        return False
    started.append(job)
    return True


def recount_run(job: ImportJob, progress: Callable[[str, int], None]) -> tuple[str, dict, str]:
    """Run recount ``job``: each host's keys in one transaction (``recurrence_keys_changed`` with the
    keys found stale when the job was queued), ``progress("recount", hosts done)`` after each. Returns
    ``(state, report, error)`` for ``jobs.job_run``: the report is ``{"hosts", "keys", "sessions",
    "attributions", "lessons"}`` (how many of each were recounted)."""
    hosts = json.loads(bytes(job.payload or b"{}")).get("hosts", {})
    report = {"hosts": 0, "keys": 0, "sessions": 0, "attributions": 0, "lessons": 0}
    for done, (host_id, entry) in enumerate(sorted(hosts.items(), key=lambda item: int(item[0])), start=1):
        stats = recurrence_keys_changed(host_id=int(host_id), keys=entry["keys"], stale=entry["stale"])
        report["hosts"] += 1
        report["keys"] += len(entry["keys"])
        report["sessions"] += stats.sessions
        report["attributions"] += stats.attributions
        report["lessons"] += stats.lessons
        progress("recount", done)
    return ImportJob.State.SUCCEEDED, report, ""


class RecountNoticeMiddleware:
    """Opens the recount scope for each request (``recount_enqueue`` queues jobs only inside one), then
    tells the person which recount jobs their request started: a message shown by the next page (a
    redirect's target), and for an htmx region an out-of-band notice in ``#job-notices`` (base.html).
    Needs ``MessageMiddleware`` and ``AuthenticationMiddleware`` before it."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        from django.contrib import messages

        started_token = _started.set([])
        user_token = _user.set(getattr(request, "user", None))
        try:
            response = self.get_response(request)
            jobs = _started.get() or []
        finally:
            _started.reset(started_token)
            _user.reset(user_token)
        if not jobs:
            return response
        html = response.get("Content-Type", "").startswith("text/html")
        if getattr(request, "htmx", False) and html and not response.streaming:
            response.content = response.content + recount_notice_oob(jobs).encode()
        else:
            for job in jobs:
                messages.info(request, RECOUNT_NOTICE.format(id=job.pk))
        return response


RECOUNT_NOTICE = "Recurrence counts are being recomputed in the background: recount job {id}."


def recount_notice_oob(jobs: list[ImportJob]) -> str:
    """The htmx out-of-band notice of ``jobs``: one line each with a link to the job's page."""
    from django.template.loader import render_to_string

    return render_to_string("review/jobs/_recount_notice.html", {"jobs": jobs})
