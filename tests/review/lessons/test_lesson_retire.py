"""Finding 7 (issue 12): a live lesson's page offers retire (the pile's service) and, after it, an Undo that
restores the lesson with the reason "undo: <the original reason>"."""

from __future__ import annotations

from lessons.models import Draft, Host, Lesson
from review.models import Decision
from review.services.common import STALE_PILE
from review.services.decisions import lessons_restore, lessons_retire
from review.web.format import stale_notice
from tests.fixtures.decisions import NOW, NS, SUBJECT
from tests.html import inline_text, parse


def acme() -> Host:
    return Host.objects.get(name="acme")


def statuses(hashes) -> list[str]:
    by_hash = dict(Lesson.objects.filter(hash__in=hashes).values_list("hash", "status"))
    return [by_hash[h] for h in hashes]


def retire(hashes, actor, reason="restates another"):
    return lessons_retire(host=acme(), hashes=hashes, actor=actor, reason=reason, now=NOW)


def lesson_page(client, h: str, query: str = ""):
    return parse(client.get(f"/lessons/acme/{h}/{query}").content)


def test_a_live_lessons_page_offers_retire_to_a_reviewer_not_a_viewer(pile, client, reviewer, viewer):
    client.force_login(reviewer)
    form = lesson_page(client, pile[0]).find("form", cls="retire-one")
    assert form.attrs["action"] == f"/lessons/acme/{pile[0]}/retire/"
    assert form.find("button").text == "Retire"
    client.force_login(viewer)
    assert lesson_page(client, pile[0]).find("form", cls="retire-one") is None


def test_retiring_from_the_lesson_page_records_it_and_offers_an_undo(pile, client, reviewer):
    client.force_login(reviewer)
    version = lesson_page(client, pile[0]).find("form", cls="retire-one").find("input", name="pile_version")
    response = client.post(
        f"/lessons/acme/{pile[0]}/retire/",
        {"reason": "said elsewhere", "reason_code": "duplicate", "pile_version": version.attrs["value"]},
    )
    assert response.status_code == 302
    assert response["Location"] == f"/lessons/acme/{pile[0]}/?retired=1"
    decision = Decision.objects.get()
    assert (decision.action, decision.lesson_hash, decision.reason, decision.reason_code) == (
        "retire",
        pile[0],
        "said elsewhere",
        "duplicate",
    )
    shown = parse(client.get(response["Location"]).content)
    notice = shown.find(data_testid="retired-notice")
    assert inline_text(notice).startswith(f"Retired lesson {pile[0][:8]}…: decision #1.")
    undo = notice.find("form", cls="undo-form")
    assert undo.attrs["action"] == f"/lessons/acme/{pile[0]}/restore/"
    reason = undo.find("input", name="reason").attrs["value"]
    assert reason == "undo: said elsewhere"
    version = undo.find("input", name="pile_version").attrs["value"]
    client.post(undo.attrs["action"], {"reason": reason, "pile_version": version})
    assert statuses([pile[0]]) == ["live"]
    assert list(Decision.objects.values_list("action", "reason").order_by("seq")) == [
        ("retire", "said elsewhere"),
        ("restore", "undo: said elsewhere"),
    ]


def test_the_lesson_page_offers_no_undo_once_another_decision_followed(pile, client, reviewer):
    client.force_login(reviewer)
    (first,) = retire([pile[0]], reviewer)
    assert lesson_page(client, pile[0]).find("form", cls="undo-form") is None  # no ?retired=
    assert lesson_page(client, pile[0], f"?retired={first.seq}").find("form", cls="undo-form") is not None
    lessons_restore(host=acme(), namespace=NS, subject=SUBJECT, hashes=[pile[0]], actor=reviewer, reason="b")
    again = parse(client.get(f"/lessons/acme/{pile[0]}/?retired={first.seq}").content)
    assert again.find("form", cls="undo-form") is None
    assert again.find("form", cls="retire-one") is not None  # live again: it can be retired


def test_retiring_from_the_lesson_page_on_a_changed_pile_is_refused_409(pile, client, reviewer):
    client.force_login(reviewer)
    version = lesson_page(client, pile[0]).find("input", name="pile_version").attrs["value"]
    retire([pile[1]], reviewer)
    response = client.post(f"/lessons/acme/{pile[0]}/retire/", {"reason": "x", "pile_version": version})
    assert response.status_code == 409 and STALE_PILE in response.content.decode()
    assert statuses([pile[0]]) == ["live"]


def retired_notice(client, lesson) -> str:
    """Retire ``lesson`` (of adbuy-desk) through its page's form; the notice of the page it lands on."""
    page = parse(client.get(f"/lessons/adbuy-desk/{lesson.hash}/").content)
    version = page.find("form", cls="retire-one").find("input", name="pile_version").attrs["value"]
    response = client.post(
        f"/lessons/adbuy-desk/{lesson.hash}/retire/",
        {"reason": "said elsewhere", "reason_code": "duplicate", "pile_version": version},
    )
    return inline_text(parse(client.get(response["Location"]).content).find(data_testid="retired-notice"))


def test_retiring_a_lesson_pending_drafts_supersede_names_the_drafts_made_stale(corpora, client, reviewer):
    """A newcomer's finding: the pile page named the drafts a retire made stale, the lesson page did not."""
    drafts = list(Draft.objects.filter(host__name="adbuy-desk", status="pending").order_by("ext_id"))
    assert [d.ext_id for d in drafts] == ["rec-adbuy-consolidate-0", "rec-adbuy-consolidate-1"]
    shared = sorted(set(drafts[0].supersedes) & set(drafts[1].supersedes))
    lesson = Lesson.objects.get(host__name="adbuy-desk", hash=shared[0])
    client.force_login(reviewer)
    assert retired_notice(client, lesson).startswith(
        f"Retired lesson {lesson.hash[:8]}…: decision #1."
        + stale_notice(["rec-adbuy-consolidate-0", "rec-adbuy-consolidate-1"])
    )
    assert stale_notice(["d-1"]) == (
        " Draft d-1 became stale: it supersedes a lesson retired now, and cannot be approved until the"
        " retired lessons it supersedes are restored."
    )


def test_a_draft_stale_before_the_retire_is_not_named_again(corpora, client, reviewer):
    """Seen in review: the lesson page named a draft already stale (another member retired earlier) as
    made stale by this retire; the pile page did not."""
    drafts = list(Draft.objects.filter(host__name="adbuy-desk", status="pending").order_by("ext_id"))
    only_second = sorted(set(drafts[1].supersedes) - set(drafts[0].supersedes))
    shared = sorted(set(drafts[0].supersedes) & set(drafts[1].supersedes))
    adbuy = Host.objects.get(name="adbuy-desk")
    lessons_retire(host=adbuy, hashes=only_second[:1], actor=reviewer, reason="said elsewhere", now=NOW)
    # draft 1 is stale from here on
    lesson = Lesson.objects.get(host__name="adbuy-desk", hash=shared[0])
    client.force_login(reviewer)
    assert retired_notice(client, lesson).startswith(
        f"Retired lesson {lesson.hash[:8]}…: decision #2." + stale_notice(["rec-adbuy-consolidate-0"])
    )
