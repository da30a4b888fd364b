"""Pile, lesson, host and log pages run the same number of queries at two data sizes (issue 10, build 3:
"constant query counts"). Each test measures a page, grows its data several-fold, measures again and
asserts both counts are equal to the exact number. spec: CONTRIBUTING.md ("Views and templates")."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lessons.models import Host
from review.services.decisions import lessons_retire
from review.services.restatements import restatement_mark
from tests.builders import JAN_1_MS, day_ms

WEEK = timedelta(weeks=1)
# The exact counts; four of each are the session, the user, the data version (the page's ETag,
# review/middleware.py ConditionalPagesMiddleware), and the user's and groups' permissions in one query
# (review.backends.RoleBackend).
PILE_QUERIES = 11  # with the pile's claim (review.services.claims), its stored facts and its marks
LESSON_QUERIES = 14  # with the undo of the latest retire; the key's versions read once (review/lessons)
HOST_QUERIES = 10  # with the newest restatement marks (review.hosts.marks) and, over time, the newest
# exposure and correction (no session here: no weeks to read; review.outcomes.host_weeks)
HOSTS_QUERIES = 6  # paged (issue 25): the count of hosts, then a page of them with their stored totals
LOG_QUERIES = 10  # actor choices (the host is typed: issue 25), the page, the bounded count, the chart
PILE = "/pile/?host=qa-host&namespace=qa&subject=orders"


def queries_of(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200, url
    return len(captured)


def draft(ingest, *, n: int, supersedes: list[str]):
    """``n`` pending drafts on qa-host's qa/orders, each superseding ``supersedes``."""
    records = [
        {
            "type": "draft",
            "host": "qa-host",
            "id": f"d-{i}",
            "namespace": "qa",
            "subject": "orders",
            "text": f"Check every field twice ({i}).",
            "supersedes": supersedes,
            "drafted_by": "llm:x",
            "gates": {"ground": "pass", "verify": "pass"},
            "created_at": day_ms(70 + i, start=JAN_1_MS),
        }
        for i in range(n)
    ]
    report = ingest(records)
    assert report.ok, report.error_lines()


def test_a_pile_of_9_and_of_60_members_take_the_same_queries(entity, ingest, as_reviewer, reviewer):
    hashes = entity(9)
    draft(ingest, n=1, supersedes=hashes[:2])
    lessons_retire(host=Host.objects.get(name="qa-host"), hashes=[hashes[8]], actor=reviewer, reason="dup")
    small = queries_of(as_reviewer, PILE)
    hashes = entity(60)
    draft(ingest, n=6, supersedes=hashes[:9])
    lessons_retire(host=Host.objects.get(name="qa-host"), hashes=hashes[20:30], actor=reviewer, reason="dup")
    marks(hashes[30:50], reviewer)  # the facts the marks join and split, and the marks listed
    assert (small, queries_of(as_reviewer, PILE)) == (PILE_QUERIES, PILE_QUERIES)


def marks(hashes: list[str], reviewer) -> None:
    """Restatement marks on qa-host: each pair of ``hashes`` one fact, then the first of each pair a
    different fact from the next pair's first."""
    host = Host.objects.get(name="qa-host")
    same = list(zip(hashes[::2], hashes[1::2], strict=True))
    restatement_mark(host=host, pairs=same, same=True, actor=reviewer, reason="one fact")
    apart = list(zip(hashes[::2], hashes[2::2], strict=False))
    restatement_mark(host=host, pairs=apart, same=False, actor=reviewer, reason="different facts")


