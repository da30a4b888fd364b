"""Random sequences of writes keep the stored counts equal to a recount after every write (issue 10,
item 1): ingest of lessons, retire, restore, a draft ingested then approved or rejected, a rollback, a
budget change, a verdict, exposures and corrections that make a member recur. Real database, the real
services; after each step ``entity_counts_check`` must find nothing. spec: docs/piles-and-recurrence.md, rules 2-5.
"""

from __future__ import annotations

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lessons.core.text import lesson_hash
from lessons.models import Draft, EntityCount, Host, HostCount, Lesson
from lessons.services.entity_counts import entity_counts_check
from review.services.budget import host_set_budget
from review.services.common import DecisionRefused
from review.services.consolidation import consolidation_rollback, draft_approve, draft_reject
from review.services.decisions import lesson_restore, lessons_retire

HOST = "gen"
SUBJECTS = ("alpha", "beta")
WORDS = ("convert", "timestamp", "columns", "revenue", "staging", "models", "`to_utc`", "ledger")
texts = st.lists(st.sampled_from(WORDS), min_size=3, max_size=5).map(" ".join)
VERDICTS = ("held", "regressed", "drifted", "held_costlier", "unmeasured")
REASON = "Generated step"

steps = st.one_of(
    st.tuples(st.just("lessons"), st.sampled_from(SUBJECTS), st.lists(texts, min_size=1, max_size=4)),
    st.tuples(st.just("retire"), st.integers(0, 30)),
    st.tuples(st.just("restore"), st.integers(0, 30)),
    st.tuples(st.just("draft"), st.sampled_from(SUBJECTS), texts),
    st.tuples(st.just("approve"), st.integers(0, 5)),
    st.tuples(st.just("reject"), st.integers(0, 5)),
    st.tuples(st.just("rollback"), st.integers(0, 5)),
    st.tuples(st.just("budget"), st.integers(1, 4), st.booleans()),
    st.tuples(st.just("verdict"), st.integers(0, 30), st.sampled_from(VERDICTS)),
    st.tuples(st.just("recur"), st.integers(0, 30)),
)


def nth(queryset, index: int):
    rows = list(queryset.order_by("id"))
    return rows[index % len(rows)] if rows else None


