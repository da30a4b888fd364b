"""``?per_page=`` out of range (-1, 0, huge, not a number) gives the default page, never 500 (issue 13, fault 11)."""

from __future__ import annotations

import pytest

from tests.security.builders import HOST, build_pile, ingest_records, retire

SIZES = ["-1", "0", "999999999999999999999", "abc", "1e3", ""]


@pytest.fixture
def site(reviewer):
    hashes = build_pile()
    retire(actor=reviewer, hashes=[hashes[3]])
    return hashes


def _rows(html: str) -> int:
    """Table rows on the page, header rows of every table included (compared between pages only)."""
    return html.count("<tr")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("url", ["/", "/decisions/", f"/hosts/{HOST}/"])
def test_a_page_size_out_of_range_gives_the_default_page(client, reviewer, site, url, size):
    client.force_login(reviewer)
    assert client.get(f"{url}?per_page={size}").status_code == 200


def test_a_page_size_in_range_is_kept_and_one_out_of_range_is_the_default(client, reviewer, db):
    """Thirty decisions: per_page=10 shows 10 of them; per_page=-1 shows the default page (50: all 30)."""
    from lessons.models import Host
    from review.services.budget import host_set_budget

    client.force_login(reviewer)
    ingest_records([{"type": "host", "name": HOST, "max_active": 3, "budget_enabled": True}])
    host = Host.objects.get(name=HOST)
    from tests.conftest import make_user

    admin = make_user("adm", "admin")
    for i in range(30):
        host_set_budget(host=host, actor=admin, max_active=4 + i, budget_enabled=True, reason=f"step {i}")
    ten = client.get("/decisions/?per_page=10").content.decode()
    default = client.get("/decisions/?per_page=-1").content.decode()
    plain = client.get("/decisions/").content.decode()
    assert (_rows(plain) - _rows(ten), _rows(default)) == (20, _rows(plain))
