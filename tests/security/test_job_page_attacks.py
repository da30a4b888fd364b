"""Who may open a background job's page, and what an id that is no such job gets (issue 13, Build 2:
``/jobs/<id>/`` for recounts, ``/imports/jobs/<id>/`` for altimate imports; review/services/recount.py).
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from review.models import ImportJob

BIG = 2**63  # past every integer column
HUGE = 10**30


@pytest.fixture
def jobs(db):
    """One job of each kind, keyed by kind."""
    return {
        kind: ImportJob.objects.create(kind=kind, options={}, report={"hosts": 0, "keys": 0, "sessions": 0})
        for kind in ImportJob.Kind.values
    }


def test_a_recount_job_is_for_readers_only(client, viewer, jobs):
    path = f"/jobs/{jobs[ImportJob.Kind.RECOUNT].pk}/"
    response = client.get(path)
    assert (response.status_code, response["Location"]) == (302, f"/accounts/login/?next={path}")
    client.force_login(User.objects.create_user(username="nobody", password="x"))  # signed in, no role
    assert client.get(path).status_code == 403
    client.force_login(viewer)
    assert client.get(path).status_code == 200
    assert client.get(path, HTTP_HX_REQUEST="true").status_code == 200


@pytest.mark.parametrize("kind", [k for k in ImportJob.Kind.values if k != ImportJob.Kind.RECOUNT])
def test_another_kinds_job_is_no_recount_job(client, viewer, jobs, kind):
    client.force_login(viewer)
    assert client.get(f"/jobs/{jobs[kind].pk}/").status_code == 404


@pytest.mark.parametrize("kind", [k for k in ImportJob.Kind.values if k != ImportJob.Kind.ALTIMATE])
def test_another_kinds_job_is_no_import_job(client, admin_user, jobs, kind):
    client.force_login(admin_user)
    assert client.get(f"/imports/jobs/{jobs[kind].pk}/").status_code == 404


@pytest.mark.parametrize("job_id", [0, 999999, 2**31, BIG - 1, BIG, HUGE])
@pytest.mark.parametrize("page", ["/jobs/{}/", "/imports/jobs/{}/"])
def test_an_id_of_no_job_is_a_404(client, admin_user, jobs, page, job_id):
    client.force_login(admin_user)
    assert client.get(page.format(job_id)).status_code == 404


@pytest.mark.parametrize("path", ["/jobs/-1/", "/jobs/1e3/", "/jobs/%31/", "/jobs/１/", "/jobs/1/x/"])
def test_a_malformed_job_address_is_a_404(client, admin_user, jobs, path):
    client.force_login(admin_user)
    assert client.get(path).status_code == 404


def test_a_viewer_cannot_open_an_import_job(client, viewer, jobs):
    client.force_login(viewer)
    assert client.get(f"/imports/jobs/{jobs[ImportJob.Kind.ALTIMATE].pk}/").status_code == 403
