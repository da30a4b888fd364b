"""The page of a background recount (``/jobs/<id>/``, review/services/recount.py): what a status change
started, its progress while it runs (htmx polls the region every second), then what it recounted, or why
it failed and what to run instead. Anyone who may read piles may read it: the reviewer who retired sees
the job their retire started."""

from __future__ import annotations

from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_http_methods

from review.models import ImportJob
from review.roles import PERM_VIEW
from review.services.jobs import job_percent


@require_http_methods(["GET"])
@permission_required(PERM_VIEW, raise_exception=True)
def job(request: HttpRequest, job_id: int) -> HttpResponse:
    """GET ``/jobs/<id>/``: recount job ``job_id`` (404 for another kind); an htmx request gets only the
    job's region."""
    row = get_object_or_404(ImportJob, pk=job_id, kind=ImportJob.Kind.RECOUNT)
    template = "review/jobs/job.html#job" if request.htmx else "review/jobs/job.html"
    return render(request, template, {"job": {"row": row, "percent": job_percent(row), **(row.report or {})}})
