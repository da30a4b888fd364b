"""Conditional requests of the signed-in pages (review/middleware.py ``ConditionalPagesMiddleware``;
docs/production.md, "Cache"): every page carries an ``ETag`` of the data version and what else it shows;
``If-None-Match`` holding it is answered 304 without running the view; any write changes the tag of every
page; another user, session, htmx region or minute is another tag; waiting messages are shown."""

from __future__ import annotations

import pytest
from django.contrib.messages.storage.base import Message
from django.contrib.messages.storage.cookie import CookieStorage
from django.db import connection
from django.test.utils import CaptureQueriesContext

import review.middleware
from lessons.core.text import lesson_hash
from lessons.models import Host
from review.services.decisions import lessons_retire
from tests.builders import day_ms, lesson

pytestmark = pytest.mark.django_db(transaction=True)

TEXTS = [f"Copy order field {i} exactly as printed, digit {i} kept." for i in range(4)]
HASHES = [lesson_hash("qa", "orders", t) for t in TEXTS]
PAGES = [
    "/",
    "/?host=acme",
    "/pile/?host=acme&namespace=qa&subject=orders",
    f"/lessons/acme/{HASHES[0]}/",
    "/decisions/",
    "/hosts/",
    "/hosts/acme/",
    "/decisions/revisit/",
    "/decisions/calibration/",
]


@pytest.fixture
def acme(ingest):
    records = [{"type": "host", "name": "acme", "max_active": 2, "budget_enabled": True}]
    records += [
        lesson(host="acme", namespace="qa", subject="orders", text=t, created_at=day_ms(i))
        for i, t in enumerate(TEXTS)
    ]
    assert ingest(records).ok
    return Host.objects.get(name="acme")


def tags(client) -> dict[str, str]:
    found = {}
    for page in PAGES:
        response = client.get(page)
        assert response.status_code == 200, page
        found[page] = response["ETag"]
    return found


def test_a_page_that_nothing_changed_is_304_without_running_its_view(acme, as_reviewer):
    for page, tag in tags(as_reviewer).items():
        with CaptureQueriesContext(connection) as queries:
            response = as_reviewer.get(page, headers={"If-None-Match": tag})
        assert (response.status_code, response["ETag"], response.content) == (304, tag, b""), page
        # the session, its user and the data version: nothing the view would read
        read = [q["sql"].split(" FROM ")[1].split()[0] for q in queries.captured_queries]
        assert read == ['"django_session"', '"auth_user"', "lessons_dataversion"], page
        assert "no-store" in response["Cache-Control"]


def test_a_write_changes_the_tag_of_every_page(acme, as_reviewer, reviewer):
    before = tags(as_reviewer)
    lessons_retire(host=acme, hashes=HASHES[:1], actor=reviewer, reason="restates another")
    for page, tag in before.items():
        response = as_reviewer.get(page, headers={"If-None-Match": tag})
        assert response.status_code == 200, page
        assert response["ETag"] != tag
    assert len(set(before.values())) == len(PAGES)  # and each page has its own


def test_another_user_another_region_or_another_minute_is_another_tag(
    acme, client, reviewer, viewer, monkeypatch
):
    client.force_login(reviewer)
    page = PAGES[2]
    mine = client.get(page)["ETag"]
    region = client.get(page, headers={"HX-Request": "true", "HX-Target": "members"})
    assert region["ETag"] != mine
    assert client.get(page, headers={"If-None-Match": mine, "HX-Request": "true"}).status_code == 200
    later = review.middleware.time.time() + 60
    monkeypatch.setattr(review.middleware.time, "time", lambda: later)
    assert client.get(page, headers={"If-None-Match": mine}).status_code == 200
    monkeypatch.undo()
    client.force_login(viewer)
    assert client.get(page, headers={"If-None-Match": mine}).status_code == 200


def test_waiting_messages_are_shown_not_answered_304(acme, as_reviewer, rf):
    tag = as_reviewer.get("/")["ETag"]
    # a message a write left for the next page, where Django's default storage keeps it (a cookie)
    storage = CookieStorage(rf.get("/"))
    as_reviewer.cookies[storage.cookie_name] = storage._encode([Message(20, "Restored lesson 1234abcd.")])
    response = as_reviewer.get("/", headers={"If-None-Match": tag})
    assert response.status_code == 200
    assert "Restored lesson 1234abcd." in response.content.decode()
    assert as_reviewer.get("/", headers={"If-None-Match": tag}).status_code == 304  # shown once


def test_the_api_the_admin_and_the_signed_out_get_no_page_tag(acme, client, admin_user):
    assert "ETag" not in client.get("/accounts/login/")
    client.force_login(admin_user)
    assert "ETag" not in client.get("/admin/")
    # the API's HTML docs page, to a signed-in user: the API answers its own reads (token reads), not this
    docs = client.get("/api/v1/docs")
    assert (docs.status_code, docs["Content-Type"].startswith("text/html"), "ETag" in docs) == (
        200,
        True,
        False,
    )
    assert client.get("/", headers={"If-None-Match": "*"}).status_code == 200  # "*" matches nothing
