"""Approving, rejecting and rolling back consolidation drafts. spec: decisions.md, "Actions";
the acceptance case is the adbuy-desk corpus (tests/data/adbuy-desk.jsonl)."""

from __future__ import annotations

import pytest

from lessons.core.text import lesson_hash
from lessons.models import Draft, Host, Lesson
from lessons.selectors.piles import entity_lessons, pile_version, piles_json
from review.models import Decision
from review.services.chain import decisions_verify
from review.services.common import NOT_ALLOWED_DECIDE, DecisionRefused, NotAllowed, StalePile
from review.services.consolidation import (
    CONSOLIDATION_EXISTS,
    DRAFT_BY_AUTHOR,
    DRAFT_BY_TRIGGER,
    DRAFT_DROPS_ANCHORS,
    DRAFT_GATE_FAILED,
    DRAFT_NOT_PENDING,
    DRAFT_STALE,
    REJECT_NOT_PENDING,
    ROLLBACK_NOT_APPROVED,
    ROLLBACK_NOT_LIVE,
    consolidation_rollback,
    draft_approve,
    draft_reject,
)
from review.services.decisions import lessons_retire
from tests.builders import numbered_lesson
from tests.fixtures.decisions import NOW, NS, SUBJECT

ADBUY_NS, ADBUY_SUBJECT = "desk.adbuy", "invoice_capture"
GATE_FAILED = "rec-adbuy-consolidate-0"
GOOD = "rec-adbuy-consolidate-1"


def draft(ext_id: str) -> Draft:
    return Draft.objects.get(ext_id=ext_id)


def adbuy() -> Host:
    return Host.objects.get(name="adbuy-desk")


def live_on(host: Host, namespace: str, subject: str) -> list[Lesson]:
    return [x for x in entity_lessons(host=host, namespace=namespace, subject=subject) if x.status == "live"]


def adbuy_pile(piles: dict) -> dict | None:
    found = [p for p in piles["piles"] if (p["namespace"], p["subject"]) == (ADBUY_NS, ADBUY_SUBJECT)]
    if not found:
        return None
    return {k: v for k, v in found[0].items() if k != "drafts"}


def refusal(call) -> str:
    with pytest.raises(DecisionRefused) as exc:
        call()
    return str(exc.value)


@pytest.fixture
def dana(user_factory):
    return user_factory("dana")


# --- the acceptance case on adbuy-desk ---------------------------------------------------------


def test_a_draft_that_failed_a_gate_cannot_be_approved(corpora, reviewer):
    message = refusal(lambda: draft_approve(draft=draft(GATE_FAILED), actor=reviewer, reason="Looks fine"))
    assert message == DRAFT_GATE_FAILED.format(draft=GATE_FAILED, gates="GROUND")
    assert draft(GATE_FAILED).status == "pending"
    assert Decision.objects.count() == 0


def test_the_user_who_triggered_the_draft_may_not_approve_it(corpora, dana):
    message = refusal(lambda: draft_approve(draft=draft(GOOD), actor=dana, reason="Mine, and good"))
    assert message == DRAFT_BY_TRIGGER.format(user="dana", draft=GOOD)
    assert message == "dana triggered draft rec-adbuy-consolidate-1, so another reviewer must approve it."


def test_a_viewer_may_not_approve(corpora, viewer):
    with pytest.raises(NotAllowed) as exc:
        draft_approve(draft=draft(GOOD), actor=viewer, reason="ok")
    assert str(exc.value) == NOT_ALLOWED_DECIDE.format(user="vera")


def test_approval_replaces_the_ten_members_with_one_consolidation(corpora, reviewer):
    members = list(draft(GOOD).supersedes)
    decision = draft_approve(draft=draft(GOOD), actor=reviewer, reason="One rule for five fields", now=NOW)
    text = draft(GOOD).text
    new_hash = lesson_hash(ADBUY_NS, ADBUY_SUBJECT, text)
    (live,) = live_on(adbuy(), ADBUY_NS, ADBUY_SUBJECT)
    assert (live.hash, live.kind, live.origin, live.text, live.consolidates) == (
        new_hash,
        "consolidation",
        "llm",
        text,
        members,
    )
    assert live.created_at == decision.at
    assert adbuy_pile(piles_json(host="adbuy-desk")) is None
    superseded = Lesson.objects.filter(host=adbuy(), hash__in=members)
    assert sorted(superseded.values_list("status", "superseded_by")) == [("superseded", new_hash)] * 10
    approved = draft(GOOD)
    assert (approved.status, approved.created_lesson_id, approved.decided_at) == (
        "approved",
        live.pk,
        decision.at,
    )


