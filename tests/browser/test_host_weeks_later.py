"""In a browser, 1280 and 390 px wide: on the demo's adbuy-desk, whose sessions are from early 2026, a
retire made now still shows on the host page's chart beside the weeks of data: the bars of the sessions,
a break in the axis, then the decision's mark at the right end. Axe-clean, no wider than the window;
screenshots go to artifacts/ (host-weeks-later-<width>.png)."""

from __future__ import annotations

import importlib

import pytest

from tests.browser.test_facts import problems

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def roles(transactional_db):
    from django.apps import apps

    importlib.import_module("review.migrations.0002_roles").create_roles(apps, None)


@pytest.fixture
def retired_now(corpora, reviewer):
    from lessons.models import Host, Lesson
    from review.services.decisions import lessons_retire

    lesson = Lesson.objects.get(host__name="adbuy-desk", hash__startswith="3d46cb35")
    (decision,) = lessons_retire(
        host=Host.objects.get(name="adbuy-desk"), hashes=[lesson.hash], actor=reviewer, reason="Drifted."
    )
    return decision


@pytest.mark.parametrize("width", [1280, 390])
def test_a_decision_made_now_shows_after_the_weeks_of_data(retired_now, sign_in, artifacts, width):
    page = sign_in("rita", "rita-pass", width=width, height=900)
    page.goto(page.url + "hosts/adbuy-desk/")
    figure = page.locator(".host-weeks-figure")
    figure.scroll_into_view_if_needed()
    assert page.locator("svg.host-weeks rect.bar").count() > 0
    mark = page.locator("svg.host-weeks rect.decided.later")
    assert mark.count() == 1
    svg_box, mark_box = page.locator("svg.host-weeks").bounding_box(), mark.bounding_box()
    assert (
        mark_box["width"] > 0 and mark_box["x"] + mark_box["width"] <= svg_box["x"] + svg_box["width"] + 0.5
    )
    assert "1 decision made after the host's newest session" in page.inner_text("[data-testid=weeks-later]")
    assert problems(page) == []
    figure.screenshot(path=str(artifacts / f"host-weeks-later-{width}.png"))
