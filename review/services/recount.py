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

from django.db import DatabaseError, transaction

from lessons.recurrence.refresh import RecurrenceChanges, recurrence_stale_keys
from review.models import ImportJob

logger = logging.getLogger(__name__)


# The recount jobs queued while the current web request is answered (None: not in a request).
_started: contextvars.ContextVar[list[ImportJob] | None] = contextvars.ContextVar("recounts", default=None)
_user: contextvars.ContextVar[object | None] = contextvars.ContextVar("recount_user", default=None)


def recount_offer_taken(sender, *, changes: RecurrenceChanges, **_kwargs) -> bool:
    """The receiver of ``lessons.signals.recount_offered``: ``recount_enqueue(changes)``."""
    return recount_enqueue(changes)


def recount_enqueue(changes: RecurrenceChanges) -> bool:
    """Inside a web request, queue a recount job for the
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
