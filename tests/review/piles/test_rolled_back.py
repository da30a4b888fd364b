"""Finding 2: after a rollback the pile's drafts table says "rolled back" (from the rollback decision),
and that such a draft cannot be approved again."""

from __future__ import annotations

from lessons.models import Draft
from review.services.consolidation import consolidation_rollback, draft_approve
from tests.html import parse
from tests.review.piles.conftest import ORDERS

NOTE = (
    "its consolidation was retracted and the members are live again; only a pending draft can be "
    "approved, so this one cannot be approved again"
)


def _status_cell(client):
    row = parse(client.get(ORDERS).content).find("table", "drafts").find("tbody").find("tr")
    return row.find_all("td")[1]


def test_an_approved_draft_reads_approved_then_rolled_back_after_the_rollback(
    drafted, as_reviewer, reviewer, django_assert_max_num_queries
):
    draft = Draft.objects.get()
    draft_approve(draft=draft, actor=reviewer, reason="One rule instead of two.")
    cell = _status_cell(as_reviewer)
    assert (cell.find("span", "badge").text, cell.find(data_testid="rolled-back-note")) == ("approved", None)
    consolidation_rollback(draft=draft, actor=reviewer, reason="Back to the two rules.")
    cell = _status_cell(as_reviewer)
    badge = cell.find("span", "badge")
    assert (badge.text, badge.classes) == ("rolled back", {"badge", "d-rolled_back"})
    assert cell.find(data_testid="rolled-back-note").text == NOTE
    with django_assert_max_num_queries(11):  # the pile page's budget (tests/review/piles/test_pile.py)
        as_reviewer.get(ORDERS)


def test_a_pending_draft_is_not_rolled_back(drafted, as_reviewer):
    assert _status_cell(as_reviewer).find("span", "badge").text == "pending"
