"""The kept parts of the pile page, the queue, the log and the lesson page (review/web/fragments.py;
docs/production.md, "Cache"): a view nothing changed since reads them from the cache; any committed
write, through the page or not, is shown at once; a viewer never gets a reviewer's rows. With the
process's memory and a real Redis server."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time

import pytest
from django.core.cache import cache, caches
from django.db import connection, transaction
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from lessons.core.text import lesson_hash
from lessons.models import Host
from lessons.services.data_version import current
from review.web.fragments import fragment
from tests.builders import day_ms, exposure, lesson
from tests.spies import counted_calls

ENTITY = "host=acme&namespace=qa&subject=orders"
PILE = f"/pile/?{ENTITY}"
TEXTS = [f"Copy order field {i} exactly as printed, digit {i} kept." for i in range(4)]
HASHES = [lesson_hash("qa", "orders", t) for t in TEXTS]
# A kept pile's view reads the sign-in, the data version (first), the host and the claim: no lesson, no
# fact.
QUERIES_KEPT = [
    '"django_session"',
    '"auth_user"',
    "lessons_dataversion",  # read by the page's ETag (review/middleware.py), before the view reads anything
    '"auth_permission"',
    '"lessons_host"',
    '"review_pileclaim"',
]
ROW = re.compile(r'<tr data-hash="([0-9a-f]{64})" data-row="[0-9a-f]{64}" data-group=')  # member rows

# The queue row's live count against the budget (its gauge's title).
FOUR_LIVE = 'title="4 live of a budget of'
THREE_LIVE = 'title="3 live of a budget of'


def _records(texts):
    records = [{"type": "host", "name": "acme", "max_active": 2, "budget_enabled": True}]
    return records + [
        lesson(host="acme", namespace="qa", subject="orders", text=t, created_at=day_ms(i))
        for i, t in enumerate(texts)
    ]


def _rows(response) -> list[str]:
    assert response.status_code == 200
    return ROW.findall(response.content.decode())


def _version(client) -> str:
    return re.search(r'name="pile_version" value="([^"]+)"', client.get(PILE).content.decode()).group(1)


def _signed_in_fresh(ingest, client, reviewer) -> None:
    """An empty cache, the acme entity ingested, the reviewer signed in: where each kept-part test starts."""
    cache.clear()
    assert ingest(_records(TEXTS)).ok
    client.force_login(reviewer)


def _kept_then_changed(ingest, client, reviewer, viewer):
    _signed_in_fresh(ingest, client, reviewer)
    first = client.get(PILE)
    assert _rows(first) == HASHES and 'name="members"' in first.content.decode()
    with CaptureQueriesContext(connection) as kept:
        again = client.get(PILE)
    assert _rows(again) == HASHES
    assert QUERIES_KEPT == [q["sql"].split(" FROM ")[1].split()[0] for q in kept if " FROM " in q["sql"]]
    # a viewer at the same version gets the rows without checkboxes, not the reviewer's
    client.force_login(viewer)
    seen = client.get(PILE)
    assert _rows(seen) == HASHES and 'name="members"' not in seen.content.decode()
    # a decision through the page
    client.force_login(reviewer)
    before = current()
    retired = client.post(
        f"/pile/retire/?{ENTITY}",
        {"members": [HASHES[0]], "reason": "restates 1", "pile_version": _version(client)},
    )
    assert retired.status_code == 302 and current() != before
    assert _rows(client.get(PILE)) == HASHES[1:]
    # a write outside the web: an import adds a member
    assert ingest(_records([*TEXTS, "Copy order field 9 exactly as printed, digit 9 kept."])).ok
    assert _rows(client.get(PILE)) == [
        *HASHES[1:],
        lesson_hash("qa", "orders", "Copy order field 9 exactly as printed, digit 9 kept."),
    ]


@pytest.mark.django_db(transaction=True)
def test_a_kept_pile_is_read_from_the_cache_and_every_write_shows_at_once(ingest, client, reviewer, viewer):
    _kept_then_changed(ingest, client, reviewer, viewer)


@pytest.mark.django_db(transaction=True)
def test_nothing_is_kept_for_a_request_that_writes(rf):
    Host.objects.create(name="alpha")  # a counted write: the version is not "0"
    cache.clear()
    built = []
    for _ in range(2):
        fragment(rf.post("/"), ("x",), lambda: built.append(1))
    assert built == [1, 1]
    assert fragment(rf.get("/"), ("x",), lambda: "built") == "built"
    assert fragment(rf.head("/"), ("x",), lambda: "again") == "built"


def test_nothing_is_kept_inside_a_transaction(rf, db):
    built = []
    request = rf.get("/")
    with transaction.atomic():
        fragment(request, ("x",), lambda: built.append(1))
        fragment(request, ("x",), lambda: built.append(1))
    assert built == [1, 1]


@pytest.mark.django_db(transaction=True)
def test_nothing_is_kept_before_the_first_write_or_when_turned_off(rf, settings):
    built = []
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM lessons_dataversion")  # as before the first write
    assert current() == "0"
    fragment(rf.get("/"), ("x",), lambda: built.append(1))
    fragment(rf.get("/"), ("x",), lambda: built.append(1))
    assert built == [1, 1]
    Host.objects.create(name="alpha")
    cache.clear()
    assert fragment(rf.get("/"), ("x",), lambda: "built") == "built"
    assert fragment(rf.get("/"), ("x",), lambda: "again") == "built"  # kept at this version
    assert fragment(rf.get("/"), ("y",), lambda: "other") == "other"  # another key
    settings.FRAGMENT_CACHE_SECONDS = 0
    assert fragment(rf.get("/"), ("x",), lambda: "fresh") == "fresh"


@pytest.fixture
def redis_url(tmp_path):
    """A real Redis server on a free local port for the test, stopped after it."""
    server = shutil.which("redis-server")
    if server is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is missing: .ci/run installs it (apt-get install redis-server)")
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [
            server,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.mark.django_db(transaction=True)
def test_the_same_with_a_real_redis_server(redis_url, ingest, client, reviewer, viewer):
    redis = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": redis_url}}
    with override_settings(CACHES=redis):
        assert type(caches["default"]).__name__ == "RedisCache"
        _kept_then_changed(ingest, client, reviewer, viewer)
        client_keys = caches["default"]._cache.get_client().keys("*fragment:*")
        assert len(client_keys) >= 4  # the parts were kept in Redis


@pytest.mark.django_db(transaction=True)
def test_a_cache_server_that_is_down_costs_time_not_the_page(ingest, client, reviewer, caplog):
    down = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:1/0",
        }
    }
    assert ingest(_records(TEXTS)).ok
    client.force_login(reviewer)
    with override_settings(CACHES=down):
        assert _rows(client.get(PILE)) == HASHES
    assert "cache unavailable: pile_detail built without it" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_the_queue_table_is_kept_and_follows_every_write(ingest, client, reviewer, monkeypatch):
    from review.piles.tables import QueueTable

    built = counted_calls(monkeypatch, QueueTable, "as_html")
    _signed_in_fresh(ingest, client, reviewer)
    first = client.get("/").content.decode()
    assert FOUR_LIVE in first and "claimed by" not in first
    assert client.get("/").content.decode().count(FOUR_LIVE) == first.count(FOUR_LIVE) == 1
    assert len(built) == 1  # the second view read the table from the cache
    assert client.post(f"/pile/claim/?{ENTITY}", {"do": "claim"}).status_code == 302
    assert "claimed by rita, 0 min ago" in client.get("/").content.decode()
    assert len(built) == 2
    retired = client.post(
        f"/pile/retire/?{ENTITY}",
        {"members": [HASHES[0]], "reason": "restates 1", "pile_version": _version(client)},
    )
    assert retired.status_code == 302
    after = client.get("/").content.decode()
    assert THREE_LIVE in after and FOUR_LIVE not in after


CSRF_VALUE = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"|"X-CSRFToken": "[^"]+"')


@pytest.mark.django_db(transaction=True)
def test_a_kept_queue_view_makes_no_table_and_shows_the_same_bytes(ingest, client, reviewer, monkeypatch):
    from review.piles.tables import QueueTable

    made = counted_calls(monkeypatch, QueueTable, "__init__")
    _signed_in_fresh(ingest, client, reviewer)

    def shown(url: str) -> str:
        response = client.get(url)
        assert response.status_code == 200
        return CSRF_VALUE.sub("csrf", response.content.decode())  # masked anew at each view

    for url in ("/", "/?sort=-oldest", "/?host=acme", "/?q=order"):
        first = shown(url)
        assert FOUR_LIVE in first
        assert len(made) == 1
        assert shown(url) == first  # kept: no table made
        assert len(made) == 1
        with override_settings(FRAGMENT_CACHE_SECONDS=0):
            assert shown(url) == first  # built every time: the same bytes
        assert len(made) == 2
        made.clear()


@pytest.mark.django_db(transaction=True)
def test_the_lesson_page_is_kept_and_follows_its_retire(ingest, client, reviewer, monkeypatch):
    import review.lessons.lookups as lookups

    read = counted_calls(monkeypatch, lookups, "lesson_detail")
    _signed_in_fresh(ingest, client, reviewer)
    page = f"/lessons/acme/{HASHES[0]}/"
    first = client.get(page).content.decode()
    assert 'class="retire-one"' in first and client.get(page).status_code == 200
    assert len(read) == 1  # the second view read the lesson from the cache
    version = re.search(r'name="pile_version" value="([^"]+)"', first).group(1)
    retired = client.post(page + "retire/", {"reason": "said elsewhere", "pile_version": version})
    assert retired.status_code == 302
    after = client.get(page).content.decode()
    assert 'class="retire-one"' not in after and "retracted" in after


@pytest.mark.django_db(transaction=True)
def test_the_log_chart_and_table_are_kept_and_follow_a_new_decision(ingest, client, reviewer, monkeypatch):
    import review.log.views as log_views
    from review.log.tables import DecisionTable
    from review.services.decisions import lessons_retire

    charts = counted_calls(monkeypatch, log_views, "_chart")
    tables = counted_calls(monkeypatch, DecisionTable, "as_html")
    cache.clear()
    assert ingest(_records(TEXTS)).ok
    host = Host.objects.get(name="acme")
    lessons_retire(host=host, hashes=[HASHES[0]], actor=reviewer, reason="restates 1", reason_code="obsolete")
    client.force_login(reviewer)
    first = client.get("/decisions/").content.decode()
    assert "restates 1" in first and first.count("<figure") == 1
    assert client.get("/decisions/").content.decode().count("<figure") == 1
    assert (len(charts), len(tables)) == (1, 1)  # the second view read both from the cache
    client.get("/decisions/?sort=-seq")  # another table order: the same chart, another table
    assert (len(charts), len(tables)) == (1, 2)
    client.get("/decisions/?action=retire")  # another filter: both drawn
    assert (len(charts), len(tables)) == (2, 3)
    lessons_retire(host=host, hashes=[HASHES[1]], actor=reviewer, reason="restates 2", reason_code="obsolete")
    assert "restates 2" in client.get("/decisions/").content.decode()
    assert (len(charts), len(tables)) == (3, 4)  # a new decision: both drawn again


@pytest.mark.django_db(transaction=True)
def test_a_write_between_the_queue_rows_and_its_table_is_shown_on_the_next_view(
    ingest, client, reviewer, monkeypatch
):
    """The version is read before the rows: a table built from rows older than a write is never kept
    under the version that write made."""
    from review.piles import selectors
    from review.services.decisions import lessons_retire

    cache.clear()
    assert ingest(_records(TEXTS)).ok
    read = selectors.queue_page

    def rows_then_a_write(**kwargs):
        page = read(**kwargs)  # 4 live
        monkeypatch.setattr(selectors, "queue_page", read)
        host = Host.objects.get(name="acme")
        lessons_retire(
            host=host, hashes=[HASHES[0]], actor=reviewer, reason="restates 1", reason_code="obsolete"
        )
        return page

    monkeypatch.setattr(selectors, "queue_page", rows_then_a_write)
    client.force_login(reviewer)
    assert FOUR_LIVE in client.get("/").content.decode()  # read before the write: the race itself
    again = client.get("/").content.decode()
    assert THREE_LIVE in again and FOUR_LIVE not in again


@pytest.mark.django_db(transaction=True)
def test_the_lesson_pages_recurrence_section_is_kept_rendered_and_follows_new_evidence(
    ingest, client, reviewer, monkeypatch
):
    """The section (timeline, corrections, same text elsewhere) is rendered once per version: a second
    view neither reads the recurrence nor renders its template; an ingest of a session shown the lesson
    (a write on its host) shows in the next view."""
    import review.lessons.views as lesson_views

    built = counted_calls(monkeypatch, lesson_views, "lesson_recurrence")
    _signed_in_fresh(ingest, client, reviewer)
    page = f"/lessons/acme/{HASHES[0]}/"
    first, second = client.get(page), client.get(page)
    section = "review/lessons/_recurrence_detail.html"
    assert section in [t.name for t in first.templates]
    assert section not in [t.name for t in second.templates]  # kept rendered
    assert _no_tokens(second.content.decode()) == _no_tokens(first.content.decode())
    assert len(built) == 1
    first = first.content.decode()
    assert 'data-testid="timeline"' not in first  # nothing shown the lesson yet: nothing to draw
    shown = exposure(host="acme", session="s-1", shown_at="2026-02-01T10:00:00Z", lesson=HASHES[0])
    assert ingest([shown]).ok
    after = client.get(page).content.decode()
    assert len(built) == 2
    assert 'data-testid="timeline"' in after and "Recurrence timeline of lesson" in after


def _no_tokens(html: str) -> str:
    """A page without its CSRF tokens (masked anew for every answer)."""
    return re.sub(r'(csrfmiddlewaretoken" value="|X-CSRFToken": ")[^"]+', r"\1", html)
