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
