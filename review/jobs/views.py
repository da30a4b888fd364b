"""GET ``/jobs/<id>/``, a background recount's page (review/services/recount.py): anyone who may read
piles may read it, so the reviewer who retired sees the job their retire started. The page itself is
review/web/job_page.py's, shared with an import's."""

from __future__ import annotations

from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_http_methods

from review.models import ImportJob
from review.roles import PERM_VIEW
from review.services.jobs import job_percent
from review.web.job_page import job_render
from review.web.lookups import NotFound, shows_not_found

JOB_UNKNOWN_TITLE = "Unknown job"
JOB_UNKNOWN = "There is no recount job #{job_id}."


@require_http_methods(["GET"])
@permission_required(PERM_VIEW, raise_exception=True)
@shows_not_found
def job(request: HttpRequest, job_id: int) -> HttpResponse:
    """GET ``/jobs/<id>/``: recount job ``job_id`` (the problem page, 404, for another kind or none)."""
    row = ImportJob.objects.filter(pk=job_id, kind=ImportJob.Kind.RECOUNT).first()
    if row is None:
        raise NotFound(JOB_UNKNOWN_TITLE, JOB_UNKNOWN.format(job_id=job_id))
    return job_render(request, row, {"row": row, "percent": job_percent(row), **(row.report or {})})
