"""In a real browser (htmx): a reviewer claims a pile (the claim box swaps alone), a second reviewer sees
the claim and still retires two members, the Undo in the notice restores exactly those two, and the first
reviewer's own retire releases the claim. Issue 12, Build 3 and finding 7."""

from __future__ import annotations

import importlib

import pytest

from lessons.models import Lesson
from review.models import Decision, PileClaim

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PILE = "pile/?host=warehouse-sql&namespace=analytics&subject=revenue_models"


@pytest.fixture(autouse=True)
def roles(transactional_db):
    from django.apps import apps

    importlib.import_module("review.migrations.0002_roles").create_roles(apps, None)


def test_claim_then_another_retires_and_undoes_then_the_holders_retire_releases(
    corpora, reviewer, second_reviewer, sign_in
):
    rita = sign_in("rita", "rita-pass")
    rita.goto(rita.url + PILE)
    rita.click("#claim button[value=claim]")
    rita.wait_for_selector("#claim button[value=release]")
    assert rita.inner_text("[data-testid=claim-user]") == "rita"
    assert PileClaim.objects.get().user == reviewer

    rob = sign_in("rob", "rob-pass")
    rob.goto(rob.url + PILE)
    assert "claimed by rita since" in rob.inner_text("#claim")
    assert rob.locator("#claim button").count() == 0
    members = rob.eval_on_selector_all("input[name=members]", "els => els.map(e => e.value)")
    for value in members[:2]:
        rob.check(f"input[name=members][value='{value}']")
    rob.fill("#retire-form textarea[name=reason]", "Said twice.")
    rob.click("button:has-text('Retire 2 lessons')")
    rob.wait_for_selector("[data-testid=undo]")
    assert (
        list(Lesson.objects.filter(hash__in=members[:2]).values_list("status", flat=True))
        == ["retracted"] * 2
    )
    assert PileClaim.objects.get().user == reviewer  # rob's decision leaves rita's claim

    rob.click("[data-testid=undo]")
    rob.wait_for_selector("text=Restored 2 lessons with one reason")
    assert (
        sorted(Lesson.objects.filter(hash__in=members[:2]).values_list("status", flat=True)) == ["live"] * 2
    )
    undo = list(Decision.objects.filter(action="restore").values_list("lesson_hash", "reason"))
    assert sorted(undo) == sorted((h, "undo: Said twice.") for h in members[:2])

    rita.reload()
    rita.check(f"input[name=members][value='{members[0]}']")
    rita.fill("#retire-form textarea[name=reason]", "Restated by the newer member.")
    rita.click("button:has-text('Retire 1 lesson')")
    rita.wait_for_selector("[data-testid=undo]")
    assert "Nobody has claimed this pile." in rita.inner_text("#claim")
    assert PileClaim.objects.count() == 0