def test_a_lesson_with_few_and_many_versions_and_decisions_takes_the_same_queries(
    entity, as_reviewer, reviewer
):
    host = Host.objects.get_or_create(name="qa-host")[0]
    hashes = entity(3, lesson_ids=True)
    lessons_retire(host=host, hashes=hashes[1:2], actor=reviewer, reason="dup")
    url = f"/lessons/qa-host/{hashes[0]}/"
    small = queries_of(as_reviewer, url)
    hashes = entity(40, lesson_ids=True)
    lessons_retire(host=host, hashes=hashes[2:30], actor=reviewer, reason="dup")
    assert (small, queries_of(as_reviewer, url)) == (LESSON_QUERIES, LESSON_QUERIES)


def test_a_host_with_2_and_with_40_entities_takes_the_same_queries(entity, client, viewer, reviewer):
    client.force_login(viewer)
    for i in range(2):
        entity(3 + i, subject=f"s{i}")
    small = queries_of(client, "/hosts/qa-host/")
    for i in range(2, 40):
        hashes = entity(1 + i % 5, subject=f"s{i}")
        if len(hashes) > 3:
            marks(hashes[:4], reviewer)
    assert (small, queries_of(client, "/hosts/qa-host/")) == (HOST_QUERIES, HOST_QUERIES)


def test_the_hosts_page_takes_the_same_queries_for_2_and_12_hosts(entity, client, viewer):
    client.force_login(viewer)
    for i in range(2):
        entity(3, host=f"h{i}")
    small = queries_of(client, "/hosts/")
    for i in range(2, 12):
        entity(3 + i, host=f"h{i}")
    assert (small, queries_of(client, "/hosts/")) == (HOSTS_QUERIES, HOSTS_QUERIES)


@pytest.mark.parametrize(
    "query", ["", "host=beta", "page=2&per_page=5&sort=actor", "reason_code=other&from=2026-01-01"]
)
def test_a_log_of_10_and_of_300_decisions_takes_the_same_queries(
    client, viewer, two_hosts, budget_steps, query
):
    from tests.fixtures.log import at

    alpha, beta = two_hosts
    client.force_login(viewer)
    url = "/decisions/" + (f"?{query}" if query else "")
    budget_steps(beta, 5, now=at("2026-03-02"), code="other")
    budget_steps(alpha, 5, now=at("2026-03-10"))
    small = queries_of(client, url)
    for week in range(30):  # 30 weeks: the chart's window cuts the oldest
        budget_steps(beta if week % 3 else alpha, 10, now=at("2026-03-16") + week * WEEK, code="other")
    assert (small, queries_of(client, url)) == (LOG_QUERIES, LOG_QUERIES)


@pytest.mark.skipif(connection.vendor != "sqlite", reason="SQLite's plan; PostgreSQL plans by its statistics")
def test_the_pile_reads_its_entity_s_newest_decision_by_index_not_the_host_s_log(
    entity, as_reviewer, reviewer
):
    """The newest decision on the pile's entity (what the page was built after) was found by filtering the
    host's whole log: 260 ms a pile at 1M decisions on PostgreSQL (docs/benchmarks.md). Every search of the
    decisions on the pile page is an index seek: on the lesson, the entity, or the host's approves."""
    hashes = entity(9)
    lessons_retire(host=Host.objects.get(name="qa-host"), hashes=[hashes[8]], actor=reviewer, reason="dup")
    with CaptureQueriesContext(connection) as captured:
        assert as_reviewer.get(PILE).status_code == 200
    plans = []
    with connection.cursor() as cursor:
        for query in captured:
            if '"review_decision"' in query["sql"]:
                cursor.execute(f"EXPLAIN QUERY PLAN {query['sql']}")
                plans += [
                    row[-1] for row in cursor.fetchall() if row[-1].startswith(("SEARCH U0", "SCAN U0"))
                ]
    assert plans == [
        "SEARCH U0 USING INDEX decision_lesson_seq (host=? AND lesson_hash=?)",
        "SEARCH U0 USING COVERING INDEX decision_entity_seq (host=? AND namespace=? AND subject=?)",
        "SEARCH U0 USING INDEX decision_host_action (host=? AND action=?)",  # a draft's approve
    ]
