"""Finding 7 (issue 12): restore several retired lessons with one reason from the pile page; the retire
notice's Undo; retiring from a live lesson's page (with its own Undo)."""

from __future__ import annotations

import pytest

from lessons.models import Host, Lesson
from review.models import Decision
from review.piles.forms import RESTORE_NOT_RESTORABLE, RESTORE_REQUIRED
from review.piles.views import RESTORED_NOTICE
from review.services.common import REASON_MAX, STALE_PILE, DecisionRefused
from review.services.decisions import (
    RESTORE_NOT_BY_RETIRE,
    RESTORE_NOTHING,
    lessons_restore,
    lessons_retire,
)
from review.web.forms import undo_offer
from tests.builders import numbered_lesson
from tests.fixtures.decisions import NOW, NS, SUBJECT
from tests.html import inline_text, parse

ENTITY = f"host=acme&namespace={NS}&subject={SUBJECT}"
PILE = f"/pile/?{ENTITY}"


def acme() -> Host:
    return Host.objects.get(name="acme")


def statuses(hashes) -> list[str]:
    by_hash = dict(Lesson.objects.filter(hash__in=hashes).values_list("hash", "status"))
    return [by_hash[h] for h in hashes]


def retire(hashes, actor, reason="restates another"):
    return lessons_retire(host=acme(), hashes=hashes, actor=actor, reason=reason, now=NOW)


def page(client):
    return parse(client.get(PILE).content)


def restore_post(client, hashes, reason="needed after all", **extra):
    version = page(client).find("input", name="pile_version").attrs["value"]
    data = {"lessons": hashes, "reason": reason, "pile_version": version, **extra}
    return client.post(f"/pile/restore/?{ENTITY}", data, HTTP_HX_REQUEST="true")


# --- the service --------------------------------------------------------------------------------------


def test_restoring_three_lessons_writes_three_records_in_one_batch(pile, reviewer):
    retire(pile[:3], reviewer)
    decisions = lessons_restore(
        host=acme(), namespace=NS, subject=SUBJECT, hashes=pile[:3], actor=reviewer, reason="back", now=NOW
    )
    assert [(d.action, d.lesson_hash, d.reason) for d in decisions] == [
        ("restore", h, "back") for h in pile[:3]
    ]
    assert len({d.batch for d in decisions}) == 1
    assert [d.evidence["count"] for d in decisions] == [2, 2, 2]  # the live count before the restore
    assert statuses(pile) == ["live"] * 5


def test_one_lesson_not_restorable_restores_none(pile, reviewer, ingest):
    retire(pile[:1], reviewer)
    ingest([{**numbered_lesson(1, namespace=NS), "status": "retracted"}])  # the source retracted it
    assert statuses(pile[:2]) == ["retracted", "retracted"]
    with pytest.raises(DecisionRefused) as exc:
        lessons_restore(
            host=acme(),
            namespace=NS,
            subject=SUBJECT,
            hashes=pile[:2],
            actor=reviewer,
            reason="back",
            now=NOW,
        )
    assert str(exc.value) == RESTORE_NOT_BY_RETIRE.format(short=pile[1][:8])
    assert statuses(pile[:2]) == ["retracted", "retracted"]
    assert Decision.objects.filter(action="restore").count() == 0


def test_restoring_nothing_is_refused(pile, reviewer):
    with pytest.raises(DecisionRefused) as exc:
        lessons_restore(host=acme(), namespace=NS, subject=SUBJECT, hashes=[], actor=reviewer, reason="x")
    assert str(exc.value) == RESTORE_NOTHING


# --- the pile page ------------------------------------------------------------------------------------


def test_only_lessons_a_retire_retracted_get_a_restore_checkbox(pile, client, reviewer, ingest):
    retire(pile[:2], reviewer)
    ingest([{**numbered_lesson(2, namespace=NS), "status": "retracted"}])  # the source retracted it
    client.force_login(reviewer)
    form = page(client).find("form", id="restore-form")
    boxes = [i.attrs["value"] for i in form.find_all("input", type="checkbox")]
    assert boxes == pile[:2]
    assert form.find("button").text == "Restore selected"
    assert form.find("textarea").attrs["id"] == "restore_reason"  # not the retire form's id_reason


