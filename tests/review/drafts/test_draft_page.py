"""The draft page and its three actions on small drafts: statuses, refusals, confirmation, htmx, queries.

spec: decisions.md ("Actions", "Stale views are refused"); interchange.md ("draft"); docs/piles-and-recurrence.md ("drafts").
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from lessons.models import Draft, Host, Lesson
from review.drafts import views
from review.drafts.lookups import DRAFT_UNKNOWN
from review.models import Decision
from review.services.common import REASON_REQUIRED, STALE_PILE
from review.services.consolidation import (
    DRAFT_BY_AUTHOR,
    DRAFT_BY_TRIGGER,
    DRAFT_DROPS_ANCHORS,
    DRAFT_GATE_FAILED,
    DRAFT_STALE,
    draft_approve,
)
from review.services.decisions import lessons_retire
from tests.fixtures.drafts import entity_version
from tests.html import inline_text, parse
from tests.review.drafts.helpers import member_summary, member_words

L1 = "Convert `*_at` timestamp columns with `to_utc` in staging models."
L2 = "Staging models must convert timestamp columns to UTC."
DROPS_TO_UTC = "Convert timestamp columns in staging models to UTC."


def page(host: str, draft_id: str) -> str:
    return reverse("review:draft", args=[host, draft_id])


def action(name: str, host: str, draft_id: str) -> str:
    return reverse(f"review:{name}", args=[host, draft_id])


def approve_data(host: str = "acme", reason: str = "One rule instead of many.", **extra) -> dict:
    return {"approve-reason": reason, "approve-pile_version": entity_version(host), **extra}


def test_pending_draft_shows_status_gates_author_trigger_and_members(small_draft, reviewer, signed_in):
    hashes = small_draft(3)
    html = signed_in(reviewer).get(page("acme", "d-3")).content.decode()
    assert 'data-testid="draft-status">pending</span>' in html
    assert 'data-testid="gate-ground">pass</span>' in html
    assert 'data-testid="gate-verify">pass</span>' in html
    assert '<dd class="mono wrap-any">llm:test</dd>' in html
    assert '<dd class="mono wrap-any">user:trix</dd>' in html
    assert "<dd>0.5</dd>" in html
    assert '<dd class="mono">2026-04-25T00:00:00.000Z</dd>' in html
    for h in hashes:
        assert f'href="/lessons/acme/{h}/"' in html
    assert html.index(hashes[0][:8]) < html.index(hashes[1][:8]) < html.index(hashes[2][:8])


def test_unknown_draft_is_a_404_naming_it(small_draft, reviewer, signed_in):
    small_draft(3)
    response = signed_in(reviewer).get(page("acme", "nope"))
    assert response.status_code == 404
    assert DRAFT_UNKNOWN.format(host="acme", draft="nope") in response.content.decode().replace("&#x27;", "'")


def test_a_draft_whose_member_was_retired_is_stale_and_only_rejectable(
    small_draft, reviewer, second_reviewer, signed_in
):
    hashes = small_draft(3)
    lessons_retire(
        host=Host.objects.get(name="acme"), hashes=[hashes[1]], actor=second_reviewer, reason="gone"
    )
    html = signed_in(reviewer).get(page("acme", "d-3")).content.decode()
    status = parse(html).find("span", data_testid="draft-status")
    assert status.text == "stale"
    assert status.attrs["title"] == "a lesson this draft supersedes is no longer live"
    blocked = DRAFT_STALE.format(draft="d-3", lessons=f"the lesson {hashes[1][:8]}…", verb="is")
    assert blocked in html
    assert action("draft_approve", "acme", "d-3") not in html
    assert action("draft_reject", "acme", "d-3") in html


def test_a_forced_approval_of_a_stale_draft_is_refused(small_draft, reviewer, second_reviewer, signed_in):
    hashes = small_draft(3)
    lessons_retire(
        host=Host.objects.get(name="acme"), hashes=[hashes[2]], actor=second_reviewer, reason="gone"
    )
    response = signed_in(reviewer).post(action("draft_approve", "acme", "d-3"), approve_data())
    assert response.status_code == 422
    assert (
        DRAFT_STALE.format(draft="d-3", lessons=f"the lesson {hashes[2][:8]}…", verb="is")
        in response.content.decode()
    )
    assert Decision.objects.filter(action="approve_consolidation").count() == 0


def test_the_pile_page_links_its_drafts_with_their_status(small_draft, reviewer, signed_in):
    small_draft(3)
    html = (
        signed_in(reviewer)
        .get("/pile/?host=acme&namespace=desk.adbuy&subject=invoice_capture")
        .content.decode()
    )
    assert f'<a href="{page("acme", "d-3")}">d-3</a>' in html
    assert '<span class="badge d-pending">pending</span>' in html


def test_rejecting_a_stale_draft_marks_it_rejected(small_draft, reviewer, second_reviewer, signed_in):
    hashes = small_draft(3)
    lessons_retire(
        host=Host.objects.get(name="acme"), hashes=[hashes[0]], actor=second_reviewer, reason="gone"
    )
    client = signed_in(reviewer)
    response = client.post(action("draft_reject", "acme", "d-3"), {"reject-reason": "A member is gone."})
    assert response.status_code == 302
    assert Draft.objects.get(ext_id="d-3").status == "rejected"
    html = client.get(page("acme", "d-3")).content.decode()
    assert 'data-testid="draft-status">rejected</span>' in html
    assert f'data-testid="decided-rejected">{views.DECIDED_REJECTED}</p>' in html
    assert "can be rejected" not in html  # no refusal, gate note or stale note for a done deed
    assert 'href="#draft-actions"' not in html  # nothing left to decide: no "decide" link
    assert "A member is gone." in html  # the decision list


def test_gate_failed_draft_says_so_and_has_no_approve_button(small_draft, reviewer, signed_in):
    small_draft(3, gates={"ground": "fail", "verify": "pass"})
    html = signed_in(reviewer).get(page("acme", "d-3")).content.decode()
    assert DRAFT_GATE_FAILED.format(draft="d-3", gates="GROUND") in html
    assert 'data-testid="approve"' not in html
    assert action("draft_approve", "acme", "d-3") not in html


def test_both_gates_failed_are_named(small_draft, reviewer, signed_in):
    small_draft(3, gates={"ground": "fail", "verify": "fail"})
    html = signed_in(reviewer).get(page("acme", "d-3")).content.decode()
    assert DRAFT_GATE_FAILED.format(draft="d-3", gates="GROUND and VERIFY") in html


def test_the_trigger_sees_why_another_reviewer_must_approve(small_draft, user_factory, signed_in):
    small_draft(3)
    html = signed_in(user_factory("trix")).get(page("acme", "d-3")).content.decode()
    assert DRAFT_BY_TRIGGER.format(user="trix", draft="d-3") in html
    assert 'data-testid="approve"' not in html
    assert 'data-testid="reject"' in html


def test_the_author_sees_why_another_reviewer_must_approve(small_draft, user_factory, signed_in):
    small_draft(3)
    html = signed_in(user_factory("llm:test")).get(page("acme", "d-3")).content.decode()
    assert DRAFT_BY_AUTHOR.format(user="llm:test", draft="d-3") in html


def test_a_viewer_reads_the_page_without_any_form(small_draft, viewer, signed_in):
    small_draft(3)
    html = signed_in(viewer).get(page("acme", "d-3")).content.decode()
    assert views.BLOCKED_VIEWER in html
    assert '<form method="post" action="/drafts/' not in html


def test_approve_without_a_reason_is_refused_on_the_field(small_draft, reviewer, signed_in):
    small_draft(3)
    response = signed_in(reviewer).post(action("draft_approve", "acme", "d-3"), approve_data(reason="   "))
    assert response.status_code == 422
    assert REASON_REQUIRED in response.content.decode()
    assert Decision.objects.count() == 0


def test_approve_with_a_stale_pile_version_is_refused_with_the_fresh_version(
    small_draft, reviewer, second_reviewer, signed_in
):
    hashes = small_draft(3, extra=1)
    seen = entity_version("acme")
    extra = Lesson.objects.exclude(hash__in=hashes).get(host__name="acme")
    lessons_retire(host=Host.objects.get(name="acme"), hashes=[extra.hash], actor=second_reviewer, reason="x")
    fresh = entity_version("acme")
    data = {"approve-reason": "Merge them.", "approve-pile_version": seen}
    response = signed_in(reviewer).post(action("draft_approve", "acme", "d-3"), data)
    html = response.content.decode()
    assert response.status_code == 409
    assert STALE_PILE in html
    assert f'name="approve-pile_version" value="{fresh}"' in html
    assert "Merge them." in html  # the typed reason is kept
    assert Decision.objects.filter(action="approve_consolidation").count() == 0
    assert Draft.objects.get(ext_id="d-3").status == "pending"


def test_dropping_a_held_anchor_asks_for_a_confirmation(small_draft, reviewer, signed_in):
    hashes = small_draft(2, texts=[L1, L2], verdicts={0: "held"}, text=DROPS_TO_UTC)
    html = signed_in(reviewer).get(page("acme", "d-2")).content.decode()
    assert "I have checked that dropping <code>`to_utc`</code> from held lessons is intended" in html
    assert member_summary(html, hashes[0][:8]) == "keeps 5 of 6 tokens; drops anchor `to_utc`"
    assert member_words(html, hashes[0][:8])["dropped_anchors"] == {"to_utc"}


def test_approving_without_the_confirmation_is_refused_and_writes_nothing(small_draft, reviewer, signed_in):
    small_draft(2, texts=[L1, L2], verdicts={0: "held"}, text=DROPS_TO_UTC)
    response = signed_in(reviewer).post(action("draft_approve", "acme", "d-2"), approve_data())
    assert response.status_code == 422
    assert DRAFT_DROPS_ANCHORS.format(anchors="`to_utc`") in response.content.decode()
    assert Decision.objects.count() == 0
    assert Lesson.objects.filter(kind="consolidation").count() == 0


def test_approving_with_the_confirmation_supersedes_the_members(small_draft, reviewer, signed_in):
    hashes = small_draft(2, texts=[L1, L2], verdicts={0: "held"}, text=DROPS_TO_UTC)
    data = approve_data(**{"approve-confirm_dropped_anchors": "on"})
    response = signed_in(reviewer).post(action("draft_approve", "acme", "d-2"), data)
    assert response.status_code == 302
    assert response["Location"] == page("acme", "d-2")
    created = Lesson.objects.get(kind="consolidation")
    assert set(Lesson.objects.filter(hash__in=hashes).values_list("status", "superseded_by")) == {
        ("superseded", created.hash)
    }


def test_a_regressed_members_dropped_anchor_needs_no_confirmation(small_draft, reviewer, signed_in):
    small_draft(2, texts=[L1, L2], verdicts={0: "regressed"}, text=DROPS_TO_UTC)
    html = signed_in(reviewer).get(page("acme", "d-2")).content.decode()
    assert "I have checked that dropping" not in html
    response = signed_in(reviewer).post(action("draft_approve", "acme", "d-2"), approve_data())
    assert response.status_code == 302


def test_approved_draft_links_its_consolidation_and_offers_a_rollback(
    small_draft, reviewer, second_reviewer, signed_in
):
    small_draft(3)
    draft_approve(draft=Draft.objects.get(ext_id="d-3"), actor=second_reviewer, reason="merge")
    created = Lesson.objects.get(kind="consolidation")
    html = signed_in(reviewer).get(page("acme", "d-3")).content.decode()
    assert 'data-testid="draft-status">approved</span>' in html
    assert f'href="/lessons/acme/{created.hash}/" data-testid="consolidation-link"' in html
    assert action("draft_rollback", "acme", "d-3") in html
    assert 'data-testid="budget-after">3 / 3 within budget</span>' in html  # the preview after a roll back


def test_rollback_restores_the_members_and_shows_rolled_back(
    small_draft, reviewer, second_reviewer, signed_in
):
    hashes = small_draft(3)
    draft_approve(draft=Draft.objects.get(ext_id="d-3"), actor=second_reviewer, reason="merge")
    client = signed_in(reviewer)
    data = {"rollback-reason": "Agents got worse.", "rollback-pile_version": entity_version("acme")}
    response = client.post(action("draft_rollback", "acme", "d-3"), data)
    assert response.status_code == 302
    assert set(Lesson.objects.filter(hash__in=hashes).values_list("status", flat=True)) == {"live"}
    html = client.get(page("acme", "d-3")).content.decode()
    assert 'data-testid="rolled-back">rolled back</span>' in html
    created = Lesson.objects.get(kind="consolidation")
    assert views.BLOCKED_ROLLBACK.format(short=created.hash[:8], status="retracted") in html
    notice = parse(html).find(cls="notices").find("span")
    assert inline_text(notice) == views.ROLLED_BACK_NOTICE.format(draft="d-3", short=created.hash[:8], seq=2)
    assert notice.find("a").attrs["href"] == "/decisions/?seq=2"  # "Decision #2" links to it in the log


def test_htmx_approve_swaps_the_actions_and_the_header_in_place(small_draft, reviewer, signed_in):
    small_draft(3)
    response = signed_in(reviewer).post(
        action("draft_approve", "acme", "d-3"), approve_data(), HTTP_HX_REQUEST="true"
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert html.lstrip().startswith('<section id="draft-actions"')
    assert '<header id="draft-head" class="draft-head" hx-swap-oob="true">' in html
    assert '<div id="draft-body" hx-swap-oob="true">' in html
    assert 'data-testid="draft-status">approved</span>' in html
    assert "<html" not in html
    decision = Decision.objects.get(action="approve_consolidation")
    notice = parse(html).find(cls="notice-success").find("span")
    assert inline_text(notice) == views.APPROVED_NOTICE.format(
        draft="d-3", short=decision.created_hash[:8], n=3, s="s", seq=1
    )


def test_htmx_refusal_is_swapped_with_status_422(small_draft, user_factory, signed_in):
    small_draft(3)
    response = signed_in(user_factory("trix")).post(
        action("draft_approve", "acme", "d-3"), approve_data(), HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 422
    assert 'data-testid="refusal"><span>trix triggered draft d-3' in response.content.decode()


def test_viewer_posts_are_forbidden(small_draft, viewer, signed_in):
    small_draft(3)
    client = signed_in(viewer)
    assert client.post(action("draft_approve", "acme", "d-3"), approve_data()).status_code == 403
    assert client.post(action("draft_reject", "acme", "d-3"), {"reject-reason": "x"}).status_code == 403
    assert Decision.objects.count() == 0


@pytest.mark.parametrize("members", [3, 40])
def test_draft_page_queries_do_not_grow_with_members(
    members, small_draft, reviewer, signed_in, django_assert_max_num_queries
):
    small_draft(members)
    client = signed_in(reviewer)
    with django_assert_max_num_queries(7):  # with the data version (the page's ETag)
        response = client.get(page("acme", f"d-{members}"))
    assert response.status_code == 200
    assert response.content.decode().count('class="cov-member') == members


def test_a_rejected_gate_failed_draft_no_longer_says_it_cannot_be_approved(small_draft, reviewer, signed_in):
    small_draft(3, gates={"ground": "pass", "verify": "fail"})
    client = signed_in(reviewer)
    assert "cannot be approved: VERIFY failed" in client.get(page("acme", "d-3")).content.decode()
    response = client.post(action("draft_reject", "acme", "d-3"), {"reject-reason": "VERIFY failed."})
    assert response.status_code == 302
    html = client.get(page("acme", "d-3")).content.decode()
    assert "cannot be approved" not in html
    assert 'data-testid="gate-verify">fail</span>' in html  # the gate's own verdict stays
    assert f'data-testid="decided-rejected">{views.DECIDED_REJECTED}</p>' in html
