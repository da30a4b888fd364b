"""A polled region sends back the ETag of its last answer, and a 304 swaps nothing (static/js/app.js, the
htmx-config of templates/base.html, review/middleware.py ``ConditionalPagesMiddleware``;
docs/production.md, "Cache"): a queued job's page, polled every second while nothing changes."""

from __future__ import annotations

import importlib

import pytest

from tests.fixtures.browser import browser, sign_in  # noqa: F401, F811 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def roles(transactional_db):
    from django.apps import apps

    importlib.import_module("review.migrations.0002_roles").create_roles(apps, None)


def test_a_poll_that_nothing_changed_gets_304_and_keeps_its_region(sign_in, live_server, admin_user):  # noqa: F811
    from review.models import ImportJob
    from review.services.jobs import job_create

    job = job_create(kind=ImportJob.Kind.RECOUNT, payload=b'{"hosts": {}}', options={}, created_by=admin_user)
    page = sign_in("ada", "ada-pass")
    polls: list[tuple[int, str | None]] = []
    address = f"/jobs/{job.pk}/"

    def seen(response) -> None:
        request = response.request
        if request.url.endswith(address) and request.headers.get("hx-request"):
            polls.append((response.status, request.headers.get("if-none-match")))

    page.on("response", seen)
    page.goto(f"{live_server.url}{address}")
    region = page.locator("[hx-trigger='every 1s']")
    text = region.inner_text()

    for _ in range(80):  # up to 8 s for four polls (a second apart)
        if len(polls) >= 4:
            break
        page.wait_for_timeout(100)
    assert len(polls) >= 4
    assert polls[0] == (200, None)  # the first poll has no tag yet
    # the next ones send the tag back; while nothing changed (and the minute did not turn), 304
    assert all(tag is not None for _status, tag in polls[1:])
    assert [status for status, _tag in polls[1:]].count(304) >= 2
    assert region.inner_text() == text  # a 304 swapped nothing: the region is still there, unchanged
