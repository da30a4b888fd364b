"""No one approves a draft they drafted or triggered, by any spelling of their name (issue 13, fault 3).

Labels are compared after NFKC, removing invisible characters and case folding, with a case-insensitive
``user:`` prefix; and the user a label named when the draft arrived is stored, so a renamed user is still
refused. The refusal names the role: DRAFT_BY_TRIGGER or DRAFT_BY_AUTHOR (the page says the same).
"""

from __future__ import annotations

import pytest

from lessons.core.principals import label_names, principal_key
from tests.security.builders import DRAFT_ID, HOST, ingest_records, pile_records

VARIANTS = [
    "user:priya",
    "user:Priya",
    "User:priya",
    "USER:PRIYA",
    "Priya",
    "priya",
    "user:ｐｒｉｙａ",
    "user：priya",
    "user:pri\u200bya",
    "\u200buser:priya\u200d",
    "user: priya ",
    "user:pri\u00adya",
    "ｕｓｅｒ：ＰＲＩＹＡ",
    "user:pri\u0443a",  # Cyrillic у
    "user:\u0440riya",  # Cyrillic р
    "user:PR\u0399YA",  # Greek capital iota
]


@pytest.mark.parametrize("label", VARIANTS)
def test_every_variant_names_priya(label):
    assert (principal_key(label), label_names(label, "priya"), label_names(label, "Priya")) == (
        "priya",
        True,
        True,
    )


@pytest.mark.parametrize(
    "label", ["llm:priya", "agent:priya", "user:", "", None, "user:priyanka", "user:priy"]
)
def test_other_labels_do_not_name_priya(label):
    assert label_names(label, "priya") is False


@pytest.fixture
def priya(db):
    from tests.conftest import make_user

    return make_user("priya", "reviewer")


def _approve(user):
    from lessons.models import Draft
    from review.services.consolidation import draft_approve

    return draft_approve(draft=Draft.objects.get(ext_id=DRAFT_ID), actor=user, reason="Reads well.")


def _refusal(user) -> str:
    from review.services.common import DecisionRefused

    with pytest.raises(DecisionRefused) as caught:
        _approve(user)
    return str(caught.value)


SELF = "priya triggered draft d-1, so another reviewer must approve it."  # DRAFT_BY_TRIGGER
SELF_DRAFTED = "priya drafted draft d-1, so another reviewer must approve it."  # DRAFT_BY_AUTHOR


@pytest.mark.parametrize("label", VARIANTS)
def test_priya_cannot_approve_a_draft_triggered_by_any_variant_of_her_name(priya, label):
    ingest_records(pile_records(triggered_by=label))
    assert _refusal(priya) == SELF


def test_priya_cannot_approve_a_draft_she_drafted_under_a_variant(priya):
    records = pile_records(triggered_by=None)
    records[-1]["drafted_by"] = "User：PRIYA"
    ingest_records(records)
    assert _refusal(priya) == SELF_DRAFTED


def test_another_reviewer_approves_it(priya, second_reviewer):
    ingest_records(pile_records(triggered_by="User:priya"))
    assert _approve(second_reviewer).action == "approve_consolidation"


def test_the_ingest_stores_the_user_each_label_names(priya):
    from lessons.models import Draft

    records = pile_records(triggered_by="user：Priya")
    ingest_records(records)
    draft = Draft.objects.get(host__name=HOST, ext_id=DRAFT_ID)
    assert (draft.drafted_by_user_id, draft.triggered_by_user_id) == (None, priya.pk)


def test_a_user_renamed_after_triggering_a_draft_still_cannot_approve_it(priya):
    ingest_records(pile_records(triggered_by="user:priya"))
    priya.username = "p.sharma"
    priya.save()
    assert _refusal(priya) == "p.sharma triggered draft d-1, so another reviewer must approve it."


def test_a_user_created_after_the_draft_arrived_is_refused_by_name(db):
    from tests.conftest import make_user

    ingest_records(pile_records(triggered_by="User:Priya"))
    assert _refusal(make_user("priya", "reviewer")) == SELF


def test_the_draft_page_tells_priya_why_she_cannot_approve(priya, client):

    ingest_records(pile_records(triggered_by="user:ｐｒｉｙａ"))
    client.force_login(priya)
    html = client.get(f"/drafts/{HOST}/{DRAFT_ID}/").content.decode()
    assert SELF in html
