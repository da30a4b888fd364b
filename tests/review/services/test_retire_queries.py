"""Retiring N members of a pile runs a number of queries that does not grow with N (issue 9): the
entity's lessons are read once under the lock, the statuses change in one statement, the records are
appended with the chain head locked once. spec: decisions.md, "Actions" (``retire``).
"""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lessons.models import Host, Lesson
from lessons.selectors.piles import entity_lessons, pile_version
from review.models import Decision
from review.services.chain import decisions_verify
from review.services.decisions import lesson_restore, lessons_retire
from tests.builders import numbered_lesson
from tests.fixtures.decisions import NS, SUBJECT

MEMBERS = 22
ENTITY = f"host=acme&namespace={NS}&subject={SUBJECT}"


@pytest.fixture
def big_pile(ingest):
    """Host ``acme`` (budget 3, enabled) with 22 live lessons on one entity; returns their hashes."""
    records = [{"type": "host", "name": "acme", "max_active": 3, "budget_enabled": True}]
    records += [numbered_lesson(i, namespace=NS) for i in range(MEMBERS)]
    report = ingest(records)
    assert report.ok, report.error_lines()
    return [r["hash"] for r in records[1:]]


def version() -> str:
    host = Host.objects.get(name="acme")
    return pile_version(list(entity_lessons(host=host, namespace=NS, subject=SUBJECT)))


def retracted() -> int:
    return Lesson.objects.filter(status=Lesson.Status.RETRACTED).count()


@pytest.mark.parametrize("n", [1, 20])
def test_the_service_runs_the_same_queries_for_1_and_20_members(
    big_pile, reviewer, n, django_capture_on_commit_callbacks
):
    host = Host.objects.get(name="acme")
    reviewer.has_perm("review.decide")  # the permission cache is filled before counting
    seen = version()
    with CaptureQueriesContext(connection) as queries:
        with django_capture_on_commit_callbacks(execute=True) as callbacks:
            decisions = lessons_retire(
                host=host,
                namespace=NS,
                subject=SUBJECT,
                hashes=big_pile[:n],
                actor=reviewer,
                reason="Restates another lesson",
                pile_version=seen,
            )
    assert len(callbacks) == 1
    assert [d.lesson_hash for d in decisions] == big_pile[:n]
    assert [d.seq for d in decisions] == list(range(1, n + 1))
    assert retracted() == n
    assert decisions_verify() == (None, n)
    # Savepoint; the entity's lessons, locked; ONE status update; the chain head locked (created on this
    # first decision: three queries more), the records inserted, the log chart's week counted (one
    # upsert), the head moved; the actor's pile claim
    # released (one DELETE); release. In between, the entity's counts refreshed (totals locked with the
    # budget, lessons, drafts, the stored row, one upsert, the totals moved). Then the one recurrence
    # refresh after the commit: savepoint, host lock, versions, count rows, release. While the entity
    # stays over budget (n = 1 of 21), its facts are stored with the counts: the host's restatement marks
    # are read once more, and the members' stored text vectors (one query: the ingest stored them;
    # docs/piles-and-recurrence.md, "Facts"); the count never grows with n.
    assert len(queries) == {1: 25, 20: 23}[n], "\n".join(q["sql"] for q in queries)


@pytest.mark.parametrize("n", [1, 20])
def test_the_page_post_runs_the_same_queries_for_1_and_20_members(big_pile, client, reviewer, n):
    client.force_login(reviewer)
    seen = version()
    with CaptureQueriesContext(connection) as queries:
        response = client.post(
            f"/pile/retire/?{ENTITY}",
            {"members": big_pile[:n], "reason": "Restates another lesson", "pile_version": seen},
            HTTP_HX_REQUEST="true",
        )
    assert response.status_code == 200
    assert retracted() == n and Decision.objects.count() == n
    # The session, the user and their permissions (one query: review.backends); the pile read for the form (host, lessons, verdicts,
    # drafts); the retire as in the service test (no second look-up of the entity; the actor's claim
    # released; the entity's counts refreshed); the fresh pile and its claim box. The test's transaction
    # never commits, so the recurrence refresh is not run here. The pile read (before and after) also
    # reads the entity's stored facts and the host's marks; the chain head is sealed (its row read
    # again). Left within budget (n = 20), the entity has no stored facts and the page works them out:
    # its lessons and marks read once more. Still a pile (n = 1), its members' stored text vectors are
    # read for the regrouping (one query). Neither count grows with n.
    assert len(queries) == {1: 36, 20: 36}[n], "\n".join(q["sql"] for q in queries)


def test_restoring_a_retired_member_writes_one_status_and_one_record(big_pile, reviewer):
    host = Host.objects.get(name="acme")
    lessons_retire(host=host, hashes=big_pile[:2], actor=reviewer, reason="Restates another lesson")
    lesson = Lesson.objects.get(hash=big_pile[1])
    decision = lesson_restore(lesson=lesson, actor=reviewer, reason="It was fine")
    assert (decision.seq, decision.action, decision.lesson_hash) == (3, "restore", big_pile[1])
    assert dict(Lesson.objects.filter(hash__in=big_pile[:2]).values_list("hash", "status")) == {
        big_pile[0]: "retracted",
        big_pile[1]: "live",
    }
    assert lesson.status == "live" and lesson.decided_at == decision.at
    assert decisions_verify() == (None, 3)
