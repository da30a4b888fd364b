"""Finding 6: the queue is worst first (overage desc, count desc, then host, namespace, subject), and a
"Drafts pending" count links to the pile's drafts section."""

from __future__ import annotations

from tests.builders import day_ms, lesson
from tests.html import parse


def _pile(host: str, subject: str, n: int, max_active: int) -> list[dict]:
    texts = [f"Rule {i} of {subject}: spell field{i} exactly." for i in range(n)]
    return [
        lesson(host=host, namespace="ns", subject=subject, text=t, created_at=day_ms(i), origin="llm")
        for i, t in enumerate(texts)
    ] + ([{"type": "host", "name": host, "max_active": max_active, "budget_enabled": True}])


def _entities(response) -> list[str]:
    table = parse(response.content).find("table", "queue-table")
    return [
        f"{tr.find_all('td')[0].text} {tr.find('td', 'target').text}"
        for tr in table.find("tbody").find_all("tr")
    ]


def test_the_default_order_is_worst_first_with_ties_by_host_namespace_subject(ingest, as_viewer):
    records = _pile("h-b", "beta", 4, 1) + _pile("h-a", "alpha", 5, 2)  # both over by 3; alpha has 5
    records += [r for r in _pile("h-a", "gamma", 4, 2) if r["type"] == "lesson"]  # over by 2
    records += [r for r in _pile("h-a", "delta", 4, 2) if r["type"] == "lesson"]  # over by 2, same count
    records += _pile("h-c", "zeta", 3, 2)  # over by 1
    assert ingest(records).ok
    assert _entities(as_viewer.get("/")) == [
        "h-a entity:ns/alpha",
        "h-b entity:ns/beta",
        "h-a entity:ns/delta",
        "h-a entity:ns/gamma",
        "h-c entity:ns/zeta",
    ]
    # "Over", most first, is the default order itself, ties included (not host, entity reversed).
    assert _entities(as_viewer.get("/?sort=-overage")) == _entities(as_viewer.get("/"))
    assert _entities(as_viewer.get("/?sort=overage")) == [
        "h-c entity:ns/zeta",
        "h-a entity:ns/delta",
        "h-a entity:ns/gamma",
        "h-a entity:ns/alpha",
        "h-b entity:ns/beta",
    ]
    # A chosen sort still wins over the default.
    assert _entities(as_viewer.get("/?sort=host_name"))[0] == "h-a entity:ns/alpha"
    assert _entities(as_viewer.get("/?sort=-host_name"))[0] == "h-c entity:ns/zeta"


def test_the_drafts_pending_count_links_to_the_drafts_section(corpora, as_viewer):
    page = parse(as_viewer.get("/").content)
    cells = [
        td
        for td in page.find("table", "queue-table").find_all("td")
        if td.find("a") and "#drafts" in td.find("a").attrs["href"]
    ]
    (cell,) = cells
    link = cell.find("a")
    assert (link.text, link.attrs["aria-label"]) == ("2", "2 pending drafts on invoice_capture")
    assert link.attrs["href"] == "/pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture#drafts"
    pile = parse(as_viewer.get(link.attrs["href"].split("#")[0]).content)
    assert pile.find("h2", id="drafts").text == "Drafts on this entity"
