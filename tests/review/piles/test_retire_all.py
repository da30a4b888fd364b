"""A retire that would leave the entity with no live lesson asks for "Yes, retire all N" first, on the
server, so stray keys (``a``, ``r``, Ctrl+Enter) cannot empty an entity, with or without JavaScript."""

from __future__ import annotations

from lessons.models import Lesson
from review.models import Decision
from review.piles.forms import RETIRE_ALL_LABEL, RETIRE_ALL_UNCONFIRMED
from review.piles.views import RETIRED_NOTICE
from tests.fixtures.decisions import NS, SUBJECT
from tests.html import inline_text, parse

ENTITY = f"host=acme&namespace={NS}&subject={SUBJECT}"
PILE = f"/pile/?{ENTITY}"
RETIRE = f"/pile/retire/?{ENTITY}"
ASKED = RETIRE_ALL_UNCONFIRMED.format(n=5)


def post(client, hashes, *, htmx=True, **extra):
    version = parse(client.get(PILE).content).find("input", name="pile_version").attrs["value"]
    data = {"members": hashes, "reason": "all obsolete", "pile_version": version, **extra}
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    return client.post(RETIRE, data, **headers)


def live_count() -> int:
    return Lesson.objects.filter(host__name="acme", status="live").count()


def confirm_box(page):
    """The "Yes, retire all N" checkbox, or ``None`` (``find`` reads ``_`` in a keyword as ``-``)."""
    return next((i for i in page.find_all("input") if i.attrs.get("name") == "retire_all"), None)


def confirm_label(page, box):
    return next(x for x in page.find_all("label") if x.attrs.get("for") == box.attrs["id"])


def test_the_texts_name_the_number_of_live_lessons():
    assert ASKED == (
        "All 5 live lessons of this entity are selected: retiring them leaves it with no live lesson."
        ' Tick "Yes, retire all 5" to retire them all, or deselect the lessons to keep.'
    )
    assert RETIRE_ALL_LABEL.format(n=5) == "Yes, retire all 5: this entity keeps no live lesson"


def test_the_pile_page_does_not_ask_before_anything_is_posted(pile, as_reviewer):
    assert confirm_box(parse(as_reviewer.get(PILE).content)) is None


def test_retiring_every_live_lesson_unconfirmed_is_refused_and_asks(pile, as_reviewer):
    response = post(as_reviewer, pile)
    assert response.status_code == 422
    page = parse(response.content)
    summary = page.find(cls="form-summary")
    assert [inline_text(p) for p in summary.find_all("p")] == ["Nothing was retired.", ASKED]
    box = confirm_box(page)
    assert box.attrs["type"] == "checkbox" and "checked" not in box.attrs
    assert box.attrs["aria-invalid"] == "true"
    assert page.find(id=box.attrs["aria-describedby"]).attrs["data-testid"] == "retire-all-error"
    label = confirm_label(page, box)
    assert inline_text(label) == "Yes, retire all 5: this entity keeps no live lesson"
    # the selection and the reason are kept, so ticking the box is the only step left
    checked = [i.attrs["value"] for i in page.find_all("input", name="members") if "checked" in i.attrs]
    assert checked == pile
    assert page.find("textarea", name="reason").text.strip() == "all obsolete"
    assert Decision.objects.count() == 0 and live_count() == 5


def test_without_javascript_the_whole_page_asks_the_same(pile, as_reviewer):
    response = post(as_reviewer, pile, htmx=False)
    assert response.status_code == 422
    page = parse(response.content)
    assert page.find("html") is not None
    assert inline_text(page.find(data_testid="retire-all-error")) == ASKED
    assert confirm_box(page) is not None
    assert Decision.objects.count() == 0 and live_count() == 5