def test_the_approval_record(corpora, reviewer):
    decision = draft_approve(
        draft=draft(GOOD), actor=reviewer, reason="One rule", reason_code="duplicate", now=NOW
    )
    assert (decision.seq, decision.action, decision.actor, decision.host) == (
        1,
        "approve_consolidation",
        "rita",
        "adbuy-desk",
    )
    assert (
        decision.namespace,
        decision.subject,
        decision.lesson_hash,
        decision.lesson_id,
        decision.store,
    ) == (
        ADBUY_NS,
        ADBUY_SUBJECT,
        None,
        None,
        None,
    )
    assert (decision.draft_id, decision.created_hash) == (
        GOOD,
        lesson_hash(ADBUY_NS, ADBUY_SUBJECT, draft(GOOD).text),
    )
    evidence = decision.evidence
    assert (evidence["count"], evidence["max_active"]) == (10, 8)
    assert evidence["supersedes"] == draft(GOOD).supersedes
    assert evidence["gates"] == {"ground": "pass", "verify": "pass"}
    assert evidence["dropped_anchors"] == []
    assert [m["hash"] for m in evidence["members"]] == draft(GOOD).supersedes
    assert evidence["members"][0]["verdict"] == "held"
    assert decisions_verify() == (None, 1)


def test_rollback_restores_the_pile_exactly(corpora, reviewer, second_reviewer):
    before = adbuy_pile(piles_json(host="adbuy-desk"))
    assert before is not None and before["count"] == 10
    approval = draft_approve(draft=draft(GOOD), actor=reviewer, reason="One rule", now=NOW)
    rollback = consolidation_rollback(
        draft=draft(GOOD), actor=second_reviewer, reason="Lost the zero-padding rule"
    )
    assert adbuy_pile(piles_json(host="adbuy-desk")) == before
    members = draft(GOOD).supersedes
    assert (
        sorted(Lesson.objects.filter(hash__in=members).values_list("status", "superseded_by"))
        == [("live", None)] * 10
    )
    consolidation = Lesson.objects.get(hash=approval.created_hash)
    assert consolidation.status == "retracted"
    assert draft(GOOD).status == "approved"
    assert (
        rollback.seq,
        rollback.action,
        rollback.lesson_hash,
        rollback.draft_id,
        rollback.created_hash,
    ) == (
        2,
        "rollback_consolidation",
        approval.created_hash,
        GOOD,
        None,
    )
    assert rollback.evidence["count"] == 1


def test_a_draft_approved_already_is_not_approved_again(corpora, reviewer, second_reviewer):
    draft_approve(draft=draft(GOOD), actor=reviewer, reason="ok")
    message = refusal(lambda: draft_approve(draft=draft(GOOD), actor=second_reviewer, reason="ok"))
    assert message == DRAFT_NOT_PENDING.format(draft=GOOD, status="approved")


def test_a_rolled_back_consolidation_cannot_be_rolled_back_again(corpora, reviewer):
    approval = draft_approve(draft=draft(GOOD), actor=reviewer, reason="ok")
    consolidation_rollback(draft=draft(GOOD), actor=reviewer, reason="undo")
    message = refusal(lambda: consolidation_rollback(draft=draft(GOOD), actor=reviewer, reason="undo"))
    assert message == ROLLBACK_NOT_LIVE.format(
        short=approval.created_hash[:8], draft=GOOD, status="retracted"
    )


def test_a_pending_draft_cannot_be_rolled_back(corpora, reviewer):
    message = refusal(lambda: consolidation_rollback(draft=draft(GOOD), actor=reviewer, reason="undo"))
    assert message == ROLLBACK_NOT_APPROVED.format(draft=GOOD, status="pending")


