"""consolidation_write: a reviewer's text becomes a pending draft; its limits, waivers and approval rules.
spec: docs/reviewing.md, "Writing a consolidation"; issue 22, Build 4."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lessons.core.written import TEXT_EMPTY, TEXT_TOO_LONG, WAIVER_MISSING
from tests.review.written.helpers import HOST, NS, SUBJECT, hashes, pile_records

AT = datetime(2026, 3, 1, 12, 0, 0, 123000, tzinfo=UTC)
KEEPS_ALL = "Wrap timestamp columns in `to_utc`, alias them with an `at` suffix; keep `amount_cents` as integer cents."


@pytest.fixture
def pile(ingest):
    records = pile_records()
    report = ingest(records)
    assert report.ok, report.error_lines()
    return hashes(records)


def _write(user, members, text=KEEPS_ALL, waivers=None, version=None, **kw):
    from lessons.models import Host
    from review.services.written import consolidation_write

    return consolidation_write(
        host=Host.objects.get(name=HOST),
        namespace=NS,
        subject=SUBJECT,
        text=text,
        supersedes=members,
        waivers=waivers or {},
        actor=user,
        pile_version=version,
        now=AT,
        **kw,
    )


def test_a_written_consolidation_is_a_pending_draft_by_its_writer_with_no_gate_run(pile, reviewer):
    from lessons.models import Draft, EntityCount

    draft = _write(
        reviewer,
        pile,
        text="Wrap timestamp columns in `to_utc`,\nalias them with an `at` suffix;\n"
        "keep `amount_cents` as integer cents.",
    )
    stored = Draft.objects.get(pk=draft.pk)
    assert (stored.status, stored.source, stored.drafted_by, stored.drafted_by_user) == (
        "pending",
        "reviewer",
        "user:rita",
        reviewer,
    )
    assert (stored.gate_ground, stored.gate_verify, stored.triggered_by) == ("not_run", "not_run", None)
    assert stored.text == KEEPS_ALL  # the lines joined by spaces, as every lesson text is normalized
    assert stored.supersedes == pile
    assert stored.waivers == {}
    assert stored.created_at == AT
    assert stored.ext_id.startswith("written-") and len(stored.ext_id) == len("written-") + 16
    assert EntityCount.objects.get(host__name=HOST, namespace=NS, subject=SUBJECT).pending_drafts == 1


def test_its_writer_may_not_approve_it_and_another_reviewer_may(pile, reviewer, second_reviewer):
    from lessons.models import Lesson
    from review.services.common import DecisionRefused
    from review.services.consolidation import DRAFT_BY_WRITER, draft_approve

    draft = _write(reviewer, pile)
    with pytest.raises(DecisionRefused) as refused:
        draft_approve(draft=draft, actor=reviewer, reason="I wrote it and like it.")
    assert str(refused.value) == DRAFT_BY_WRITER.format(user="rita", draft=draft.ext_id)
    assert Lesson.objects.filter(host__name=HOST, status="live").count() == 3

    decision = draft_approve(draft=draft, actor=second_reviewer, reason="Three rules, one line.")
    created = Lesson.objects.get(hash=decision.created_hash)
    assert (created.status, created.kind, created.origin, created.text) == (
        "live",
        "consolidation",
        "human",
        KEEPS_ALL,
    )
    assert created.consolidates == pile
    assert (
        sorted(Lesson.objects.filter(hash__in=pile).values_list("status", "superseded_by"))
        == [("superseded", created.hash)] * 3
    )
    assert decision.evidence["written"] == {"by": "user:rita", "text": KEEPS_ALL, "waivers": {}}
    assert decision.evidence["gates"] == {"ground": "not_run", "verify": "not_run"}


def test_a_rollback_makes_the_members_live_again(pile, reviewer, second_reviewer):
    from lessons.models import Lesson
    from review.services.consolidation import consolidation_rollback, draft_approve

    draft = _write(reviewer, pile)
    decision = draft_approve(draft=draft, actor=second_reviewer, reason="Three rules, one line.")
    consolidation_rollback(draft=draft, actor=reviewer, reason="Accuracy fell after it.")
    assert Lesson.objects.get(hash=decision.created_hash).status == "retracted"
    assert (
        list(Lesson.objects.filter(hash__in=pile).values_list("status", "superseded_by"))
        == [("live", None)] * 3
    )


def test_every_dropped_anchor_needs_a_waiver(pile, reviewer):
    from lessons.models import Draft
    from review.services.written import WrittenRefused

    text = "Wrap timestamp columns in `to_utc` before joining."
    with pytest.raises(WrittenRefused) as refused:
        _write(reviewer, pile, text=text, waivers={"amount_cents": "  "})
    assert refused.value.errors == [
        WAIVER_MISSING.format(anchor="`amount_cents`"),
        WAIVER_MISSING.format(anchor="`at`"),
    ]
    assert not Draft.objects.exists()

    draft = _write(
        reviewer,
        pile,
        text=text,
        waivers={
            "amount_cents": " Cents live in a macro now. ",
            "at": "Aliases are in the style guide.",
            "x": "?",
        },
    )
    assert Draft.objects.get(pk=draft.pk).waivers == {
        "`amount_cents`": "Cents live in a macro now.",
        "`at`": "Aliases are in the style guide.",
    }


def test_an_anchor_of_a_member_left_out_needs_no_waiver(pile, reviewer):
    draft = _write(
        reviewer, pile[:2], text="Wrap timestamp columns in `to_utc` and alias them with an `at` suffix."
    )
    assert draft.supersedes == pile[:2]


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (" \n\t ", TEXT_EMPTY),
        (
            "`to_utc` `at` `amount_cents` " + "x" * 1000,
            TEXT_TOO_LONG.format(n=1029, engine="interchange", max=1000),
        ),
    ],
)
def test_the_text_stays_within_the_lesson_limits(pile, reviewer, text, error):
    from lessons.models import Draft
    from review.services.written import WrittenRefused

    with pytest.raises(WrittenRefused) as refused:
        _write(reviewer, pile, text=text)
    assert refused.value.errors == [error]
    assert not Draft.objects.exists()


def test_a_text_of_1000_characters_is_within_the_limit(pile, reviewer):
    text = "`to_utc` `at` `amount_cents` " + "x" * 971
    assert len(_write(reviewer, pile, text=text).text) == 1000


def test_an_altimate_pile_takes_at_most_140_characters(ingest, reviewer):
    from review.services.written import WrittenRefused

    records = pile_records(store="team-playbook")
    assert ingest(records).ok
    text = KEEPS_ALL + " Check the staging models again before every merge."
    with pytest.raises(WrittenRefused) as refused:
        _write(reviewer, hashes(records), text=text)
    assert refused.value.errors == [TEXT_TOO_LONG.format(n=len(text), engine="altimate", max=140)]
    assert len(text) == 156
    assert len(_write(reviewer, hashes(records)).text) == len(KEEPS_ALL) == 105


def test_a_changed_pile_is_refused_and_nothing_written(pile, reviewer):
    from lessons.models import Draft
    from review.services.common import StalePile

    with pytest.raises(StalePile):
        _write(reviewer, pile, version="0000000000000000")
    assert not Draft.objects.exists()


def test_a_member_that_is_not_live_is_refused(pile, reviewer):
    from lessons.models import Host
    from review.services.common import DecisionRefused
    from review.services.decisions import lessons_retire
    from review.services.written import MEMBER_NOT_LIVE

    lessons_retire(
        host=Host.objects.get(name=HOST), hashes=[pile[0]], actor=reviewer, reason="Restates another."
    )
    with pytest.raises(DecisionRefused) as refused:
        _write(reviewer, pile)
    assert str(refused.value) == MEMBER_NOT_LIVE.format(short=pile[0][:8])


def test_the_same_consolidation_twice_is_refused_while_pending(pile, reviewer):
    from review.services.common import DecisionRefused
    from review.services.written import WRITTEN_PENDING

    first = _write(reviewer, pile)
    with pytest.raises(DecisionRefused) as refused:
        _write(reviewer, list(reversed(pile)))
    assert str(refused.value) == WRITTEN_PENDING.format(draft=first.ext_id)


def test_a_viewer_may_not_write_one(pile, viewer):
    from review.services.common import NotAllowed

    with pytest.raises(NotAllowed):
        _write(viewer, pile)


def test_the_piles_json_shows_a_written_draft_with_no_gate_run(pile, reviewer):
    from lessons.selectors.piles import piles_json

    draft = _write(reviewer, pile)
    (shown,) = piles_json(host=HOST)["piles"][0]["drafts"]
    assert (shown["id"], shown["status"], shown["drafted_by"], shown["gates"]) == (
        draft.ext_id,
        "pending",
        "user:rita",
        {"ground": "not_run", "verify": "not_run"},
    )
