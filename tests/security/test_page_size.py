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


@pytest.fixture
def thirty_decisions(db):
    """Thirty budget decisions on ``HOST``."""
    from lessons.models import Host
    from review.services.budget import host_set_budget
    from tests.conftest import make_user

    ingest_records([{"type": "host", "name": HOST, "max_active": 3, "budget_enabled": True}])
    host = Host.objects.get(name=HOST)
    admin = make_user("adm", "admin")
    for i in range(30):
        host_set_budget(host=host, actor=admin, max_active=4 + i, budget_enabled=True, reason=f"step {i}")


def test_a_page_size_in_range_is_kept_and_one_out_of_range_is_the_default(client, reviewer, thirty_decisions):
    """Thirty decisions: per_page=10 shows 10 of them; per_page=-1 shows the default page (50: all 30)."""
    client.force_login(reviewer)
    ten = client.get("/decisions/?per_page=10").content.decode()
    default = client.get("/decisions/?per_page=-1").content.decode()
    plain = client.get("/decisions/").content.decode()
    assert (_rows(plain) - _rows(ten), _rows(default)) == (20, _rows(plain))


PAGES = ["99999999999999999999", "9223372036854775807", "922337203685477581", "4"]


@pytest.mark.parametrize("page", PAGES)
def test_a_page_number_past_the_last_shows_the_last_page_of_the_log(client, reviewer, thirty_decisions, page):
    """Thirty decisions, ten a page: any page past the third shows the third (a number past what an
    OFFSET can hold was a 500)."""
    client.force_login(reviewer)
    response = client.get(f"/decisions/?per_page=10&page={page}")
    assert response.status_code == 200
    assert '<span class="page-info">Page 3 of 3 · 30 rows</span>' in response.content.decode()
