"""GET ``/jobs/<id>/``, a background recount's page (review/services/recount.py): anyone who may read
piles may read it, so the reviewer who retired sees the job their retire started. The page itself is
review/web/job_page.py's, shared with an import's."""

from __future__ import annotations

from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.views.decorators.http import require_http_methods

from review.models import ImportJob
from review.roles import PERM_VIEW
from review.services.jobs import job_percent
from review.web.job_page import job_render


@require_http_methods(["GET"])
@permission_required(PERM_VIEW, raise_exception=True)
def job(request: HttpRequest, job_id: int) -> HttpResponse:
    """GET ``/jobs/<id>/``: recount job ``job_id`` (404 for another kind)."""
    row = get_object_or_404(ImportJob, pk=job_id, kind=ImportJob.Kind.RECOUNT)
    return job_render(request, row, {"row": row, "percent": job_percent(row), **(row.report or {})})
