"""The queue pages by keyset (issue 10, item 2): "next" and "previous" carry a cursor, the page query has no
OFFSET whatever the page, every sort walks the same rows forwards and backwards, and the text filter goes
through the database's trigram index. spec: docs/piles-and-recurrence.md, rules 2-4.
"""

from __future__ import annotations

import base64

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lessons.models import EntityCount
from lessons.selectors.piles import pile_queue
from review.services.decisions import lessons_retire
from tests.html import parse, table_rows


@pytest.fixture
def signed_in(as_viewer):
    return as_viewer


@pytest.fixture
def many_piles(entity):
    """30 piles on three hosts, over budget by 1 to 5 (ties on purpose), each entity its own subject."""
    for i in range(30):
        entity(3 + i % 5, host=f"h{i % 3}", subject=f"s{i:02d}", max_active=2)


def walk(client, url: str) -> tuple[list[list[str]], list[str]]:
    """Every row from ``url`` on, following the "next" links; and the hrefs followed."""
    rows, hrefs = [], []
    while url:
        page = parse(client.get(url).content)
        rows += [r[:2] for r in table_rows(page, "queue-table")]
        link = page.find("a", rel="next")
        url = "/" + link.attrs["href"] if link else None
        if url:
            hrefs.append(url)
    return rows, hrefs


def expected(order: tuple[str, ...]) -> list[list[str]]:
    rows = EntityCount.objects.filter(over_budget=True).order_by(*order)
    return [[r.host_name, f"entity:{r.namespace}/{r.subject}"] for r in rows]


@pytest.mark.parametrize(
    ("sort", "order"),
    [
        ("", ("-overage", "-live", "host_name", "namespace", "subject")),
        ("-overage", ("-overage", "-live", "host_name", "namespace", "subject")),
        ("-count", ("-live", "-host_name", "-namespace", "-subject")),
        ("host_name", ("host_name", "namespace", "subject")),
        ("-oldest", ("-oldest", "-host_name", "-namespace", "-subject")),
    ],
)
def test_next_links_walk_every_pile_once_in_the_sort_order(many_piles, signed_in, sort, order):
    rows, hrefs = walk(signed_in, f"/?per_page=7&sort={sort}" if sort else "/?per_page=7")
    assert rows == expected(order)
    assert len(hrefs) == 4 and all("after=" in h and "per_page=7" in h for h in hrefs)
    assert [h.split("page=")[-1] for h in hrefs] == ["2", "3", "4", "5"]


def test_previous_links_walk_back_to_the_first_page(many_piles, signed_in):
    _rows, hrefs = walk(signed_in, "/?per_page=7")
    page = parse(signed_in.get(hrefs[-1]).content)  # page 5 of 5: rows 29-30
    assert page.find(cls="page-info").text == "Page 5 of 5 · 30 rows"
    back = []
    while (link := page.find("a", rel="prev")) is not None:
        page = parse(signed_in.get("/" + link.attrs["href"]).content)
        back.append((page.find(cls="page-info").text, [r[:2] for r in table_rows(page, "queue-table")]))
    order = expected(("-overage", "-live", "host_name", "namespace", "subject"))
    assert [info for info, _rows in back] == [f"Page {n} of 5 · 30 rows" for n in (4, 3, 2, 1)]
    assert [rows for _info, rows in back] == [order[21:28], order[14:21], order[7:14], order[0:7]]


def test_a_deep_page_reads_by_cursor_without_an_offset(many_piles, signed_in):
    _rows, hrefs = walk(signed_in, "/?per_page=2")
    with CaptureQueriesContext(connection) as queries:
        response = signed_in.get(hrefs[-1])
    assert parse(response.content).find(cls="page-info").text == "Page 15 of 15 · 30 rows"
    pages = [q["sql"] for q in queries if "lessons_entitycount" in q["sql"] and "LIMIT" in q["sql"]]
    assert len(pages) == 1 and "OFFSET" not in pages[0]


def test_a_cursor_that_is_not_ours_reads_as_the_first_page(many_piles, signed_in):
    first = table_rows(parse(signed_in.get("/").content), "queue-table")
    for junk in ("zzz", "W10", "WyJhIl0", "eyJ0IjoxfQ"):
        assert table_rows(parse(signed_in.get(f"/?after={junk}").content), "queue-table") == first


# Cursors of the right shape whose values no database column can hold: JSON's Infinity for a count, a
# time past year 9999 (or before year 1) once in UTC, a lone surrogate, a NUL (PostgreSQL refuses it).
FORGED = {
    "count": ['[Infinity,"h0","qa","s00"]', '[-Infinity,"h0","qa","s00"]'],
    "oldest": [
        '[{"t":"9999-12-31T23:59:59-14:00"},"h0","qa","s00"]',
        '[{"t":"0001-01-01T00:00:00+14:00"},"h0","qa","s00"]',
    ],
    "host_name": ['["\\ud800","qa","s00"]', '["h\\u0000","qa","s00"]'],
}


