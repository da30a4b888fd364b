"""Draft ids containing "/" are opened and decided on the pages (issue 13, fault 13)."""

from __future__ import annotations

import pytest

from tests.security.builders import HOST, NS, SUBJECT, ingest_records, pile_records

SLASHED = "team/ops/d-1"


@pytest.fixture
def slashed(db):
    ingest_records(pile_records(draft_id=SLASHED))


def _version() -> str:
    from lessons.models import Host
    from lessons.selectors.piles import entity_lessons, pile_version

    host = Host.objects.get(name=HOST)
    return pile_version(list(entity_lessons(host=host, namespace=NS, subject=SUBJECT)))


def test_the_draft_page_opens_with_its_forms(slashed, client, reviewer):
    client.force_login(reviewer)
    response = client.get(f"/drafts/{HOST}/{SLASHED}/")
    html = response.content.decode()
    assert response.status_code == 200
    assert f'action="/drafts/{HOST}/{SLASHED}/approve/"' in html
    assert f'action="/drafts/{HOST}/{SLASHED}/reject/"' in html


def test_the_pile_links_to_it(slashed, client, reviewer):
    client.force_login(reviewer)
    html = client.get(f"/pile/?host={HOST}&namespace={NS}&subject={SUBJECT}").content.decode()
    assert f'href="/drafts/{HOST}/{SLASHED}/"' in html


def test_it_is_approved_from_its_page(slashed, client, reviewer):
    from lessons.models import Draft

    client.force_login(reviewer)
    data = {"approve-reason": "One rule instead of two.", "approve-pile_version": _version()}
    response = client.post(f"/drafts/{HOST}/{SLASHED}/approve/", data)
    assert response.status_code == 302
    assert Draft.objects.get(ext_id=SLASHED).status == "approved"


def test_it_is_rejected_from_its_page(slashed, client, reviewer):
    from lessons.models import Draft

    client.force_login(reviewer)
    response = client.post(f"/drafts/{HOST}/{SLASHED}/reject/", {"reject-reason": "Not needed."})
    assert response.status_code == 302
    assert Draft.objects.get(ext_id=SLASHED).status == "rejected"


# A draft id may end in an action's name: "x" and "x/approve" are two drafts. A decision is only ever
# a POST, so a GET of ".../x/approve/" is the page of draft "x/approve", a POST to it approves "x".
ENDS_IN_ACTION = [("d-2", "d-2/approve"), ("d-3", "d-3/reject"), ("d-4", "d-4/rollback")]


@pytest.fixture
def lookalikes(db):
    from tests.security.builders import draft

    records = pile_records(draft_id="d-2")
    hashes = [r["hash"] for r in records if r["type"] == "lesson"]
    for plain, ending in ENDS_IN_ACTION:
        records += [draft(supersedes=hashes[:2], draft_id=ending)]
        if plain != "d-2":
            records += [draft(supersedes=hashes[:2], draft_id=plain)]
    ingest_records(records)


@pytest.mark.parametrize(("plain", "ending"), ENDS_IN_ACTION)
def test_a_draft_whose_id_ends_in_an_action_opens_on_its_own_page(
    lookalikes, client, reviewer, plain, ending
):
    client.force_login(reviewer)
    response = client.get(f"/drafts/{HOST}/{ending}/")
    html = response.content.decode()
    assert response.status_code == 200
    assert f"<title>Draft {ending} · {HOST}" in html
    assert f'action="/drafts/{HOST}/{ending}/approve/"' in html
    # The shorter id's own address is the other draft's page.
    assert (
        f'action="/drafts/{HOST}/{plain}/approve/"' in client.get(f"/drafts/{HOST}/{plain}/").content.decode()
    )


def test_a_post_to_the_action_address_decides_the_shorter_id_and_leaves_the_lookalike(
    lookalikes, client, reviewer
):
    from lessons.models import Draft

    client.force_login(reviewer)
    response = client.post(f"/drafts/{HOST}/d-3/reject/", {"reject-reason": "Not needed."})
    assert response.status_code == 302
    assert dict(Draft.objects.filter(ext_id__startswith="d-3").values_list("ext_id", "status")) == {
        "d-3": "rejected",
        "d-3/reject": "pending",
    }
    response = client.post(f"/drafts/{HOST}/d-3/reject/reject/", {"reject-reason": "Not needed either."})
    assert response.status_code == 302
    assert Draft.objects.get(ext_id="d-3/reject").status == "rejected"


def test_a_get_of_an_action_address_with_no_such_draft_is_404(slashed, client, reviewer):
    client.force_login(reviewer)
    assert client.get(f"/drafts/{HOST}/{SLASHED}/approve/").status_code == 404
