"""Finding 1: the retire form warns that retiring a lesson a pending draft supersedes makes the draft
stale, and the success notice names the draft that became stale."""

from __future__ import annotations

import re

from review.piles.views import RETIRED_NOTICE
from tests.html import parse
from tests.review.piles.conftest import HASHES, ORDERS

RETIRE = ORDERS.replace("/pile/", "/pile/retire/")
WARNING = (
    "Retiring a lesson a pending draft supersedes makes that draft stale: it cannot be approved until the "
    f"lesson is restored. Draft d-1 supersedes {HASHES[0][:8]}, {HASHES[1][:8]}"
)
ROW_WARNING = "superseded by pending draft d-1: retiring it makes it stale"


def _flat(el) -> str:
    """An element's text without the space the test reader puts before punctuation after an element."""
    return re.sub(r" ([.,])", r"\1", el.text)


def _retire(client, hashes):
    page = parse(client.get(ORDERS).content)
    version = page.find("input", name="pile_version").attrs["value"]
    return client.post(
        RETIRE, {"members": hashes, "reason": "Said twice.", "pile_version": version}, follow=True
    )


def test_the_form_lists_the_pending_drafts_and_marks_the_members_they_supersede(drafted, as_reviewer):
    page = parse(as_reviewer.get(ORDERS).content)
    assert _flat(page.find(data_testid="stale-warning")) == WARNING
    warned = {
        h[:8]: tr.find(data_testid="draft-warn") for h in HASHES for tr in [page.find("tr", data_hash=h)]
    }
    assert {h: (w.text if w else None) for h, w in warned.items()} == {
        HASHES[0][:8]: ROW_WARNING,
        HASHES[1][:8]: ROW_WARNING,
        HASHES[2][:8]: None,
        HASHES[3][:8]: None,
    }


def test_retiring_a_superseded_member_says_which_draft_became_stale(drafted, as_reviewer):
    response = _retire(as_reviewer, [HASHES[1]])
    page = parse(response.content)
    notice = _flat(page.find(cls="notice-success").find("span"))
    assert notice == (
        "Retired 1 lesson with one reason: decision #1. Draft d-1 became stale: it supersedes a lesson "
        "retired now, and cannot be approved until the retired lessons it supersedes are restored."
    )
    # The draft is stale now: no more warning, and the table says so.
    assert page.find(data_testid="stale-warning") is None
    assert page.find("table", "drafts").find("span", "badge").text == "stale"


def test_retiring_another_member_adds_nothing_to_the_notice(drafted, as_reviewer):
    page = parse(_retire(as_reviewer, [HASHES[3]]).content)
    expected = RETIRED_NOTICE.format(n=1, s="", seqs="#1")
    assert _flat(page.find(cls="notice-success").find("span")) == expected
    assert page.find(data_testid="stale-warning") is not None


def test_a_viewer_sees_no_retire_warning(drafted, as_viewer):
    page = parse(as_viewer.get(ORDERS).content)
    assert (page.find(data_testid="stale-warning"), page.find(data_testid="draft-warn")) == (None, None)
