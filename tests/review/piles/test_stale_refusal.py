"""A stale-pile refusal says what changed and who changed it, and keeps the selection where the members
still exist (issue 23, newcomer item 12)."""

from __future__ import annotations

import pytest

from lessons.models import Host
from review.piles.views import STALE_DECISION, STALE_NO_DECISION, STALE_SELECTION_KEPT, STALE_SINCE
from review.services.common import STALE_PILE
from review.services.decisions import lessons_retire
from review.web.format import action_term
from tests.html import parse
from tests.review.piles.test_pile import ADBUY, ADBUY_RETIRE, adbuy_hashes

ADBUY_RESTORE = "/pile/restore/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture"


def hidden(form) -> dict[str, str]:
    """The version fields a form carries: ``pile_version`` and ``seen_seq``."""
    return {name: form.find("input", name=name).attrs["value"] for name in ("pile_version", "seen_seq")}


def loaded(client, action: str) -> dict[str, str]:
    """The version fields of the pile page's form posting to ``action``, as the page gave them."""
    forms = parse(client.get(ADBUY).content).find_all("form")
    return hidden(next(f for f in forms if action in f.attrs.get("action", "")))


def checked(page, name: str) -> list[str]:
    return [box.attrs["value"] for box in page.find_all("input", name=name) if "checked" in box.attrs]


def retire_as(user, prefixes: tuple[str, ...], reason: str) -> list:
    return lessons_retire(
        host=Host.objects.get(name="adbuy-desk"),
        namespace="desk.adbuy",
        subject="invoice_capture",
        hashes=adbuy_hashes(*prefixes),
        actor=user,
        reason=reason,
    )


def test_a_stale_retire_names_the_decisions_in_between_and_keeps_the_members_still_live(
    corpora, as_reviewer, second_reviewer
):
    seen = loaded(as_reviewer, "/pile/retire/")
    assert seen["seen_seq"] == "0"  # no decision on the entity yet
    (first,) = retire_as(second_reviewer, ("3d46cb35",), "rob's cut")
    response = as_reviewer.post(
        ADBUY_RETIRE,
        {"members": adbuy_hashes("36727f00", "3d46cb35"), "reason": "mine", **seen},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 409
    page = parse(response.content)
    named = STALE_DECISION.format(
        seq=first.seq, action=action_term("retire"), short=" 3d46cb35…", actor="rob"
    )
    assert page.find(cls="notice-error").text == (
        f"{STALE_PILE} {STALE_SINCE.format(decisions=named)} {STALE_SELECTION_KEPT}"
    )
    # 3d46cb35 is retired now: only the member still live stays selected, with the reason
    assert checked(page, "members") == adbuy_hashes("36727f00")
    assert page.find("textarea", name="reason").text == "mine"
    assert hidden(page.find("form", id="retire-form"))["seen_seq"] == str(first.seq)


def test_a_stale_pile_no_decision_changed_says_so(corpora, as_reviewer, ingest):
    seen = loaded(as_reviewer, "/pile/retire/")
    added = {
        "type": "lesson",
        "host": "adbuy-desk",
        "namespace": "desk.adbuy",
        "subject": "invoice_capture",
        "text": "A rule an ingest added meanwhile.",
        "created_at": 1767225600000,
    }
    assert ingest([added]).ok
    response = as_reviewer.post(
        ADBUY_RETIRE,
        {"members": adbuy_hashes("36727f00"), "reason": "mine", **seen},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 409
    page = parse(response.content)
    assert page.find(cls="notice-error").text == f"{STALE_PILE} {STALE_NO_DECISION} {STALE_SELECTION_KEPT}"
    assert checked(page, "members") == adbuy_hashes("36727f00")


@pytest.mark.parametrize("others", [1, 6])
def test_a_stale_restore_names_at_most_five_and_counts_the_rest(
    corpora, as_reviewer, second_reviewer, reviewer, others
):
    retire_as(reviewer, ("36727f00", "3d46cb35"), "cut two")
    seen = loaded(as_reviewer, "/pile/restore/")
    prefixes = ("353ed7f4", "cc844636", "e21f022e", "531d6e53", "e0b6ccc3", "ccefde1b")[:others]
    later = [d for p in prefixes for d in retire_as(second_reviewer, (p,), "rob again")]
    response = as_reviewer.post(
        ADBUY_RESTORE,
        {"lessons": adbuy_hashes("36727f00", "3d46cb35"), "reason": "back", **seen},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 409
    page = parse(response.content)
    named = ", ".join(
        STALE_DECISION.format(
            seq=d.seq, action=action_term("retire"), short=f" {d.lesson_hash[:8]}…", actor="rob"
        )
        for d in later[:5]
    )
    more = " and 1 more" if others == 6 else ""
    assert page.find(cls="notice-error").text == (
        f"{STALE_PILE} {STALE_SINCE.format(decisions=named + more)} {STALE_SELECTION_KEPT}"
    )
    assert sorted(checked(page, "lessons")) == sorted(adbuy_hashes("36727f00", "3d46cb35"))
