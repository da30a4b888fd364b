"""Acceptance on tests/data/adbuy-desk.jsonl, through the pages (client posts): the gate-failed draft,
the draft its trigger may not approve, an approval by another reviewer, and its roll back.

spec: decisions.md ("Actions"); interchange.md ("draft"); docs/piles-and-recurrence.md ("JSON output"); docs/piles-and-recurrence.md ("Tokens").
"""

from __future__ import annotations

import copy

from django.urls import reverse

from lessons.models import Draft, Lesson
from lessons.selectors.piles import piles_json
from review.models import Decision
from review.services.consolidation import DRAFT_BY_TRIGGER, DRAFT_GATE_FAILED
from tests.fixtures.drafts import ADBUY, CONSOLIDATE, GATE_FAILED, NS, SUBJECT, TARGET, entity_version
from tests.review.drafts.helpers import member_summary, member_words

PILE_URL = "/pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture"
PILE_LINK = f'href="{PILE_URL.replace("&", "&amp;")}"'  # how the queue links the pile
# The members of rec-adbuy-consolidate-1, oldest first (docs/piles-and-recurrence.md rule 5).
MEMBERS = [
    "36727f000a42d1e7a5433589cd409dd00beee693f1e5ed207234dfaa30717f05",
    "cc844636d4273cf9e98d465b13852a8b56a4652619ad97a5752531672a8ce79f",
    "531d6e53751e04ee0685bb20f474b91545f844bf3f95b8ed934dc9601a59fc67",
    "ccefde1b5584cd61cb3cd98435f04b1cb087c780580a1bb29febb9cfbbc297fa",
    "e21f022e4d002205a317419312f6a43aa3cb392b89d364183654799e6d367d44",
    "e0b6ccc348a5689fa6ecec10abc36cb08d16e742253179efdaef4926a8e97fa3",
    "353ed7f4ec2dfe13b68ccb5548c9b5fb3d7a6c02380b46dfcb5b62fc0e0d323f",
    "ba3f6459e13330823bee5675c28bea68f5e4d1af1f5be99014d0491e2d01c333",
    "0d3dae1ce842f7486d30304864f7341f3089cee70550736e6062762a087ce2d9",
    "3d46cb353b8bfb67d8465bd5f0b468a18164b53ad8d7ea74c359aa1065bf11e4",
]


def page(draft_id: str) -> str:
    return reverse("review:draft", args=[ADBUY, draft_id])


def approve(client, draft_id: str, reason: str = "Ten rules say one thing; keep one."):
    data = {"approve-reason": reason, "approve-pile_version": entity_version(ADBUY)}
    return client.post(reverse("review:draft_approve", args=[ADBUY, draft_id]), data)


def rollback(client, draft_id: str, reason: str = "Field accuracy dropped after the merge."):
    data = {"rollback-reason": reason, "rollback-pile_version": entity_version(ADBUY)}
    return client.post(reverse("review:draft_rollback", args=[ADBUY, draft_id]), data)


def live_on_entity() -> list[Lesson]:
    return list(
        Lesson.objects.filter(host__name=ADBUY, namespace=NS, subject=SUBJECT, status="live").order_by(
            "created_at", "hash"
        )
    )


def test_gate_failed_draft_cannot_be_approved_even_by_a_forced_post(adbuy, reviewer, signed_in):
    client = signed_in(reviewer)
    html = client.get(page(GATE_FAILED)).content.decode()
    assert DRAFT_GATE_FAILED.format(draft=GATE_FAILED, gates="GROUND") in html
    assert 'data-testid="approve"' not in html
    assert reverse("review:draft_approve", args=[ADBUY, GATE_FAILED]) not in html
    response = approve(client, GATE_FAILED)
    assert response.status_code == 422
    assert DRAFT_GATE_FAILED.format(draft=GATE_FAILED, gates="GROUND") in response.content.decode()
    assert Decision.objects.count() == 0
    assert len(live_on_entity()) == 10


def test_dana_triggered_the_draft_so_her_approval_is_refused(adbuy, dana, signed_in):
    client = signed_in(dana)
    html = client.get(page(CONSOLIDATE)).content.decode()
    assert DRAFT_BY_TRIGGER.format(user="dana", draft=CONSOLIDATE) in html
    assert 'data-testid="approve"' not in html
    response = approve(client, CONSOLIDATE)
    assert response.status_code == 422
    assert DRAFT_BY_TRIGGER.format(user="dana", draft=CONSOLIDATE) in response.content.decode()
    assert Decision.objects.count() == 0
    assert Draft.objects.get(ext_id=CONSOLIDATE).status == "pending"


