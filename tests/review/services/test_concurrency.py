"""Several reviewers acting on one pile at the same moment: the first commit wins, the others are
refused as stale, no decision is lost and the chain stays intact. spec: decisions.md, "Stale views are
refused, not merged" ("Two reviewers acting at once on the same pile: exactly one succeeds").

Each thread has its own database connection (closed when the thread ends). On PostgreSQL the rows
are locked with SELECT … FOR UPDATE; on SQLite the IMMEDIATE transaction mode queues the writers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest
from django.db import connection, connections

from lessons.models import Draft, Host, Lesson
from lessons.selectors.piles import entity_lessons, pile_version
from review.models import Decision
from review.services.chain import decisions_verify
from review.services.common import StalePile
from review.services.consolidation import draft_approve
from review.services.decisions import lessons_retire
from tests.scenarios import run_sqlite_scenario

postgres_only = pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")
GOOD = "rec-adbuy-consolidate-1"
ADBUY = ("desk.adbuy", "invoice_capture")


def race(actions: list[Callable[[], object]]) -> list[str]:
    """Run the actions at once, one thread each; ``"ok"``, ``"stale"`` or the unexpected error per action."""
    barrier = threading.Barrier(len(actions))
    results: list[str] = [""] * len(actions)

    def worker(index: int, action: Callable[[], object]) -> None:
        try:
            barrier.wait(timeout=10)
            action()
            results[index] = "ok"
        except StalePile:
            results[index] = "stale"
        except Exception as exc:  # noqa: BLE001 - reported, and the test fails on it
            results[index] = f"{type(exc).__name__}: {exc}"
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i, a)) for i, a in enumerate(actions)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return results


def version(host: Host, namespace: str, subject: str) -> str:
    return pile_version(list(entity_lessons(host=host, namespace=namespace, subject=subject)))


def live_count(host: Host, namespace: str, subject: str) -> int:
    return Lesson.objects.filter(host=host, namespace=namespace, subject=subject, status="live").count()


def retire_action(host, hashes, actor, seen):
    return lambda: lessons_retire(host=host, hashes=hashes, actor=actor, reason="dup", pile_version=seen)


def approve_action(actor, seen):
    return lambda: draft_approve(
        draft=Draft.objects.get(ext_id=GOOD), actor=actor, reason="one", pile_version=seen
    )


def three_retirements(pile, reviewer, second_reviewer, admin_user) -> list[str]:
    host = Host.objects.get(name="acme")
    seen = version(host, "desk.test", "invoice_capture")
    return race(
        [
            retire_action(host, [pile[0]], reviewer, seen),
            retire_action(host, [pile[1]], second_reviewer, seen),
            retire_action(host, [pile[2], pile[3]], admin_user, seen),
        ]
    )


def approval_against_retirement(reviewer, second_reviewer) -> list[str]:
    host = Host.objects.get(name="adbuy-desk")
    seen = version(host, *ADBUY)
    member = Draft.objects.get(ext_id=GOOD).supersedes[3]
    return race([approve_action(reviewer, seen), retire_action(host, [member], second_reviewer, seen)])


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_three_reviewers_retiring_from_one_pile_at_once_exactly_one_wins(
    pile, reviewer, second_reviewer, admin_user
):
    results = three_retirements(pile, reviewer, second_reviewer, admin_user)
    assert sorted(results) == ["ok", "stale", "stale"]
    winner = results.index("ok")
    retired = [[pile[0]], [pile[1]], [pile[2], pile[3]]][winner]
    assert sorted(Lesson.objects.filter(status="retracted").values_list("hash", flat=True)) == sorted(retired)
    assert Decision.objects.count() == len(retired)
    assert live_count(Host.objects.get(name="acme"), "desk.test", "invoice_capture") == 5 - len(retired)
    assert decisions_verify() == (None, len(retired))


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_approving_a_draft_while_another_reviewer_retires_a_member_exactly_one_wins(
    corpora, reviewer, second_reviewer
):
    results = approval_against_retirement(reviewer, second_reviewer)
    assert sorted(results) == ["ok", "stale"]
    host = Host.objects.get(name="adbuy-desk")
    (decision,) = Decision.objects.all()
    if results[0] == "ok":
        assert decision.action == "approve_consolidation"
        assert live_count(host, *ADBUY) == 1
        assert Draft.objects.get(ext_id=GOOD).status == "approved"
    else:
        assert decision.action == "retire"
        assert live_count(host, *ADBUY) == 9
        assert Draft.objects.get(ext_id=GOOD).status == "pending"
    assert decisions_verify() == (None, 1)


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_four_reviewers_retiring_and_approving_on_one_pile_at_once_exactly_one_wins(
    corpora, reviewer, second_reviewer, admin_user, user_factory
):
    ray = user_factory("ray")
    host = Host.objects.get(name="adbuy-desk")
    seen = version(host, *ADBUY)
    members = Draft.objects.get(ext_id=GOOD).supersedes
    results = race(
        [
            retire_action(host, [members[0]], reviewer, seen),
            retire_action(host, [members[1]], second_reviewer, seen),
            approve_action(ray, seen),
            retire_action(host, [members[3]], admin_user, seen),
        ]
    )
    assert sorted(results) == ["ok", "stale", "stale", "stale"]
    (decision,) = Decision.objects.all()
    expected_action = "approve_consolidation" if results[2] == "ok" else "retire"
    assert decision.action == expected_action
    assert live_count(host, *ADBUY) == (1 if results[2] == "ok" else 9)
    assert decisions_verify() == (None, 1)


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_many_decisions_on_different_piles_at_once_all_land_in_one_chain(ingest, reviewer, second_reviewer):
    from tests.builders import numbered_lesson
    from tests.fixtures.decisions import NS

    subjects = [f"subject_{n}" for n in range(6)]
    ingest([numbered_lesson(i, namespace=NS, subject=s) for s in subjects for i in range(2)])
    host = Host.objects.get(name="acme")
    actions = []
    for n, subject in enumerate(subjects):
        lesson = Lesson.objects.filter(subject=subject).order_by("created_at").first()
        seen = version(host, "desk.test", subject)
        actions.append(retire_action(host, [lesson.hash], reviewer if n % 2 else second_reviewer, seen))
    assert race(actions) == ["ok"] * 6
    assert list(Decision.objects.order_by("seq").values_list("seq", flat=True)) == [1, 2, 3, 4, 5, 6]
    assert decisions_verify() == (None, 6)


def test_on_sqlite_concurrent_decisions_queue_without_database_errors(tmp_path):
    result = run_sqlite_scenario("tests.review.services.sqlite_race", database=tmp_path / "race.sqlite3")
    assert sorted(result["retirements"]) == ["ok", "stale", "stale"], result
    assert sorted(result["approval"]) == ["ok", "stale"], result
    # Five lessons, one retired by the first race; then either the approval (members 4 and 5 become
    # one consolidation) or the retirement of member 5 won: three live either way, two decisions.
    assert result["live"] == 3
    assert result["verify"] == [None, 2]
