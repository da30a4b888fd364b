"""The job of a recurrence recount a web request's status change queued (review/services/recount.py
queues it; this runs it). docs/piles-and-recurrence.md ("Recurrence")."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from lessons.recurrence.refresh import recurrence_keys_changed
from review.models import ImportJob

if TYPE_CHECKING:
    from review.services.jobs import JobProgress

E_RECOUNT_FAILED = (
    "the recount failed on the server ({kind}); the decisions are saved, the recurrence counts may be "
    "behind: run manage.py recurrence --recompute"
)


def run(job: ImportJob, progress: JobProgress) -> tuple[str, dict, str]:
    """Run recount ``job``: each host's keys in one transaction (``recurrence_keys_changed`` with the
    keys found stale when the job was queued), ``progress.step("recount", hosts done)`` after each. Returns
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
        progress.step("recount", done)
    return ImportJob.State.SUCCEEDED, report, ""