def test_a_stale_draft_is_refused_for_approval_but_can_be_rejected(corpora, reviewer):
    member = draft(GOOD).supersedes[3]
    lessons_retire(host=adbuy(), hashes=[member], actor=reviewer, reason="Covered by another lesson")
    message = refusal(lambda: draft_approve(draft=draft(GOOD), actor=reviewer, reason="ok"))
    assert message == DRAFT_STALE.format(draft=GOOD, lessons=f"the lesson {member[:8]}…", verb="is")
    decision = draft_reject(draft=draft(GOOD), actor=reviewer, reason="Stale now", now=NOW)
    assert draft(GOOD).status == "rejected"
    assert (decision.action, decision.draft_id, decision.lesson_hash, decision.created_hash) == (
        "reject_consolidation",
        GOOD,
        None,
        None,
    )


def test_a_draft_that_failed_a_gate_can_be_rejected(corpora, reviewer):
    draft_reject(draft=draft(GATE_FAILED), actor=reviewer, reason="Invents a contract number")
    assert draft(GATE_FAILED).status == "rejected"


def test_a_rejected_draft_is_not_rejected_again_nor_approved(corpora, reviewer, second_reviewer):
    draft_reject(draft=draft(GOOD), actor=reviewer, reason="no")
    assert refusal(
        lambda: draft_reject(draft=draft(GOOD), actor=reviewer, reason="no")
    ) == REJECT_NOT_PENDING.format(draft=GOOD, status="rejected")
    assert refusal(lambda: draft_approve(draft=draft(GOOD), actor=second_reviewer, reason="ok")) == (
        DRAFT_NOT_PENDING.format(draft=GOOD, status="rejected")
    )


def test_approval_with_a_stale_pile_version_is_refused(corpora, reviewer, second_reviewer):
    seen = pile_version(list(entity_lessons(host=adbuy(), namespace=ADBUY_NS, subject=ADBUY_SUBJECT)))
    lessons_retire(host=adbuy(), hashes=[draft(GOOD).supersedes[0]], actor=second_reviewer, reason="dup")
    with pytest.raises(StalePile):
        draft_approve(draft=draft(GOOD), actor=reviewer, reason="ok", pile_version=seen)
    assert draft(GOOD).status == "pending"


def test_approval_with_the_current_pile_version_succeeds(corpora, reviewer):
    seen = pile_version(list(entity_lessons(host=adbuy(), namespace=ADBUY_NS, subject=ADBUY_SUBJECT)))
    assert draft_approve(draft=draft(GOOD), actor=reviewer, reason="ok", pile_version=seen).seq == 1


def test_a_consolidation_whose_lesson_already_exists_is_refused(corpora, reviewer, ingest):
    text = draft(GOOD).text
    existing = numbered_lesson(0, host="adbuy-desk", namespace=ADBUY_NS, subject=ADBUY_SUBJECT, text=text)
    ingest([existing])
    message = refusal(lambda: draft_approve(draft=draft(GOOD), actor=reviewer, reason="ok"))
    assert message == CONSOLIDATION_EXISTS.format(short=existing["hash"][:8], status="live")
    assert draft(GOOD).status == "pending"


# --- small drafts on the test pile ---------------------------------------------------------------

ANCHORED = "Convert `*_at` timestamp columns with `to_utc` in staging models."


def small_draft(
    ingest, *, text: str, supersedes: list[str], drafted_by="llm:qwen3-30b", triggered_by=None, **kw
):
    record = {
        "type": "draft",
        "host": "acme",
        "id": "d-1",
        "namespace": NS,
        "subject": SUBJECT,
        "text": text,
        "supersedes": supersedes,
        "drafted_by": drafted_by,
        "gates": {"ground": "pass", "verify": "pass"},
        "created_at": "2026-02-01T00:00:00Z",
        **kw,
    }
    if triggered_by:
        record["triggered_by"] = triggered_by
    report = ingest([record])
    assert report.ok, report.error_lines()
    return Draft.objects.get(ext_id="d-1")