def test_ticking_yes_retires_every_live_lesson(pile, as_reviewer):
    response = post(as_reviewer, pile, retire_all="on")
    assert response.status_code == 200
    page = parse(response.content)
    seqs = ", ".join(f"#{n}" for n in range(1, 6))
    assert inline_text(page.find(cls="notice-success").find("span")) == RETIRED_NOTICE.format(
        n=5, s="s", seqs=seqs
    )
    assert [(d.action, d.lesson_hash) for d in Decision.objects.order_by("seq")] == [
        ("retire", h) for h in pile
    ]
    assert live_count() == 0


def test_leaving_one_live_lesson_needs_no_confirmation(pile, as_reviewer):
    response = post(as_reviewer, pile[:4])
    assert response.status_code == 200
    assert confirm_box(parse(response.content)) is None
    assert live_count() == 1


def test_a_confirmed_retire_with_a_bad_reason_keeps_the_box_ticked(pile, as_reviewer):
    response = post(as_reviewer, pile, retire_all="on", reason="  ")
    assert response.status_code == 422
    page = parse(response.content)
    assert "checked" in confirm_box(page).attrs
    assert page.find(data_testid="retire-all-error") is None
    assert Decision.objects.count() == 0


def test_the_confirmation_does_not_outlive_a_retire_of_fewer(pile, as_reviewer):
    """Ticked but not every live lesson selected: an ordinary retire, the box not shown again."""
    response = post(as_reviewer, pile[:2], retire_all="on")
    assert response.status_code == 200
    assert confirm_box(parse(response.content)) is None
    assert live_count() == 3


# --- the lesson page: retiring the entity's only live lesson -------------------------------------------


def lesson_post(client, lesson, **extra):
    page = parse(client.get(f"/lessons/acme/{lesson}/").content)
    version = page.find("form", "retire-one").find("input", name="pile_version").attrs["value"]
    data = {"reason": "the last one goes too", "pile_version": version, **extra}
    return client.post(f"/lessons/acme/{lesson}/retire/", data, HTTP_HX_REQUEST="true")


def test_retiring_the_only_live_lesson_from_its_page_asks_first(pile, as_reviewer, reviewer):
    from lessons.models import Host
    from review.piles.forms import RETIRE_ONLY_LABEL, RETIRE_ONLY_UNCONFIRMED
    from review.services.decisions import lessons_retire

    lessons_retire(host=Host.objects.get(name="acme"), hashes=pile[:4], actor=reviewer, reason="four go")
    assert confirm_box(parse(as_reviewer.get(f"/lessons/acme/{pile[4]}/").content)) is None
    response = lesson_post(as_reviewer, pile[4])
    assert response.status_code == 422
    page = parse(response.content)
    assert (
        inline_text(page.find(data_testid="retire-all-error"))
        == RETIRE_ONLY_UNCONFIRMED
        == (
            "This is the only live lesson of this entity: retiring it leaves the entity with no live lesson."
            ' Tick "Yes, retire it" to retire it anyway.'
        )
    )
    box = confirm_box(page)
    assert inline_text(confirm_label(page, box)) == RETIRE_ONLY_LABEL
    assert page.find("textarea", name="reason").text.strip() == "the last one goes too"
    assert live_count() == 1 and Decision.objects.count() == 4
    response = lesson_post(as_reviewer, pile[4], retire_all="on")
    assert response.status_code == 302
    assert live_count() == 0 and Decision.objects.count() == 5


def test_retiring_a_lesson_that_leaves_another_live_does_not_ask(pile, as_reviewer):
    assert lesson_post(as_reviewer, pile[0]).status_code == 302
    assert live_count() == 4


def test_a_pile_of_one_asks_in_the_words_for_one(pile, as_reviewer, reviewer):
    from lessons.models import Host
    from review.piles.forms import RETIRE_ONLY_UNCONFIRMED
    from review.services.decisions import lessons_retire

    lessons_retire(host=Host.objects.get(name="acme"), hashes=pile[:4], actor=reviewer, reason="four go")
    page = parse(post(as_reviewer, pile[4:]).content)
    assert inline_text(page.find(data_testid="retire-all-error")) == RETIRE_ONLY_UNCONFIRMED
