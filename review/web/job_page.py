"""The page of a background job, one template for every kind (templates/review/jobs/job.html): what
started it, its progress while it runs (htmx polls the region every second), then what it did, or why
it failed. The recount's page (review/jobs/views.py) and an import's (review/imports/views.py) render
through ``job_render``."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from review.models import ImportJob
from review.web.htmx import render_region

# What the page says of each kind: (heading, progress bar's name, failure's first words, back link's
# route and words). An import of any source reads as an import.
_RECOUNT = ("Recount job", "Recount progress", "The recount failed:", "review:queue", "Back to the piles")
_IMPORT = (
    "Import job",
    "Import progress",
    "The import failed:",
    "review:import_altimate",
    "Import another zip",
)


def job_render(request: HttpRequest, row: ImportJob, context: dict) -> HttpResponse:
    """The job page of ``row`` with ``context`` as ``job`` (at least ``row`` and ``percent``, plus the
    kind's report parts); an htmx request gets only the job's region, which polls this same address."""
    recount = row.kind == ImportJob.Kind.RECOUNT
    heading, progress, failed, back, back_label = _RECOUNT if recount else _IMPORT
    page = {
        "kind": "recount" if recount else "import",
        "heading": heading,
        "progress": progress,
        "failed": failed,
        "poll": request.path,
        "back": reverse(back),
        "back_label": back_label,
    }
    return render_region(request, "review/jobs/job.html", "job", {"job": context, "page": page})
