"""In a browser, 1280 and 390 px wide: an approval's evidence in the decision log opens as labelled fields
(no JSON block), the raw JSON folded beneath it and opened on demand; the page stays no wider than the
window and axe-clean. Screenshots go to artifacts/ (log-evidence-<width>.png)."""

from __future__ import annotations

import importlib
import json

import pytest

from tests.browser.test_facts import problems

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def roles(transactional_db):
    from django.apps import apps

    importlib.import_module("review.migrations.0002_roles").create_roles(apps, None)


@pytest.fixture
def approved(corpora, reviewer, second_reviewer):
    from lessons.models import Draft
    from review.services.consolidation import draft_approve

    draft = Draft.objects.get(ext_id="rec-adbuy-consolidate-1")
    return draft_approve(draft=draft, actor=second_reviewer, reason="Ten rules, one consolidation.")


@pytest.mark.parametrize("width", [1280, 390])
def test_an_approval_s_evidence_opens_as_fields_with_the_raw_json_folded(approved, sign_in, artifacts, width):
    page = sign_in("rita", "rita-pass", width=width, height=900)
    page.goto(page.url + "decisions/")
    cell = page.locator(f"#decision-{approved.seq} details.evidence")
    cell.locator("> summary").click()
    labels = cell.locator("dl.evidence > dt").all_inner_texts()
    assert labels == ["Pile then", "Gates", "Supersedes", "Members then", "Dropped anchors"]
    assert cell.locator("dl.evidence > dd").nth(1).inner_text() == "GROUND pass · VERIFY pass"
    assert cell.locator("dl.evidence > dd").nth(3).locator("li").count() == 10
    raw = cell.locator("details.evidence-raw")
    assert not raw.locator("pre").is_visible()
    cell.scroll_into_view_if_needed()
    assert problems(page) == []
    page.screenshot(path=str(artifacts / f"log-evidence-{width}.png"))
    raw.locator("summary").click()
    assert json.loads(raw.locator("pre").inner_text()) == approved.evidence
    assert problems(page) == []


@pytest.mark.parametrize("width", [1280, 390])
def test_the_action_shows_its_words_with_the_record_s_term(approved, sign_in, artifacts, width):
    page = sign_in("rita", "rita-pass", width=width, height=900)
    page.goto(page.url + "decisions/")
    cell = page.locator(f"#decision-{approved.seq} .action-name")
    assert cell.locator(".action-label").inner_text() == "approve a consolidation"
    term = cell.locator(".action-term")
    assert term.is_visible() and term.inner_text().replace("\n", "") == "approve_consolidation"
    assert problems(page) == []
    cell.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / f"log-action-{width}.png"))
    page.goto(page.url.split("/decisions/")[0] + f"/decisions/{approved.seq}/")
    assert page.locator(".page-head .action-label").inner_text() == "approve a consolidation"
    assert page.locator(".page-head .action-term").is_visible()
    assert page.locator("[data-testid=record-evidence] dl.evidence > dt").count() == 5
    assert problems(page) == []
    page.screenshot(path=str(artifacts / f"decision-page-{width}.png"), full_page=True)
