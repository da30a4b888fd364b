"""Every page names a decision's action by its words ("approve a consolidation") with the record's term
beside them as small code text (``approve_consolidation``: what the exports, the API and hosts read)."""

from __future__ import annotations

import pytest

from review.models import Action
from review.web.format import ACTION_LABELS, action_html, action_label, action_term
from tests.html import inline_text, parse


def test_each_action_has_its_words():
    assert {a: action_label(a) for a in Action.values} == {
        "retire": "retire a lesson",
        "restore": "restore a lesson",
        "approve_consolidation": "approve a consolidation",
        "reject_consolidation": "reject a draft",
        "rollback_consolidation": "roll back a consolidation",
        "set_budget": "change the budget",
    }
    assert set(ACTION_LABELS) == set(Action.values)
    assert action_label("merge<x>") == "merge<x>"  # a value the list does not know: as it is


def test_the_term_stays_as_small_code_breakable_after_its_underscores():
    assert action_html("approve_consolidation") == (
        '<span class="action-name"><span class="action-label">approve a consolidation</span>'
        ' <code class="action-term">approve_<wbr>consolidation</code></span>'
    )
    assert action_html("a<b>_c") == (
        '<span class="action-name"><span class="action-label">a&lt;b&gt;_c</span>'
        ' <code class="action-term">a&lt;b&gt;_<wbr>c</code></span>'
    )
    assert action_term("set_budget") == "change the budget (set_budget)"
    assert action_term("odd") == "odd"


@pytest.fixture
def approved(corpora, second_reviewer):
    from lessons.models import Draft
    from review.services.consolidation import draft_approve

    draft = Draft.objects.get(ext_id="rec-adbuy-consolidate-1")
    return draft_approve(draft=draft, actor=second_reviewer, reason="Ten rules, one consolidation.")


def test_the_log_and_the_decision_page_show_the_words_and_the_term(approved, as_viewer):
    log = parse(as_viewer.get("/decisions/").content)
    cell = log.find("tr", id=f"decision-{approved.seq}").find("span", "action-name")
    assert inline_text(cell.find("span", "action-label")) == "approve a consolidation"
    assert inline_text(cell.find("code", "action-term")) == "approve_consolidation"
    options = [inline_text(o) for o in log.find("select", name="action").find_all("option")]
    assert options == [
        "every action",
        "retire a lesson (retire)",
        "restore a lesson (restore)",
        "approve a consolidation (approve_consolidation)",
        "reject a draft (reject_consolidation)",
        "roll back a consolidation (rollback_consolidation)",
        "change the budget (set_budget)",
    ]
    page = parse(as_viewer.get(f"/decisions/{approved.seq}/").content)
    head = page.find("div", "page-head").find("p")
    assert inline_text(head).startswith("approve a consolidation approve_consolidation on adbuy-desk by rob,")
    assert head.find("code", "action-term") is not None