@pytest.fixture
def anchored_pile(pile, ingest):
    """The test pile plus a held lesson with the full anchor ``to_utc``; returns all six hashes."""
    extra = numbered_lesson(7, namespace=NS, text=ANCHORED)
    ingest(
        [
            extra,
            {
                "type": "verdict",
                "host": "acme",
                "lesson": extra["hash"],
                "verdict": "held",
                "measured_at": "2026-01-25T00:00:00Z",
            },
        ]
    )
    return [*pile, extra["hash"]]


def test_dropping_an_anchor_of_a_held_member_needs_confirmation(anchored_pile, ingest, reviewer):
    d = small_draft(
        ingest, text="Convert timestamp columns in staging models to UTC.", supersedes=anchored_pile[4:]
    )
    message = refusal(lambda: draft_approve(draft=d, actor=reviewer, reason="ok"))
    assert message == DRAFT_DROPS_ANCHORS.format(anchors="`to_utc`")
    assert message == (
        "This draft drops `to_utc` from lessons that held at the Verify gate. "
        "Confirm the dropped anchors to approve it anyway."
    )
    decision = draft_approve(draft=d, actor=reviewer, reason="UTC says it", confirm_dropped_anchors=True)
    assert decision.evidence["dropped_anchors"] == ["to_utc"]


def test_keeping_the_anchors_needs_no_confirmation(anchored_pile, ingest, reviewer):
    d = small_draft(
        ingest,
        text="Convert timestamp columns with `to_utc` in staging models.",
        supersedes=anchored_pile[4:],
    )
    assert draft_approve(draft=d, actor=reviewer, reason="ok").evidence["dropped_anchors"] == []


def test_a_bare_username_in_drafted_by_may_not_approve(pile, ingest, reviewer):
    d = small_draft(ingest, text="Merged rule.", supersedes=pile[:2], drafted_by="rita")
    assert refusal(lambda: draft_approve(draft=d, actor=reviewer, reason="ok")) == DRAFT_BY_AUTHOR.format(
        user="rita", draft="d-1"
    )


def test_the_author_named_by_user_label_may_not_approve(pile, ingest, second_reviewer):
    d = small_draft(ingest, text="Merged rule.", supersedes=pile[:2], drafted_by="user:rob")
    with pytest.raises(DecisionRefused):
        draft_approve(draft=d, actor=second_reviewer, reason="ok")


def test_a_human_drafted_consolidation_has_origin_human(pile, ingest, reviewer):
    d = small_draft(
        ingest, text="Merged rule.", supersedes=pile[:2], drafted_by="user:rob", triggered_by="user:rob"
    )
    decision = draft_approve(draft=d, actor=reviewer, reason="ok")
    assert Lesson.objects.get(hash=decision.created_hash).origin == "human"


def test_a_draft_failing_both_gates_names_both(pile, ingest, reviewer):
    d = small_draft(
        ingest, text="Merged rule.", supersedes=pile[:2], gates={"ground": "fail", "verify": "fail"}
    )
    assert refusal(lambda: draft_approve(draft=d, actor=reviewer, reason="ok")) == DRAFT_GATE_FAILED.format(
        draft="d-1", gates="GROUND and VERIFY"
    )


def test_an_import_after_approval_cannot_change_a_member_and_rollback_revives_it(pile, ingest, reviewer):
    d = small_draft(ingest, text="Merged rule.", supersedes=pile[:2])
    draft_approve(draft=d, actor=reviewer, reason="ok", now=NOW)
    report = ingest(
        [{**numbered_lesson(0, namespace=NS), "status": "retracted", "created_at": "2026-04-01T00:00:00Z"}]
    )
    assert report.counts["lesson"]["held"] == 1
    consolidation_rollback(draft=Draft.objects.get(pk=d.pk), actor=reviewer, reason="undo")
    assert list(
        Lesson.objects.filter(hash__in=pile[:2]).order_by("created_at").values_list("status", flat=True)
    ) == ["live", "live"]


def test_the_callers_draft_instance_shows_the_new_status(pile, ingest, reviewer):
    d = small_draft(ingest, text="Merged rule.", supersedes=pile[:2])
    draft_approve(draft=d, actor=reviewer, reason="ok")
    assert (d.status, d.created_lesson_id is not None) == ("approved", True)