def test_a_viewer_may_not_approve(adbuy, viewer, signed_in):
    assert approve(signed_in(viewer), CONSOLIDATE).status_code == 403
    assert Decision.objects.count() == 0


def test_coverage_matrix_shows_exact_kept_and_dropped_words(adbuy, reviewer, signed_in):
    html = signed_in(reviewer).get(page(CONSOLIDATE)).content.decode()
    # "Write Gross Amount as a bare number with two decimals — no currency symbol, no commas (e.g. 18450.00)."
    assert member_words(html, "36727f00") == {
        "kept": {"amount", "decimals", "gross", "number", "two"},
        "dropped": {"bare", "commas", "currency", "symbol", "write"},
        "kept_anchors": set(),
        "dropped_anchors": set(),
    }
    assert member_summary(html, "36727f00") == "keeps 5 of 10 tokens"
    # "Copy the Contract Number character for character; never shorten it or drop leading zeros."
    assert member_words(html, "ccefde1b") == {
        "kept": {"contract", "number"},
        "dropped": {"character", "copy", "drop", "leading", "shorten", "zeros"},
        "kept_anchors": set(),
        "dropped_anchors": set(),
    }
    # Drifted: "Do not skip Advertiser or Contract Number even when the page lists several parties or order
    # numbers." ("numbers" is not "number": runs match whole.)
    assert member_words(html, "3d46cb35") == {
        "kept": {"advertiser", "contract", "number", "order"},
        "dropped": {"even", "lists", "numbers", "page", "parties", "several", "skip"},
        "kept_anchors": set(),
        "dropped_anchors": set(),
    }
    assert member_summary(html, "3d46cb35") == "keeps 4 of 11 tokens"
    # No adbuy lesson has a backticked anchor, so no confirmation is asked.
    assert "I have checked that dropping" not in html


def test_prompt_preview_goes_from_over_to_within_budget(adbuy, reviewer, signed_in):
    html = signed_in(reviewer).get(page(CONSOLIDATE)).content.decode()
    assert 'data-testid="budget-now">10 / 8 over budget</span>' in html
    assert 'data-testid="budget-after">1 / 8 within budget</span>' in html
    # 1008 characters of ten "- text" lines; 205 of the one consolidation line (ceil(n / 4)).
    assert 'data-testid="tokens-now">252</b>' in html
    assert 'data-testid="tokens-after">52</b>' in html


def test_approve_then_roll_back_through_the_pages(adbuy, dana, reviewer, signed_in):
    before = piles_json()
    client = signed_in(reviewer)
    assert PILE_LINK in client.get(reverse("review:queue")).content.decode()

    response = approve(client, CONSOLIDATE)
    assert response.status_code == 302
    assert response["Location"] == page(CONSOLIDATE)

    live = live_on_entity()
    assert [(x.kind, x.text) for x in live] == [("consolidation", Draft.objects.get(ext_id=CONSOLIDATE).text)]
    created = live[0]
    assert created.consolidates == MEMBERS
    assert PILE_LINK not in client.get(reverse("review:queue")).content.decode()
    assert TARGET in [p["target"] for p in before["piles"]]
    assert [p["target"] for p in piles_json()["piles"] if p["host"] == ADBUY] == []
    for h in MEMBERS:
        lesson = Lesson.objects.get(host__name=ADBUY, hash=h)
        assert (lesson.status, lesson.superseded_by) == ("superseded", created.hash)
        html = client.get(reverse("review:lesson", args=[ADBUY, h])).content.decode()
        assert f'superseded by <a class="mono" href="/lessons/{ADBUY}/{created.hash}/">' in html
    pile_html = client.get(PILE_URL).content.decode()
    assert pile_html.count(f'by <a class="mono" href="/lessons/{ADBUY}/{created.hash}/">') == 10
    decision = Decision.objects.get(action="approve_consolidation")
    assert (decision.actor, decision.draft_id, decision.created_hash) == ("rita", CONSOLIDATE, created.hash)

    response = rollback(client, CONSOLIDATE)
    assert response.status_code == 302
    assert [x.hash for x in live_on_entity()] == MEMBERS
    assert PILE_LINK in client.get(reverse("review:queue")).content.decode()
    after = piles_json()
    # Exactly as before, but for the draft's own status: a roll back leaves it approved (its record tells).
    expected = copy.deepcopy(before)
    for pile in expected["piles"]:
        for draft in pile["drafts"]:
            if pile["host"] == ADBUY and draft["id"] == CONSOLIDATE:
                draft["status"] = "approved"
    assert after == expected
    assert Lesson.objects.get(hash=created.hash).status == "retracted"
    assert list(Decision.objects.values_list("action", flat=True)) == [
        "approve_consolidation",
        "rollback_consolidation",
    ]
