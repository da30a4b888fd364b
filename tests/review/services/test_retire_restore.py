"""Retire and restore: preconditions, refusals, records, and imports that come after. spec: decisions.md."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lessons.models import Host, Lesson
from lessons.selectors.piles import entity_lessons, pile_version
from review.models import Decision
from review.services.common import (
    NOT_ALLOWED_DECIDE,
    NOT_ALLOWED_INACTIVE,
    REASON_CODE_UNKNOWN,
    REASON_HAS_NUL,
    REASON_REQUIRED,
    REASON_TOO_LONG,
    STALE_PILE,
    DecisionRefused,
    NotAllowed,
    StalePile,
)
from review.services.decisions import (
    LESSON_NOT_LIVE,
    LESSON_UNKNOWN,
    LESSONS_NOT_ONE_ENTITY,
    RESTORE_NOT_BY_RETIRE,
    RESTORE_NOT_RETRACTED,
    RETIRE_NOTHING,
    lesson_restore,
    lessons_retire,
)
from tests.builders import numbered_lesson
from tests.fixtures.decisions import NOW, NS

NOW_MS = datetime(2026, 3, 1, 12, 0, 0, 123000, tzinfo=UTC)


def acme() -> Host:
    return Host.objects.get(name="acme")


def statuses(hashes: list[str]) -> list[str]:
    by_hash = dict(Lesson.objects.filter(hash__in=hashes).values_list("hash", "status"))
    return [by_hash[h] for h in hashes]


def current_version() -> str:
    return pile_version(list(entity_lessons(host=acme(), namespace="desk.test", subject="invoice_capture")))


def retire(hashes, actor, **kwargs):
    kwargs.setdefault("reason", "Restates another lesson")
    return lessons_retire(host=acme(), hashes=hashes, actor=actor, now=NOW, **kwargs)


def refusal(call) -> str:
    with pytest.raises(DecisionRefused) as exc:
        call()
    return str(exc.value)


def test_retiring_two_lessons_writes_two_records_sharing_one_batch(pile, reviewer):
    decisions = retire(pile[:2], reviewer)
    assert [d.seq for d in decisions] == [1, 2]
    assert [d.lesson_hash for d in decisions] == pile[:2]
    assert decisions[0].batch == decisions[1].batch
    assert len(decisions[0].batch) == 32
    assert statuses(pile) == ["retracted", "retracted", "live", "live", "live"]


def test_a_later_submission_gets_another_batch(pile, reviewer):
    first = retire(pile[:1], reviewer)
    second = retire(pile[1:2], reviewer)
    assert first[0].batch != second[0].batch


def test_retire_sets_decided_at_to_the_decision_time_in_milliseconds(pile, reviewer):
    retire(pile[:1], reviewer)
    lesson = Lesson.objects.get(hash=pile[0])
    assert lesson.decided_at == NOW_MS
    assert Decision.objects.get().at == NOW_MS


def test_records_follow_pile_order_whatever_the_order_given(pile, reviewer):
    decisions = retire([pile[3], pile[1]], reviewer)
    assert [d.lesson_hash for d in decisions] == [pile[1], pile[3]]


def test_retire_evidence_is_what_the_reviewer_saw(pile, reviewer):
    first, second = retire(pile[:2], reviewer)
    zero = dict.fromkeys(
        (
            "sessions_shown",
            "recurred",
            "recurred_sessions",
            "during",
            "unknown",
            "ambiguous",
            "earlier_version",
        ),
        0,
    )
    assert first.evidence == {"count": 5, "max_active": 3, "verdict": "held", "recurrence": zero}
    assert second.evidence == {
        "count": 5,
        "max_active": 3,
        "verdict": "not applied by the loop",
        "recurrence": zero,
    }


def test_the_reason_is_trimmed_and_the_code_recorded(pile, reviewer):
    (decision,) = retire(pile[:1], reviewer, reason="  duplicate of #2 \n", reason_code="duplicate")
    assert (decision.reason, decision.reason_code) == ("duplicate of #2", "duplicate")


@pytest.mark.parametrize("reason", ["", "   ", "\n\t", None])
def test_an_empty_reason_is_refused(pile, reviewer, reason):
    assert refusal(lambda: retire(pile[:1], reviewer, reason=reason)) == REASON_REQUIRED
    assert Decision.objects.count() == 0


def test_a_reason_of_501_characters_is_refused(pile, reviewer):
    message = refusal(lambda: retire(pile[:1], reviewer, reason="x" * 501))
    assert message == REASON_TOO_LONG.format(length=501)
    assert message == "The reason is 501 characters long; at most 500 are allowed."


def test_a_reason_of_500_characters_after_trimming_is_accepted(pile, reviewer):
    (decision,) = retire(pile[:1], reviewer, reason="  " + "x" * 500 + "  ")
    assert len(decision.reason) == 500


def test_a_reason_with_a_nul_character_is_refused(pile, reviewer):
    assert refusal(lambda: retire(pile[:1], reviewer, reason="a\x00b")) == REASON_HAS_NUL


def test_an_unknown_reason_code_is_refused(pile, reviewer):
    assert refusal(lambda: retire(pile[:1], reviewer, reason_code="boring")) == REASON_CODE_UNKNOWN.format(
        code="boring",
        codes="duplicate, restates_another, regressed, drifted, recurring, obsolete, too_specific, other",
    )


def test_a_viewer_may_not_retire(pile, viewer):
    with pytest.raises(NotAllowed) as exc:
        retire(pile[:1], viewer)
    assert str(exc.value) == NOT_ALLOWED_DECIDE.format(user="vera")
    assert str(exc.value) == "vera may not decide on lessons: that needs the reviewer role."
    assert statuses(pile[:1]) == ["live"]


def test_an_inactive_reviewer_may_not_retire(pile, user_factory):
    sam = user_factory("sam", is_active=False)
    with pytest.raises(NotAllowed) as exc:
        retire(pile[:1], sam)
    assert str(exc.value) == NOT_ALLOWED_INACTIVE.format(user="sam")


def test_retiring_nothing_is_refused(pile, reviewer):
    assert refusal(lambda: retire([], reviewer)) == RETIRE_NOTHING


def test_an_unknown_hash_is_refused(pile, reviewer):
    missing = "f" * 64
    assert refusal(lambda: retire([pile[0], missing], reviewer)) == LESSON_UNKNOWN.format(
        hash=missing, host="acme"
    )
    assert statuses(pile[:1]) == ["live"]


def test_lessons_of_two_entities_are_refused_together(pile, reviewer, ingest):
    other = numbered_lesson(9, namespace=NS, subject="flight_dates")
    ingest([other])
    message = refusal(lambda: retire([pile[0], other["hash"]], reviewer))
    assert message == LESSONS_NOT_ONE_ENTITY.format(
        entities="desk.test/flight_dates, desk.test/invoice_capture"
    )


def test_a_lesson_not_live_is_refused_and_nothing_of_the_batch_is_written(pile, reviewer):
    retire(pile[1:2], reviewer)
    message = refusal(lambda: retire(pile[:2], reviewer))
    assert message == LESSON_NOT_LIVE.format(short=pile[1][:8], status="retracted")
    assert statuses(pile[:2]) == ["live", "retracted"]
    assert Decision.objects.count() == 1


def test_a_stale_pile_version_is_refused_with_the_fresh_version(pile, reviewer, second_reviewer):
    seen = current_version()
    retire(pile[:1], second_reviewer, pile_version=seen)
    with pytest.raises(StalePile) as exc:
        retire(pile[1:2], reviewer, pile_version=seen)
    assert str(exc.value) == STALE_PILE
    assert exc.value.fresh_version == current_version() != seen
    assert statuses(pile[:2]) == ["retracted", "live"]
    assert Decision.objects.count() == 1


def test_the_current_pile_version_is_accepted(pile, reviewer):
    (decision,) = retire(pile[:1], reviewer, pile_version=current_version())
    assert decision.seq == 1


def test_restore_makes_a_retired_lesson_live_again(pile, reviewer):
    retire(pile[:1], reviewer)
    later = datetime(2026, 3, 2, tzinfo=UTC)
    decision = lesson_restore(
        lesson=Lesson.objects.get(hash=pile[0]), actor=reviewer, reason="Wrong call", now=later
    )
    lesson = Lesson.objects.get(hash=pile[0])
    assert (lesson.status, lesson.decided_at) == ("live", later)
    assert (decision.seq, decision.action, decision.lesson_hash) == (2, "restore", pile[0])
    assert decision.evidence["count"] == 4


def test_restoring_a_live_lesson_is_refused(pile, reviewer):
    message = refusal(
        lambda: lesson_restore(lesson=Lesson.objects.get(hash=pile[0]), actor=reviewer, reason="x")
    )
    assert message == RESTORE_NOT_RETRACTED.format(short=pile[0][:8], status="live")


def test_restoring_a_lesson_the_source_retracted_is_refused(pile, reviewer, ingest):
    ingest([{**numbered_lesson(4, namespace=NS), "status": "retracted"}])
    assert statuses(pile[4:]) == ["retracted"]
    message = refusal(
        lambda: lesson_restore(lesson=Lesson.objects.get(hash=pile[4]), actor=reviewer, reason="x")
    )
    assert message == RESTORE_NOT_BY_RETIRE.format(short=pile[4][:8])


def test_restoring_with_a_stale_version_is_refused(pile, reviewer):
    retire(pile[:1], reviewer)
    seen = current_version()
    retire(pile[1:2], reviewer)
    with pytest.raises(StalePile):
        lesson_restore(lesson=Lesson.objects.get(hash=pile[0]), actor=reviewer, reason="x", pile_version=seen)
    assert statuses(pile[:1]) == ["retracted"]


def test_a_viewer_may_not_restore(pile, reviewer, viewer):
    retire(pile[:1], reviewer)
    with pytest.raises(NotAllowed):
        lesson_restore(lesson=Lesson.objects.get(hash=pile[0]), actor=viewer, reason="x")


def test_an_import_after_a_retire_does_not_make_the_lesson_live_again(pile, reviewer, ingest):
    retire(pile[:1], reviewer)
    report = ingest([{**numbered_lesson(0, namespace=NS), "status": "live"}])
    assert report.counts["lesson"]["held"] == 1
    assert statuses(pile[:1]) == ["retracted"]


def test_an_import_after_a_restore_does_not_retract_the_lesson_again(pile, reviewer, ingest):
    retire(pile[:1], reviewer)
    lesson_restore(lesson=Lesson.objects.get(hash=pile[0]), actor=reviewer, reason="x", now=NOW)
    report = ingest([{**numbered_lesson(0, namespace=NS), "status": "retracted"}])
    assert report.counts["lesson"]["held"] == 1
    assert statuses(pile[:1]) == ["live"]
