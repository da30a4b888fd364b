"""A reviewer approves, then rolls back, the adbuy consolidation in a real browser.

queue → pile → draft rec-adbuy-consolidate-1 → read the coverage matrix → approve with a reason (htmx) →
the pile is gone from the queue → roll back with a reason → the pile is back. Screenshots of the draft
page at 1280x800 and 1024x768 go to artifacts/. spec: decisions.md ("Actions"); interchange.md ("draft").
"""

from __future__ import annotations

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PILE_LINK = "a[href='/pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture']"
DRAFT = "rec-adbuy-consolidate-1"


@pytest.fixture
def dana(db):
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user(username="dana", password="dana-pass")
    user.groups.add(Group.objects.get(name="reviewer"))
    return user


def test_a_reviewer_approves_and_rolls_back_the_adbuy_consolidation(
    corpora, reviewer, dana, live_server, sign_in, artifacts
):
    from lessons.models import Lesson
    from review.models import Decision

    page = sign_in("rita", "rita-pass")
    page.click(PILE_LINK)
    page.wait_for_url("**/pile/?host=adbuy-desk*")
    page.click(f"a:text-is('{DRAFT}')")
    page.wait_for_url(f"**/drafts/adbuy-desk/{DRAFT}/")
    assert page.inner_text("[data-testid=draft-status]") == "pending"

    # The coverage matrix: the drifted member's "numbers" is dropped, its "number" kept (runs match whole).
    drifted = page.locator("[data-testid=member-3d46cb35]")
    assert (
        drifted.locator("[data-testid=dropped] del.chip-dropped[data-word=numbers]").inner_text() == "numbers"
    )
    assert drifted.locator("[data-testid=kept] .chip-kept[data-word=number]").inner_text() == "number"
    assert drifted.locator("[data-testid=summary]").inner_text() == "keeps 4 of 11 tokens"
    assert page.inner_text("[data-testid=budget-now]") == "10 / 8 over budget"
    assert page.inner_text("[data-testid=budget-after]") == "1 / 8 within budget"

    page.screenshot(path=str(artifacts / "draft_1280x800.png"), full_page=True)
    page.set_viewport_size({"width": 1024, "height": 768})
    page.screenshot(path=str(artifacts / "draft_1024x768.png"), full_page=True)
    page.screenshot(path=str(artifacts / "draft_1024x768_top.png"))
    page.set_viewport_size({"width": 1280, "height": 800})

    page.fill("#id_approve-reason", "Ten rules restate five fields; one rule keeps them.")
    page.select_option("#id_approve-reason_code", "duplicate")
    page.click("[data-testid=approve]")
    page.wait_for_selector("[data-testid=draft-status]:text-is('approved')")
    assert "is live and supersedes 10 lessons" in page.inner_text("#draft-actions .notice-success")
    assert page.locator("[data-testid=consolidation-link]").count() == 1
    page.screenshot(path=str(artifacts / "draft_approved_1280x800.png"), full_page=True)

    page.click("nav.mainnav >> text=Piles")
    page.wait_for_url(f"{live_server.url}/")
    assert page.locator(PILE_LINK).count() == 0

    page.go_back()
    page.wait_for_url(f"**/drafts/adbuy-desk/{DRAFT}/")
    page.reload()
    page.fill("#id_rollback-reason", "Field accuracy fell after the merge.")
    page.click("[data-testid=rollback]")
    page.wait_for_selector("[data-testid=rolled-back]")
    assert "its lessons are live again" in page.inner_text("#draft-actions .notice-success")

    page.click("nav.mainnav >> text=Piles")
    page.wait_for_url(f"{live_server.url}/")
    assert page.locator(PILE_LINK).count() == 1

    decisions = list(Decision.objects.order_by("seq").values_list("action", "actor", "reason", "reason_code"))
    assert decisions == [
        ("approve_consolidation", "rita", "Ten rules restate five fields; one rule keeps them.", "duplicate"),
        ("rollback_consolidation", "rita", "Field accuracy fell after the merge.", None),
    ]
    live = Lesson.objects.filter(host__name="adbuy-desk", subject="invoice_capture", status="live")
    assert live.count() == 10
