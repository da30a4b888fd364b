"""In a browser at 1280, 1024 and 390 (stacked rows): the decision log fits the window with realistic decisions (retire,
restore, approve, roll back, budget), its table does not scroll in its box, no column is crushed and the
targets break only at their "<wbr>" points. Screenshots go to artifacts/."""

from __future__ import annotations

import pytest

from tests.fixtures.browser import artifacts, browser, sign_in  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def decided(corpora, reviewer, second_reviewer, admin_user):
    from lessons.models import Draft, Host, Lesson
    from review.roles import roles_ensure
    from review.services.budget import host_set_budget
    from review.services.consolidation import consolidation_rollback, draft_approve
    from review.services.decisions import lesson_restore, lessons_retire

    roles_ensure()
    adbuy = Host.objects.get(name="adbuy-desk")
    lesson = Lesson.objects.get(hash__startswith="3d46cb35")
    lessons_retire(
        host=adbuy, hashes=[lesson.hash], actor=reviewer, reason="Drifted twice.", reason_code="drifted"
    )
    lesson.refresh_from_db()
    lesson_restore(lesson=lesson, actor=reviewer, reason="It drifted back after the fix.")
    draft = Draft.objects.get(ext_id="rec-adbuy-consolidate-1")
    draft_approve(
        draft=draft, actor=second_reviewer, reason="Ten overlapping rules; the draft keeps every anchor."
    )
    draft.refresh_from_db()
    consolidation_rollback(
        draft=draft, actor=reviewer, reason="Hosts want the separate lessons.", reason_code="restates_another"
    )
    host_set_budget(host=adbuy, actor=admin_user, max_active=12, budget_enabled=True, reason="Room for now.")


@pytest.mark.parametrize("width", [1280, 1024, 390])
def test_the_decision_log_fits_the_window(decided, sign_in, artifacts, width):  # noqa: F811
    page = sign_in("rita", "rita-pass", width=width)
    page.goto(page.url.rstrip("/") + "/decisions/")
    page.wait_for_selector("tr[data-seq]")
    page.screenshot(path=str(artifacts / f"polish-decisions-{width}.png"), full_page=True)
    assert page.locator("tr[data-seq]").count() == 5
    widths = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert widths[0] == widths[1], f"the log is {widths[0]}px wide in a {widths[1]}px window"
    box = page.evaluate(
        "(() => { const b = document.querySelector('#decision-log .table-container');"
        " return [b.scrollWidth, b.clientWidth]; })()"
    )
    assert box[0] <= box[1], f"the table scrolls in its box: {box}"
    acted_on = page.evaluate(
        "Math.min(...[...document.querySelectorAll('table.decision-log tbody td:nth-child(6)')]"
        ".map(td => td.getBoundingClientRect().width))"
    )
    assert acted_on >= 130, f"the Acted on column is crushed to {acted_on}px"
    lines = page.evaluate(
        "[...document.querySelectorAll('table.decision-log .target-part > a')]"
        ".map(a => [a.textContent, new Set([...a.getClientRects()].map(r => Math.round(r.top))).size,"
        " a.querySelectorAll('wbr').length])"
    )
    # Every target link the log shows, in page order (so the loop below cannot pass on an empty list).
    assert [text for text, _boxes, _breaks in lines] == [
        "entity:desk.adbuy/invoice_capture",
        "entity:desk.adbuy/invoice_capture",
        "60695071\u2026",
        "entity:desk.adbuy/invoice_capture",
        "3d46cb35\u2026",
        "entity:desk.adbuy/invoice_capture",
        "3d46cb35\u2026",
    ]
    for text, boxes, breaks in lines:
        assert boxes <= breaks + 1, f"{text!r} breaks mid-word ({boxes} lines, {breaks} break points)"
