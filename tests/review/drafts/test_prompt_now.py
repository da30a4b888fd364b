"""The draft page's "Now" prompt block says what the next decision would take out, conditionally: every
line in it is live (the newcomer run's item 5: once the adbuy draft was approved, its live consolidation
was shown struck through as "retracted by a roll back" before any roll back).

spec: docs/reviewing.md (the draft page); docs/decisions.md ("Actions").
"""

from __future__ import annotations

from django.urls import reverse

from lessons.models import Draft
from review.drafts.selectors import LEAVES_IF_APPROVED, LEAVES_IF_ROLLED_BACK
from review.services.consolidation import consolidation_rollback, draft_approve
from tests.fixtures.drafts import ADBUY, CONSOLIDATE
from tests.html import parse


def now_lines(client) -> list[tuple[str, str, str]]:
    """``(hash shown, leaving tag, li classes)`` of each line of the "Now" block."""
    html = client.get(reverse("review:draft", args=[ADBUY, CONSOLIDATE])).content.decode()
    assert "retracted by a roll back" not in html and "superseded by this draft" not in html
    block = parse(html).find(data_testid="prompt-now")
    rows = []
    for li in block.find("ol", "prompt-lines").find_all("li"):
        hash_shown, tag = li.find("span", "hash"), li.find(data_testid="leaving")
        rows.append(
            (hash_shown.text if hash_shown else "", tag.text if tag else "", li.attrs.get("class", ""))
        )
    return rows


def test_a_pending_drafts_members_are_live_now_and_superseded_if_approved(adbuy, reviewer, signed_in):
    rows = now_lines(signed_in(reviewer))
    assert len(rows) == 10
    assert {(tag, classes) for _hash, tag, classes in rows} == {(LEAVES_IF_APPROVED, "leaving")}


def test_an_approved_drafts_consolidation_is_live_now_and_retracted_if_rolled_back(
    adbuy, reviewer, second_reviewer, signed_in
):
    draft = Draft.objects.get(host__name=ADBUY, ext_id=CONSOLIDATE)
    draft_approve(draft=draft, actor=second_reviewer, reason="Ten rules restate four facts.")
    draft.refresh_from_db()
    consolidation = draft.created_lesson.hash
    assert now_lines(signed_in(reviewer)) == [(consolidation[:8], LEAVES_IF_ROLLED_BACK, "leaving")]


def test_after_the_roll_back_nothing_in_now_is_leaving(adbuy, reviewer, second_reviewer, signed_in):
    draft = Draft.objects.get(host__name=ADBUY, ext_id=CONSOLIDATE)
    draft_approve(draft=draft, actor=second_reviewer, reason="Ten rules restate four facts.")
    draft.refresh_from_db()
    consolidation_rollback(draft=draft, actor=reviewer, reason="Hosts want the separate lessons.")
    rows = now_lines(signed_in(reviewer))
    assert len(rows) == 10
    assert {(tag, classes) for _hash, tag, classes in rows} == {("", "")}