def apply_step(step: tuple, *, ingest, reviewer, admin, clock: list[int]) -> None:
    """One write through the real writer; a refusal (stale draft, nothing to restore) writes nothing."""
    clock[0] += 1
    day = f"2026-03-{1 + clock[0] % 28:02d}T{clock[0] % 24:02d}:00:00Z"
    kind, *args = step
    host = Host.objects.get(name=HOST)
    try:
        if kind == "lessons":
            subject, bodies = args
            records = [
                {
                    "type": "lesson",
                    "host": HOST,
                    "namespace": "ns",
                    "subject": subject,
                    "text": t,
                    "created_at": day,
                }
                for t in bodies
            ]
            assert ingest(records).ok
        elif kind == "retire":
            lesson = nth(Lesson.objects.filter(status="live"), args[0])
            if lesson:
                lessons_retire(host=host, hashes=[lesson.hash], actor=reviewer, reason=REASON)
        elif kind == "restore":
            lesson = nth(Lesson.objects.filter(status="retracted"), args[0])
            if lesson:
                lesson_restore(lesson=lesson, actor=reviewer, reason=REASON)
        elif kind == "draft":
            # The draft comes with two members of its own (so every draft step drafts), in one batch.
            subject, text = args
            members = [
                {"type": "lesson", "host": HOST, "namespace": "ns", "subject": subject, "text": f"{text} {n}"}
                | {"created_at": day, "hash": lesson_hash("ns", subject, f"{text} {n}")}
                for n in (clock[0], clock[0] + 1000)
            ]
            record = {
                "type": "draft",
                "host": HOST,
                "id": f"d{clock[0]}",
                "namespace": "ns",
                "subject": subject,
                "text": f"{text} consolidated {clock[0]}",
                "supersedes": [m["hash"] for m in members],
                "drafted_by": "llm:test",
                "gates": {"ground": "pass", "verify": "pass"},
                "created_at": day,
            }
            assert ingest([*members, record]).ok
        elif kind in ("approve", "reject", "rollback"):
            status = "approved" if kind == "rollback" else "pending"
            draft = nth(Draft.objects.filter(status=status), args[0])
            if draft and kind == "approve":
                draft_approve(draft=draft, actor=reviewer, reason=REASON, confirm_dropped_anchors=True)
            elif draft and kind == "reject":
                draft_reject(draft=draft, actor=reviewer, reason=REASON)
            elif draft:
                consolidation_rollback(draft=draft, actor=reviewer, reason=REASON)
        elif kind == "budget":
            max_active, enabled = args
            host_set_budget(
                host=host, actor=admin, max_active=max_active, budget_enabled=enabled, reason=REASON
            )
        elif kind == "verdict":
            lesson = nth(Lesson.objects.all(), args[0])
            if lesson:
                verdict, measured = args[1], day
                record = {"type": "verdict", "host": HOST, "lesson": lesson.hash, "verdict": verdict}
                assert ingest([record | {"measured_at": measured}]).ok
        elif kind == "recur":
            lesson = nth(Lesson.objects.filter(status="live"), args[0])
            if lesson:
                records = []
                for session in (f"s{clock[0]}a", f"s{clock[0]}b"):
                    records.append(
                        {
                            "type": "exposure",
                            "host": HOST,
                            "session": session,
                            "lesson": lesson.hash,
                            "shown_at": day,
                        }
                    )
                    records.append(
                        {
                            "type": "correction",
                            "host": HOST,
                            "session": session,
                            "id": f"c-{session}",
                            "kind": "user_correction",
                            "text": lesson.text,
                            "turn_started_at": day.replace(":00:00Z", ":15:00Z"),
                            "corrected_at": day.replace(":00:00Z", ":30:00Z"),
                        }
                    )
                assert ingest(records).ok
    except DecisionRefused:
        pass


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(steps, min_size=3, max_size=14))
def test_every_write_keeps_the_counts_equal_to_a_recount(
    ingest, reviewer, admin_user, django_capture_on_commit_callbacks, sequence
):
    with transaction.atomic():
        assert ingest([{"type": "host", "name": HOST, "max_active": 2, "budget_enabled": True}]).ok
        clock = [0]
        for step in sequence:
            # The recurrence refresh a decision registers for after its commit runs at the block's end.
            with django_capture_on_commit_callbacks(execute=True):
                apply_step(step, ingest=ingest, reviewer=reviewer, admin=admin_user, clock=clock)
            assert entity_counts_check() == [], step
        transaction.set_rollback(True)


@pytest.mark.django_db
def test_the_generated_steps_reach_piles_groups_and_recurring_members(ingest, reviewer, admin_user):
    """The steps above do reach the counts they are to keep (an over-budget pile with its groups and a
    recurring member), so the property is not vacuous."""
    assert ingest([{"type": "host", "name": HOST, "max_active": 2, "budget_enabled": True}]).ok
    clock = [0]
    three = ("convert timestamp columns", "convert timestamp columns now", "revenue ledger staging")
    apply_step(
        ("lessons", "alpha", list(three)), ingest=ingest, reviewer=reviewer, admin=admin_user, clock=clock
    )
    apply_step(("recur", 0), ingest=ingest, reviewer=reviewer, admin=admin_user, clock=clock)
    row = EntityCount.objects.get(subject="alpha")
    assert (row.live, row.over_budget, row.overage, row.groups, row.recurring) == (3, True, 1, 2, 1)
    lines = row.document.splitlines()
    # One created_at for all three: rule 5 orders them by hash.
    assert lines == [HOST, "ns", "alpha", *sorted(three, key=lambda t: lesson_hash("ns", "alpha", t))]
    totals = HostCount.objects.get(host__name=HOST)
    assert (totals.live_lessons, totals.entity_count, totals.pile_count) == (3, 1, 1)
