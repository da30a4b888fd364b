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
