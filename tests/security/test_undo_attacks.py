"""The Undo of a retire (docs/decisions.md, "The actions": Undo) pressed after that retire was undone by
someone else and the lesson retired again: the entity is as it was after the first retire, so its pile
version matches, but the Undo names a retire already reversed. It must be refused as a conflict (409),
nothing written, not restore the lesson from the later retire under the first one's "undo:" reason."""

from __future__ import annotations

import re
from html import unescape

import pytest

from lessons.models import Host, Lesson
from review.models import Decision
from review.services.common import UNDO_STALE
from review.services.decisions import lesson_restore, lessons_retire
from tests.html import parse
from tests.security.test_decision_attacks import ENTITY, h, pile  # noqa: F401 - the fixture

pytestmark = pytest.mark.usefixtures("pile")


def undo_form(body: str) -> tuple[str, dict]:
    """The action and fields of the Undo form on a page."""
    form = re.search(r'<form method="post" action="([^"]+)" class="undo-form".*?</form>', body, re.S)
    assert form, "no Undo on the page"
    fields: dict[str, list[str]] = {}
    for name, value in re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form.group(0)):
        fields.setdefault(name, []).append(unescape(value))
    return unescape(form.group(1)), fields


def others_undo_and_retire_again(hashes: list[str], second_reviewer) -> None:
    """Another reviewer restores the lessons, then retires them again: the entity's statuses are back to
    what they were after the first retire."""
    host = Host.objects.get(name="acme")
    for lesson in Lesson.objects.filter(hash__in=hashes):
        lesson_restore(lesson=lesson, actor=second_reviewer, reason="Still needed.")
    lessons_retire(host=host, hashes=hashes, actor=second_reviewer, reason="Restates lesson 4 after all.")


def test_the_lesson_pages_undo_of_a_retire_already_undone_is_refused(as_reviewer, second_reviewer):
    page = as_reviewer.get(f"/lessons/acme/{h(2)}/").content.decode()
    seen = re.search(r'name="pile_version" value="([^"]+)"', page).group(1)
    done = as_reviewer.post(
        f"/lessons/acme/{h(2)}/retire/", {"reason": "Says lesson 3 again.", "pile_version": seen}
    )
    assert done.status_code == 302
    action, fields = undo_form(as_reviewer.get(done["Location"]).content.decode())
    assert fields["undoes"] == [str(Decision.objects.get().seq)]
    others_undo_and_retire_again([h(2)], second_reviewer)
    before = Decision.objects.count()
    pressed = as_reviewer.post(action, fields)
    assert pressed.status_code == 409
    body = unescape(pressed.content.decode())
    assert UNDO_STALE.format(seqs="#1") in body
    assert "undo: Says lesson 3 again." not in body  # the fresh form does not offer the same mistake
    assert Decision.objects.count() == before
    assert Lesson.objects.get(hash=h(2)).status == "retracted"


def test_the_piles_undo_of_a_retire_already_undone_is_refused(as_reviewer, second_reviewer):
    page = as_reviewer.get(f"/pile/?{ENTITY}").content.decode()
    seen = re.search(r'name="pile_version" value="([^"]+)"', page).group(1)
    done = as_reviewer.post(
        f"/pile/retire/?{ENTITY}",
        {"members": [h(2), h(3)], "reason": "Both say lesson 4 again.", "pile_version": seen},
        HTTP_HX_REQUEST="true",
    )
    assert done.status_code == 200
    action, fields = undo_form(done.content.decode())
    assert fields["undoes"] == ["1,2"]
    others_undo_and_retire_again([h(2), h(3)], second_reviewer)
    before = Decision.objects.count()
    pressed = as_reviewer.post(action, fields, HTTP_HX_REQUEST="true")
    assert pressed.status_code == 409
    body = unescape(pressed.content.decode())
    assert UNDO_STALE.format(seqs="#1, #2") in body
    assert "Since you loaded it: #3 restore" in body and "#5 retire" in body  # rob's, after #1 and #2
    assert "undo: Both say lesson 4 again." not in body
    boxes = parse(pressed.content).find_all("input", name="lessons")
    assert {b.attrs["value"] for b in boxes} == {h(2), h(3)}  # restorable still, and not selected
    assert not [b for b in boxes if "checked" in b.attrs]
    assert Decision.objects.count() == before
    assert set(Lesson.objects.filter(hash__in=[h(2), h(3)]).values_list("status", flat=True)) == {"retracted"}


@pytest.mark.parametrize("where", ["lesson", "pile"])
def test_an_undo_still_latest_restores(as_reviewer, where):
    """The Undo of the latest retire restores as before."""
    page = as_reviewer.get(f"/pile/?{ENTITY}").content.decode()
    seen = re.search(r'name="pile_version" value="([^"]+)"', page).group(1)
    if where == "lesson":
        done = as_reviewer.post(f"/lessons/acme/{h(2)}/retire/", {"reason": "Dup.", "pile_version": seen})
        body = as_reviewer.get(done["Location"]).content.decode()
    else:
        body = as_reviewer.post(
            f"/pile/retire/?{ENTITY}",
            {"members": [h(2)], "reason": "Dup.", "pile_version": seen},
            HTTP_HX_REQUEST="true",
        ).content.decode()
    action, fields = undo_form(body)
    assert as_reviewer.post(action, fields).status_code == 302
    assert Lesson.objects.get(hash=h(2)).status == "live"
    assert Decision.objects.order_by("-seq").first().reason == "undo: Dup."


def test_a_tampered_undoes_field_is_a_form_error(as_reviewer):
    page = as_reviewer.get(f"/pile/?{ENTITY}").content.decode()
    seen = re.search(r'name="pile_version" value="([^"]+)"', page).group(1)
    as_reviewer.post(f"/lessons/acme/{h(2)}/retire/", {"reason": "Dup.", "pile_version": seen})
    seen = re.search(
        r'name="pile_version" value="([^"]+)"', as_reviewer.get(f"/pile/?{ENTITY}").content.decode()
    )
    answer = as_reviewer.post(
        f"/lessons/acme/{h(2)}/restore/",
        {"reason": "undo: Dup.", "pile_version": seen.group(1), "undoes": "1;DROP"},
    )
    assert answer.status_code == 422
    assert Decision.objects.count() == 1
