"""The import page's jobs (issue 13, Build 2; issue 12, finding 8): after a dry run the zip is kept and
"Import this zip now" imports it without choosing it again, "Dry run" is no longer ticked, an import links
to its host; a large zip goes to the task worker and the job page follows it with htmx polling.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.management import call_command

from lessons.models import Host, Lesson
from review.models import ImportJob
from tests.html import parse
from tests.review.imports.test_import_page import corpus_zip, post

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def as_admin(client, admin_user):
    client.force_login(admin_user)
    return client


def test_after_a_dry_run_the_zip_is_kept_and_imports_with_one_click(as_admin):
    response = post(as_admin, corpus_zip(), dry_run=True)
    assert response.status_code == 200
    page = parse(response.content)
    assert "Dry run: nothing was written" in page.find(data_testid="import-report").find("h2").text
    assert Lesson.objects.count() == 0
    # the form below keeps the host and no longer ticks "Dry run"
    assert page.find("input", name="host").attrs["value"] == "dbt-project"
    assert "checked" not in page.find("input", name="dry_run").attrs
    button = page.find(data_testid="import-now")
    dry = ImportJob.objects.get()
    assert button.attrs["action"] == f"/imports/jobs/{dry.pk}/import/"
    assert "learn.zip" in button.text
    assert page.find(data_testid="host-link") is None  # nothing written: no host to open yet

    done = as_admin.post(button.attrs["action"])
    real = ImportJob.objects.exclude(pk=dry.pk).get()
    assert done.status_code == 302 and done["Location"] == f"/imports/jobs/{real.pk}/"
    assert (real.state, real.options, real.host) == ("succeeded", {"dry_run": False}, "dbt-project")
    assert Lesson.objects.filter(host__name="dbt-project").count() > 0
    job_page = parse(as_admin.get(done["Location"]).content)
    assert job_page.find(data_testid="import-report").find("h2").text.strip() == "Imported"
    assert job_page.find(data_testid="host-link").attrs["href"] == "/hosts/dbt-project/"


def test_an_import_links_to_its_host_and_drops_the_zip(as_admin):
    page = parse(post(as_admin, corpus_zip()).content)
    assert page.find(data_testid="host-link").attrs["href"] == "/hosts/dbt-project/"
    assert page.find(data_testid="import-now") is None
    assert ImportJob.objects.get().payload is None


def test_the_kept_zip_of_a_real_import_cannot_be_imported_again(as_admin):
    post(as_admin, corpus_zip())
    job = ImportJob.objects.get()
    assert as_admin.post(f"/imports/jobs/{job.pk}/import/").status_code == 404


def test_a_large_zip_goes_to_the_worker_and_its_page_polls_until_the_report(as_admin, settings):
    settings.IMPORT_BACKGROUND_BYTES = 1
    response = post(as_admin, corpus_zip())
    job = ImportJob.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/imports/jobs/{job.pk}/"
    assert Lesson.objects.count() == 0
    queued = parse(as_admin.get(response["Location"]).content).find(data_testid="import-job")
    assert queued.attrs["data-state"] == "queued"
    assert queued.attrs["hx-trigger"] == "every 1s"
    assert queued.attrs["hx-get"] == f"/imports/jobs/{job.pk}/"
    assert queued.find("progress").attrs["value"] == "0"
    assert "Waiting for the background worker" in queued.text

    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", "--verbosity", "0")
    region = as_admin.get(response["Location"], HTTP_HX_REQUEST="true")
    fragment = parse(region.content)
    assert fragment.find("h1") is None  # only the polled region
    done = fragment.find(data_testid="import-job")
    assert done.attrs["data-state"] == "succeeded"
    assert "hx-trigger" not in done.attrs  # finished: the polling stops
    assert done.find(data_testid="host-link").attrs["href"] == "/hosts/dbt-project/"
    assert Host.objects.filter(name="dbt-project").exists()


def test_a_refused_large_zip_is_a_failed_job_that_says_why(as_admin, settings):
    settings.IMPORT_BACKGROUND_BYTES = 1
    response = post(as_admin, b"not a zip at all")
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", "--verbosity", "0")
    page = parse(as_admin.get(response["Location"]).content)
    assert page.find(data_testid="job-error").text.strip() == (
        "The import failed: The file is not a zip archive."
    )
    assert Lesson.objects.count() == 0


def test_a_viewer_or_reviewer_may_not_see_a_job(client, viewer, reviewer, admin_user):
    client.force_login(admin_user)
    post(client, corpus_zip(), dry_run=True)
    job = ImportJob.objects.get()
    for user in (viewer, reviewer):
        client.force_login(user)
        assert client.get(f"/imports/jobs/{job.pk}/").status_code == 403
        assert client.post(f"/imports/jobs/{job.pk}/import/").status_code == 403


def test_a_dry_runs_zip_is_kept_until_the_page_says_then_dropped_by_the_worker(as_admin, settings):
    settings.IMPORT_DRY_RUN_KEEP_SECONDS = 3600
    page = parse(post(as_admin, corpus_zip(), dry_run=True).content)
    dry = ImportJob.objects.get()
    until = (dry.finished_at + timedelta(hours=1)).strftime("%Y-%m-%d %H:%M")
    assert f"is kept until {until} UTC" in " ".join(page.find(data_testid="import-now").text.split())

    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", "--verbosity", "0")
    assert ImportJob.objects.get().payload is not None  # within the hour

    ImportJob.objects.filter(pk=dry.pk).update(finished_at=dry.finished_at - timedelta(seconds=3601))
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", "--verbosity", "0")
    assert ImportJob.objects.get().payload is None
    assert parse(as_admin.get(f"/imports/jobs/{dry.pk}/").content).find(data_testid="import-now") is None
    assert as_admin.post(f"/imports/jobs/{dry.pk}/import/").status_code == 404


def test_import_now_hands_the_zip_to_the_new_job(as_admin):
    post(as_admin, corpus_zip(), dry_run=True)
    dry = ImportJob.objects.get()
    as_admin.post(f"/imports/jobs/{dry.pk}/import/")
    assert list(ImportJob.objects.order_by("id").values_list("options", "payload")) == [
        ({"dry_run": True}, None),
        ({"dry_run": False}, None),
    ]