@pytest.mark.parametrize("sort", list(FORGED))
@pytest.mark.parametrize("direction", ["after", "before"])
def test_a_cursor_with_values_no_column_holds_reads_as_the_first_page(many_piles, signed_in, sort, direction):
    """Each was a 500 (OverflowError, UnicodeEncodeError, PostgreSQL's NUL refusal) instead of the first
    page a cursor that is not ours gives."""
    first = table_rows(parse(signed_in.get(f"/?sort={sort}").content), "queue-table")
    for raw in FORGED[sort]:
        token = base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")
        response = signed_in.get(f"/?sort={sort}&{direction}={token}")
        assert response.status_code == 200, raw
        assert table_rows(parse(response.content), "queue-table") == first, raw


def test_a_new_sort_drops_the_cursor(many_piles, signed_in):
    _rows, hrefs = walk(signed_in, "/?per_page=7")
    page = parse(signed_in.get(hrefs[0]).content)
    link = page.find("a", cls="sort", href="?per_page=7&sort=-count")
    assert link is not None


# --- the text filter --------------------------------------------------------------------------------


def subjects(**filters) -> list[str]:
    return [row["subject"] for row in pile_queue(**filters)]


def test_the_text_filter_finds_a_members_text_case_insensitively(entity):
    entity(3, subject="orders", texts=["Ship the ORDERS on Monday.", "Count twice.", "Bill once."])
    entity(3, subject="refunds", texts=["Refund in cents.", "Count twice.", "Bill once."])
    assert subjects(text="orders on mon") == ["orders"]
    assert subjects(text="REFUND IN") == ["refunds"]
    assert subjects(text="count twice") == ["orders", "refunds"]
    assert subjects(text="qa-host") == ["orders", "refunds"]  # the host's name is in the document
    assert subjects(text="no such words") == []


def test_quotes_and_like_wildcards_in_the_text_are_plain_characters(entity):
    entity(3, subject="orders", texts=['Say "100%" only when it_is.', "Count twice.", "Bill once."])
    assert subjects(text='"100%"') == ["orders"]
    assert subjects(text="it_is") == ["orders"]
    assert subjects(text="it%is") == []
    assert subjects(text='"""') == []


def test_texts_shorter_than_a_trigram_fall_back_to_like_over_the_piles(entity):
    entity(3, subject="orders", texts=["Ship by UPS.", "Count twice.", "Bill once."])
    entity(3, subject="refunds", texts=["Refund in cents.", "Count twice.", "Bill once."])
    assert subjects(text="up") == ["orders"]
    assert subjects(text="t") == ["orders", "refunds"]


def test_a_retired_members_text_and_an_entity_within_budget_match_nothing(entity, reviewer):
    hashes = entity(3, subject="orders", texts=["Ship by courier.", "Count twice.", "Bill once."])
    entity(2, subject="refunds", texts=["Ship by courier too.", "Count twice."])  # at its budget of 2
    assert subjects(text="courier") == ["orders"]
    lessons_retire(
        host=EntityCount.objects.get(subject="orders").host, hashes=hashes[:1], actor=reviewer, reason="x"
    )
    assert subjects(text="courier") == []  # retired, and the pile is within budget now
    assert EntityCount.objects.get(subject="orders").document == ""


def test_a_filtered_total_is_counted_up_to_the_cap_then_said_so(many_piles, signed_in, monkeypatch):
    """Issue 25: the text filter's count reads at most COUNT_CAP + 1 rows; past it the page says "more
    than N" and the pages still run on by their cursors, numbered as the links carry them."""
    import review.piles.selectors as selectors

    monkeypatch.setattr(selectors, "COUNT_CAP", 12)
    url = "/?namespace=qa&per_page=5"  # every pile matches: a filter, so the total is counted
    with CaptureQueriesContext(connection) as queries:
        page = parse(signed_in.get(url).content)
    assert page.find(cls="page-info").text == "Page 1 · more than 12 rows"
    (count,) = [q["sql"] for q in queries if "COUNT(" in q["sql"].upper()]
    assert "LIMIT 13" in count
    rows, hrefs = walk(signed_in, url)
    assert len(rows) == 30 and len(hrefs) == 5  # six pages, walked to the end past the cap
    last = parse(signed_in.get(hrefs[-1]).content)
    assert last.find(cls="page-info").text == "Page 6 · more than 12 rows"
    monkeypatch.setattr(selectors, "COUNT_CAP", 30)
    page = parse(signed_in.get(url).content)
    assert page.find(cls="page-info").text == "Page 1 of 6 · 30 rows"  # at the cap: exact
