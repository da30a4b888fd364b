"""Routes of the reviewer pages (app ``review``), one table for every area. Group additions by page; keep
names ``review:<page>``. The table stays flat, in this order: Django's debug 404 page lists it as written."""

from django.urls import path

from review.drafts import views as drafts
from review.hosts import views as hosts
from review.imports import views as imports_views
from review.jobs import views as jobs
from review.lessons import views as lessons
from review.log import views as log
from review.outcomes import views as outcome_views
from review.piles import fact_views
from review.piles import views as piles
from review.written import views as written

app_name = "review"
urlpatterns: list = [
    path("", piles.queue, name="queue"),
    path("pile/", piles.pile, name="pile"),
    path("pile/retire/", piles.pile_retire, name="pile_retire"),
    path("pile/restore/", piles.pile_restore, name="pile_restore"),
    path("pile/claim/", piles.pile_claim, name="pile_claim"),
    path("pile/resolve/", fact_views.pile_resolve, name="pile_resolve"),
    path("pile/mark/", fact_views.pile_mark, name="pile_mark"),
    # a consolidation written by a reviewer (issue 22, Build 4): the editor, its live coverage matrix
    path("pile/write/", written.pile_write, name="pile_write"),
    path("pile/write/matrix/", written.pile_write_matrix, name="pile_write_matrix"),
    path("lessons/<str:host>/<str:lesson_hash>/", lessons.lesson, name="lesson"),
    path("lessons/<str:host>/<str:lesson_hash>/restore/", lessons.lesson_restore, name="lesson_restore"),
    path("lessons/<str:host>/<str:lesson_hash>/retire/", lessons.lesson_retire, name="lesson_retire"),
    path("hosts/", hosts.hosts, name="hosts"),
    path("host-names/", hosts.host_names, name="host_names"),
    path("hosts/<str:name>/", hosts.host, name="host"),
    path("imports/altimate/", imports_views.import_altimate, name="import_altimate"),
    path("imports/jobs/<int:job_id>/", imports_views.import_job, name="import_job"),
    path("imports/jobs/<int:job_id>/import/", imports_views.import_job_again, name="import_job_again"),
    path("jobs/<int:job_id>/", jobs.job, name="job"),
    # the decision log, its exports, host budgets (docs/decisions.md)
    path("decisions/", log.decisions, name="decisions"),
    path("decisions/revisit/", outcome_views.revisit, name="revisit"),
    path("decisions/calibration/", outcome_views.calibration, name="calibration"),
    path("decisions/<str:seq>/", outcome_views.decision, name="decision"),
    path("review/decisions/export.jsonl", log.decisions_export_jsonl, name="decisions_export_jsonl"),
    path("review/decisions/export.csv", log.decisions_export_csv, name="decisions_export_csv"),
    path("hosts/<str:name>/budget/", hosts.host_budget, name="host_budget"),
    # consolidation drafts: the page and its decisions (docs/decisions.md, "The actions"). A draft id may hold
    # "/"
    # (path:), so the three actions come first: a POST to ".../a/b/approve/" is draft "a/b"'s approve,
    # a GET of it the page of draft "a/b/approve" (a decision is never a GET).
    path("drafts/<str:host>/<path:draft_id>/approve/", drafts.draft_approve, name="draft_approve"),
    path("drafts/<str:host>/<path:draft_id>/reject/", drafts.draft_reject, name="draft_reject"),
    path("drafts/<str:host>/<path:draft_id>/rollback/", drafts.draft_rollback, name="draft_rollback"),
    path("drafts/<str:host>/<path:draft_id>/", drafts.draft, name="draft"),
    # recurrence: what users keep correcting that no live lesson anchors (docs/piles-and-recurrence.md,
    # "Recurrence")
    path("hosts/<str:host>/unmatched-topics/", hosts.unmatched_topics, name="unmatched_topics"),
]
