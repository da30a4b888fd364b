"""In a real browser (htmx): the Undo in a retire's notice, pressed after another reviewer restored those
lessons and retired them again (the pile looks as it did), is refused in the pile region with the
decisions since, and restores nothing. docs/decisions.md, "The actions" (Undo)."""

from __future__ import annotations

import importlib

import pytest

from lessons.models import Host, Lesson
from review.models import Decision
from review.services.common import UNDO_STALE
from review.services.decisions import lesson_restore, lessons_retire

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PILE = "pile/?host=warehouse-sql&namespace=analytics&subject=revenue_models"


@pytest.fixture(autouse=True)
def roles(transactional_db):
    from django.apps import apps

    importlib.import_module("review.migrations.0002_roles").create_roles(apps, None)


def test_an_undo_of_a_retire_undone_since_is_refused_in_the_pile(corpora, reviewer, second_reviewer, sign_in):
    rita = sign_in("rita", "rita-pass")
    rita.goto(rita.url + PILE)
    members = rita.eval_on_selector_all("input[name=members]", "els => els.map(e => e.value)")
    rita.check(f"input[name=members][value='{members[0]}']")
    rita.fill("#retire-form textarea[name=reason]", "Said twice.")
    rita.click("button:has-text('Retire 1 lesson')")
    rita.wait_for_selector("[data-testid=undo]")
    (first,) = Decision.objects.filter(action="retire").values_list("seq", flat=True)

    lesson = Lesson.objects.get(hash=members[0])
    lesson_restore(lesson=lesson, actor=second_reviewer, reason="Still needed.")
    lessons_retire(
        host=Host.objects.get(name="warehouse-sql"),
        hashes=[members[0]],
        actor=second_reviewer,
        reason="Now it is.",
    )
    before = Decision.objects.count()

    rita.click("[data-testid=undo]")
    rita.wait_for_selector("text=" + UNDO_STALE.format(seqs=f"#{first}")[:60])
    assert f"#{first + 2} retire" in rita.inner_text("#pile")
    assert Decision.objects.count() == before
    assert Lesson.objects.get(hash=members[0]).status == "retracted"
    assert rita.locator("[data-testid=undo]").count() == 0
