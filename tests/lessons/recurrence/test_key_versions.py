"""``key_versions`` finds every version of the keys asked for, in one statement per chunk of keys, whatever
mix of keys the chunk holds. spec: docs/piles-and-recurrence.md, "Lesson keys and versions"."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lessons.core.recurrence import lesson_key
from lessons.models import Host, Lesson
from lessons.recurrence.versions import key_versions

AT = datetime(2026, 10, 1, tzinfo=UTC)
# The rows are made directly (no writer keeps entity counts for them): only the lookup is under test.
pytestmark = pytest.mark.counts_unchecked


def stored(host: Host, name: str, *, store: str | None = None, lesson_id: str | None = None) -> Lesson:
    return Lesson.objects.create(
        host=host,
        hash=f"{name:0>64}",
        namespace="desk",
        subject="orders",
        text=f"Text {name}.",
        text_hash=f"t{name:0>63}",
        created_at=AT,
        store=store,
        lesson_id=lesson_id,
    )


@pytest.fixture
def lessons(db) -> dict[str, Lesson]:
    host, other = Host.objects.create(name="qa-host"), Host.objects.create(name="other-host")
    return {
        "plain": stored(host, "a1"),
        "null store": stored(host, "b1", lesson_id="L-1"),
        "empty store": stored(host, "b2", store="", lesson_id="L-1"),
        "team": stored(host, "c1", store="team", lesson_id="L-1"),
        "team v2": stored(host, "c2", store="team", lesson_id="L-2"),
        "other host": stored(other, "c3", store="team", lesson_id="L-2"),
    }


def key(lesson: Lesson) -> str:
    return lesson_key(hash=lesson.hash, store=lesson.store, lesson_id=lesson.lesson_id)


def test_a_hash_key_an_empty_store_key_and_a_store_key_come_back_in_one_query(lessons):
    host_id = lessons["plain"].host_id
    keys = [key(lessons["plain"]), key(lessons["null store"]), key(lessons["team v2"])]
    with CaptureQueriesContext(connection) as queries:
        found = key_versions(host_id=host_id, keys=keys)
    assert [v.hash for v in found] == [
        lessons[n].hash for n in ("plain", "null store", "empty store", "team v2")
    ]
    assert len(queries) == 1


def test_the_same_lesson_id_in_another_store_is_another_key(lessons):
    found = key_versions(host_id=lessons["team"].host_id, keys=[key(lessons["team"])])
    assert [(v.hash, v.key) for v in found] == [(lessons["team"].hash, "id:team\x1fL-1")]


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's plan; PostgreSQL plans by its statistics")
def test_each_kind_of_key_is_an_index_search_not_a_scan_of_the_host(lessons):
    """An OR of the kinds made SQLite walk every lesson of the host (74–110 ms at 1M lessons, issue 10)."""
    host_id = lessons["plain"].host_id
    keys = [key(lessons["plain"]), key(lessons["null store"]), key(lessons["team v2"])]
    with CaptureQueriesContext(connection) as queries:
        key_versions(host_id=host_id, keys=keys)
    with connection.cursor() as cursor:
        cursor.execute(f"EXPLAIN QUERY PLAN {queries[0]['sql']}")
        plan = [row[-1] for row in cursor.fetchall()]
    searches = [step for step in plan if step.startswith("SEARCH")]
    assert searches == [
        "SEARCH lessons_lesson USING INDEX sqlite_autoindex_lessons_lesson_1 (host_id=? AND hash=?)",
        "SEARCH lessons_lesson USING INDEX lesson_store_id (host_id=? AND store=? AND lesson_id=?)",
        "SEARCH lessons_lesson USING INDEX lesson_store_id (host_id=? AND store=? AND lesson_id=?)",
    ]