def test_a_viewer_gets_no_restore_form(pile, client, reviewer, viewer):
    retire(pile[:2], reviewer)
    client.force_login(viewer)
    assert page(client).find("form", id="restore-form") is None


def test_restore_selected_restores_two_with_one_reason(pile, client, reviewer):
    retire(pile[:3], reviewer)
    client.force_login(reviewer)
    response = restore_post(client, pile[:2])
    assert response.status_code == 200
    restored = list(Decision.objects.filter(action="restore").order_by("seq"))
    assert [(d.lesson_hash, d.reason) for d in restored] == [
        (pile[0], "needed after all"),
        (pile[1], "needed after all"),
    ]
    notice = inline_text(parse(response.content).find(cls="notice-success"))
    assert notice.startswith(RESTORED_NOTICE.format(n=2, s="s", seqs="#4, #5"))
    assert statuses(pile[:3]) == ["live", "live", "retracted"]


def test_restore_with_no_selection_or_a_live_lesson_is_a_form_error(pile, client, reviewer):
    retire(pile[:1], reviewer)
    client.force_login(reviewer)
    none = restore_post(client, [])
    assert none.status_code == 422 and RESTORE_REQUIRED in none.content.decode()
    live = restore_post(client, [pile[3]])
    assert live.status_code == 422 and RESTORE_NOT_RESTORABLE in live.content.decode()
    assert Decision.objects.filter(action="restore").count() == 0


def test_restore_on_a_changed_pile_is_refused_409(pile, client, reviewer):
    retire(pile[:2], reviewer)
    client.force_login(reviewer)
    version = page(client).find("input", name="pile_version").attrs["value"]
    retire(pile[2:3], reviewer)
    response = client.post(
        f"/pile/restore/?{ENTITY}",
        {"lessons": pile[:2], "reason": "back", "pile_version": version},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 409 and STALE_PILE in response.content.decode()
    assert statuses(pile[:2]) == ["retracted", "retracted"]


# --- Undo after a retire ------------------------------------------------------------------------------


def test_the_retire_notice_offers_an_undo_that_restores_exactly_those_lessons(pile, client, reviewer):
    retire(pile[4:5], reviewer, reason="older one")  # retired before: the undo must leave it retired
    client.force_login(reviewer)
    version = page(client).find("input", name="pile_version").attrs["value"]
    response = client.post(
        f"/pile/retire/?{ENTITY}",
        {"members": pile[:2], "reason": "says the same", "pile_version": version},
        HTTP_HX_REQUEST="true",
    )
    undo = parse(response.content).find("form", cls="undo-form")
    fields = [
        (i.attrs["name"], i.attrs["value"])
        for i in undo.find_all("input")
        if i.attrs["name"] != "csrfmiddlewaretoken"
    ]
    fresh_version = parse(response.content).find("input", name="pile_version").attrs["value"]
    assert fields == [
        ("lessons", pile[0]),
        ("lessons", pile[1]),
        ("reason", "undo: says the same"),
        ("pile_version", fresh_version),
        ("undoes", "2,3"),  # the retire's decisions (#1 retired pile[4] before)
    ]
    assert undo.attrs["action"] == f"/pile/restore/?{ENTITY}"
    undone = client.post(undo.attrs["action"], dict_of(fields), HTTP_HX_REQUEST="true")
    assert undone.status_code == 200
    assert statuses(pile) == ["live", "live", "live", "live", "retracted"]
    last = list(Decision.objects.order_by("seq").values_list("action", "lesson_hash", "reason"))[-2:]
    assert last == [("restore", pile[0], "undo: says the same"), ("restore", pile[1], "undo: says the same")]


def dict_of(fields):
    data: dict[str, list[str]] = {}
    for name, value in fields:
        data.setdefault(name, []).append(value)
    return data


def test_an_undo_reason_is_cut_to_the_reason_limit():
    offer = undo_offer(action="/x/", hashes=["h"], reason="r" * REASON_MAX, version="v", undoes=[1])
    assert len(offer["reason"]) == REASON_MAX
    assert offer["reason"] == "undo: " + "r" * (REASON_MAX - 7) + "\u2026"
