"""A status change whose recurrence refresh is large is recounted by a background job: the page answers at
once and says so with a link to the job; once the worker (django-tasks-db's ``db_worker``, run for real)
has run it the counts are those of a full recompute; a job that died is run again with the same result;
a failed job says what to run. Small changes, and changes outside a web request, stay synchronous.
spec: issue 13, Build 2 ("recurrence recomputes after a status change ... return at once with a job").
"""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import pytest
from django.test import Client
from django.utils import timezone

from lessons.models import Host
from lessons.recurrence import refresh
from lessons.recurrence.refresh import recurrence_recompute
from lessons.selectors.piles import entity_lessons, pile_version
from review.models import ImportJob
from review.services.decisions import lessons_retire
from review.services.jobs import jobs_recover
from tests.lessons.recurrence.builders import ENTITY, counts, hash_of, snapshot, stored_counts
from tests.lessons.recurrence.test_status_changes import V1, V2, key
from tests.lessons.recurrence.test_status_changes import two_versions as _world  # noqa: F401 - the fixture
from tests.review.jobs.test_api_jobs import run_worker

# the world of the status-change tests: L-1 with two live texts (V2 current), three corrected sessions
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("_world")]

BEFORE = counts(sessions_shown=1, recurred=1, recurred_sessions=1, earlier_version=2)  # on V2, current
AFTER = counts(sessions_shown=2, recurred=2, recurred_sessions=2, earlier_version=1)  # on V1 once V2 retired


@pytest.fixture
def background(settings):
    """Every status change from a page is recounted in the background (more than 0 keys)."""
    settings.RECURRENCE_BACKGROUND_KEYS = 0


@pytest.fixture
def rita(reviewer):
    client = Client()
    client.force_login(reviewer)
    return client


def retire_v2(client: Client, **headers):
    desk = Host.objects.get(name="desk")
    version = pile_version(list(entity_lessons(host=desk, **ENTITY)))
    form = {"reason": "worse wording", "pile_version": version}
    return client.post(f"/lessons/desk/{hash_of(V2)}/retire/", form, **headers)


def the_job() -> ImportJob:
    (job,) = ImportJob.objects.filter(kind=ImportJob.Kind.RECOUNT)
    return job


def assert_equals_full_recompute() -> None:
    kept = snapshot()
    recurrence_recompute()
    assert snapshot() == kept


def test_a_large_recount_answers_at_once_with_a_link_to_its_job(background, rita):
    answer = retire_v2(rita)
    assert answer.status_code == 302
    job = the_job()
    assert (job.state, job.lines_total, job.task_id != "") == ("queued", 1, True)
    assert stored_counts()[key(V2)] == BEFORE  # not yet recounted: the request did not wait
    page = rita.get(answer["Location"]).content.decode()
    link = f'<a href="/jobs/{job.pk}/">recount job {job.pk}</a>'
    assert f"Recurrence counts are being recomputed in the background: {link}." in page
    waiting = rita.get(f"/jobs/{job.pk}/").content.decode()
    assert "Waiting for the background worker" in waiting
    assert 'hx-trigger="every 1s"' in waiting

    run_worker()
    job.refresh_from_db()
    assert (job.state, job.error, job.lines_done, job.payload) == ("succeeded", "", 1, None)
    assert job.report == {"hosts": 1, "keys": 1, "sessions": 3, "attributions": 4, "lessons": 2}
    assert stored_counts()[key(V1)] == AFTER
    assert key(V2) not in stored_counts()
    done = rita.get(f"/jobs/{job.pk}/").content.decode()
    assert "1 lesson key on 1 host, 3 sessions attributed again. The counts are current." in done
    assert "hx-trigger" not in done
    assert_equals_full_recompute()


def test_an_htmx_answer_carries_the_notice_out_of_band(background, rita):
    answer = retire_v2(rita, HTTP_HX_REQUEST="true")
    job = the_job()
    body = answer.content.decode()
    assert '<div id="job-notices" hx-swap-oob="true">' in body
    assert f'<a href="/jobs/{job.pk}/">recount job {job.pk}</a>' in body
    run_worker()
    assert stored_counts()[key(V1)] == AFTER


def test_a_small_change_is_recounted_in_the_request(rita):
    # the default threshold (100 keys): one key is refreshed before the answer, no job
    assert retire_v2(rita).status_code == 302
    assert not ImportJob.objects.exists()
    assert stored_counts()[key(V1)] == AFTER


def test_a_change_outside_a_web_request_is_recounted_at_once(background, reviewer):
    lessons_retire(host=Host.objects.get(name="desk"), hashes=[hash_of(V2)], actor=reviewer, reason="x")
    assert not ImportJob.objects.exists()
    assert stored_counts()[key(V1)] == AFTER


def test_a_refresh_run_first_does_not_hide_the_stale_key_from_the_job(background, rita):
    # Another writer refreshes V1/V2's key before the job runs (its counts move onto V1, so the key no
    # longer looks stale); the job still re-attributes every session that saw it, as noted when queued.
    retire_v2(rita)
    refresh.recurrence_refresh(sessions=[(Host.objects.get(name="desk").id, "s2")])
    run_worker()
    assert stored_counts()[key(V1)] == AFTER
    assert_equals_full_recompute()


def test_a_recount_whose_worker_died_is_run_again_with_the_same_counts(background, rita):
    retire_v2(rita)
    job = the_job()
    payload = bytes(job.payload)
    run_worker()
    kept = snapshot()
    # as if the worker died after the recount committed, before it recorded the job as finished
    stale = timezone.now() - timedelta(hours=1)
    ImportJob.objects.filter(pk=job.pk).update(
        state="running", heartbeat_at=stale, finished_at=None, payload=payload
    )
    assert jobs_recover() == [job.pk]
    run_worker()
    job.refresh_from_db()
    assert (job.state, job.attempt) == ("succeeded", 2)
    assert snapshot() == kept
    assert_equals_full_recompute()


def test_a_failed_recount_is_shown_with_the_remedy(background, rita):
    retire_v2(rita)
    with mock.patch("review.tasks.recount.recurrence_keys_changed", side_effect=RuntimeError("disk")):
        run_worker()
    job = the_job()
    expected = (
        "the recount failed on the server (RuntimeError); the decisions are saved, the recurrence counts "
        "may be behind: run manage.py recurrence --recompute"
    )
    assert (job.state, job.error) == ("failed", expected)
    page = rita.get(f"/jobs/{job.pk}/").content.decode()
    assert f"The recount failed: {expected}" in page
    recurrence_recompute()  # the remedy
    assert stored_counts()[key(V1)] == AFTER


def test_the_job_page_is_for_recounts_and_for_signed_in_readers(background, rita):
    retire_v2(rita)
    job = the_job()
    assert Client().get(f"/jobs/{job.pk}/").status_code == 302  # to sign in
    missing = rita.get(f"/jobs/{job.pk + 1}/")
    assert missing.status_code == 404
    assert f"There is no recount job #{job.pk + 1}." in missing.content.decode()
    run_worker()
