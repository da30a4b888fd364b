"""Every id a page points at exists on that page: ``aria-describedby``, ``aria-labelledby``,
``aria-controls`` and ``<label for>`` (found by a newcomer: the budget and upload forms' help texts were
never announced, their fields naming ``…_helptext`` ids the templates spelled otherwise)."""

from __future__ import annotations

import pytest

from tests.html import parse

REFERENCES = ("aria-describedby", "aria-labelledby", "aria-controls", "for")
PAGES = [
    "/",
    "/pile/?host=qa-host&namespace=qa&subject=orders",
    "/hosts/",
    "/hosts/qa-host/",
    "/hosts/qa-host/budget/",
    "/hosts/qa-host/unmatched-topics/",
    "/decisions/",
    "/imports/altimate/",
]


def dangling(html: bytes) -> list[str]:
    page = parse(html)
    ids = {el.attrs["id"] for el in page.iter() if "id" in el.attrs}
    missing = []
    for el in page.iter():
        for name in REFERENCES:
            for ref in (el.attrs.get(name) or "").split():
                if ref not in ids:
                    missing.append(f"<{el.tag} {name}={ref!r}>")
    return missing


@pytest.mark.parametrize("url", PAGES)
def test_every_referenced_id_is_on_the_page(entity, client, admin_user, url):
    hashes = entity(4)
    client.force_login(admin_user)
    for page in (url, f"/lessons/qa-host/{hashes[0]}/"):
        response = client.get(page)
        assert response.status_code == 200, page
        assert dangling(response.content) == [], page


def test_the_budget_form_describes_its_fields_by_their_help(entity, client, admin_user):
    entity(1)
    client.force_login(admin_user)
    page = parse(client.get("/hosts/qa-host/budget/").content)
    field = page.find("input", id="id_max_active")
    help_text = page.find(id=field.attrs["aria-describedby"])
    assert help_text is not None and "help" in help_text.classes
