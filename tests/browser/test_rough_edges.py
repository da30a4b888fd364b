"""In a browser: the newcomer run's rough edges that are about layout (issue 23, items 4, 6, 10 and 11).

The budget preview and the lesson's recurrence timeline at 390 px: nothing wider than the window or its
box, no text cut or too small to read, no "hover" hint on a touch screen. The draft page once approved or
rolled back: the draft text sits at the top of its column, beside the first member, wherever the window was
scrolled. Screenshots at 390 and 1280 go to artifacts/.
"""

from __future__ import annotations

import pytest

from review.templatetags.recurrence_svg import LEGEND
from tests.conftest import make_user
from tests.fixtures.browser import artifacts, browser, sign_in  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

ADBUY_DRAFT = "/drafts/adbuy-desk/rec-adbuy-consolidate-1/"

# Lines a text element takes (its client rects' distinct tops), and the <wbr> break points it holds.
LINES_AND_BREAKS = """el => {
  const range = document.createRange(); range.selectNodeContents(el);
  return [new Set([...range.getClientRects()].map(r => Math.round(r.top))).size, el.querySelectorAll('wbr').length];
}"""
# The smallest font size, in CSS pixels as drawn, of the texts of the timeline the window shows.
SMALLEST_TIMELINE_TEXT = """() => {
  const svg = [...document.querySelectorAll('svg.recurrence-timeline')].find(s => s.getBoundingClientRect().width > 0);
  const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
  return Math.min(...[...svg.querySelectorAll('text')].map(t => parseFloat(t.getAttribute('font-size')) * scale));
}"""


def page_fits(page) -> None:
    scroll, inner = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    assert scroll <= inner, f"the page is {scroll}px wide in a {inner}px window"


@pytest.mark.parametrize("width", [390, 1280])
def test_the_budget_preview_fits_the_window(corpora, admin_user, sign_in, artifacts, width):  # noqa: F811
    """Item 4: at 390 px the "Piles that disappear" column made the page 409 px wide."""
    page = sign_in("ada", "ada-pass", width=width)
    page.goto(page.url + "hosts/adbuy-desk/budget/")
    page.fill("input[name=max_active]", "12")
    page.click("button[name=preview]")
    page.wait_for_selector("[data-testid=disappear]")
    page.screenshot(path=str(artifacts / f"rough-budget-preview-{width}.png"), full_page=True)
    page_fits(page)
    box = page.evaluate(
        "(() => { const b = document.querySelector('#budget-preview'); const r = b.getBoundingClientRect();"
        " return [b.scrollWidth, b.clientWidth, r.right]; })()"
    )
    assert box[0] <= box[1], f"the preview scrolls in its box: {box}"
    link = page.locator("[data-testid=disappear] a")
    assert link.inner_text() == "entity:desk.adbuy/invoice_capture"
    right = page.evaluate("a => a.getBoundingClientRect().right", link.element_handle())
    assert right <= box[2], f"the target ends at {right}px, past the preview's edge at {box[2]}px"
    lines, breaks = link.evaluate(LINES_AND_BREAKS)
    assert lines <= breaks + 1, f"the target breaks mid-word ({lines} lines, {breaks} break points)"
    headings = page.locator(".preview-lists h3")
    assert headings.all_inner_texts() == ["Piles that appear (0)", "Piles that disappear (1)"]
    assert [h.evaluate(LINES_AND_BREAKS)[0] for h in headings.all()] == [1, 1]


@pytest.fixture
def drifted_lesson(corpora) -> str:
    """The adbuy lesson with the most on its timeline: shown in sessions, corrected, two verdicts."""
    from lessons.models import Lesson

    return Lesson.objects.get(host__name="adbuy-desk", hash__startswith="3d46cb35").hash


@pytest.mark.parametrize(("width", "drawing"), [(390, "rt-narrow"), (1280, "rt-wide")])
def test_the_lesson_timeline_fits_and_reads_at_every_width(
    drifted_lesson,
    reviewer,
    sign_in,  # noqa: F811
    artifacts,  # noqa: F811
    width,
    drawing,
):
    """Item 10: at 390 px the timeline scrolled in its box with no sign, its axis texts 9 px, its legend cut
    ("am…")."""
    page = sign_in("rita", "rita-pass", width=width)
    page.goto(page.url + f"lessons/adbuy-desk/{drifted_lesson}/")
    timeline = page.locator("[data-testid=timeline]")
    timeline.scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / f"rough-lesson-timeline-{width}.png"), full_page=True)
    page_fits(page)
    shown = page.evaluate(
        "[...document.querySelectorAll('svg.recurrence-timeline')]"
        ".filter(s => s.getBoundingClientRect().width > 0).map(s => s.classList[1])"
    )
    assert shown == [drawing]
    box = timeline.evaluate("t => [t.scrollWidth, t.clientWidth, t.getBoundingClientRect().right]")
    assert box[0] <= box[1], f"the timeline scrolls in its box: {box}"
    assert page.evaluate(SMALLEST_TIMELINE_TEXT) >= 11.5
    items = page.locator(".timeline-legend li")
    assert items.all_inner_texts() == [label for _kind, label in LEGEND]
    ends = [
        item.evaluate("li => [li.getBoundingClientRect().right, li.scrollWidth - li.clientWidth]")
        for item in items.all()
    ]
    assert all(right <= box[2] and cut == 0 for right, cut in ends), ends
    assert page.inner_text("[data-testid=timeline-hint]") == (
        "UTC; the tables below list each marker's session, time and text (or hover a marker)"
    )


def test_the_timeline_hint_offers_no_hover_on_a_touch_screen(drifted_lesson, reviewer, browser, live_server):  # noqa: F811
    """Item 10: "hover a marker" is not something a touch screen can do."""
    context = browser.new_context(viewport={"width": 390, "height": 800}, has_touch=True)
    try:
        page = context.new_page()
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", "rita")
        page.fill("input[name=password]", "rita-pass")
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")
        page.goto(f"{live_server.url}/lessons/adbuy-desk/{drifted_lesson}/")
        assert page.evaluate("matchMedia('(hover: none)').matches")
        assert page.inner_text("[data-testid=timeline-hint]") == (
            "UTC; the tables below list each marker's session, time and text"
        )
    finally:
        context.close()


# How far below the top of the first member card the draft text's panel starts, in px (page coordinates).
PANEL_DROP = """() => {
  const panel = document.querySelector('.draft-panel').getBoundingClientRect();
  const first = document.querySelector('.cov-list > *').getBoundingClientRect();
  return Math.round(panel.top - first.top);
}"""


@pytest.fixture
def dana(corpora):
    """The reviewer the adbuy drafts name as triggered_by (so rita, not dana, approves)."""
    return make_user("dana", "reviewer")


def test_the_draft_text_stays_at_the_top_once_approved_and_once_rolled_back(
    dana,
    reviewer,
    sign_in,  # noqa: F811
    artifacts,  # noqa: F811
):
    """Item 6: approved (or rolled back) from the Decide section far down the page, the draft text was
    drawn beside the last members, about 900 px below the top of its column."""
    page = sign_in("rita", "rita-pass")
    page.goto(page.url + ADBUY_DRAFT.lstrip("/"))
    page.fill("#id_approve-reason", "Ten rules restate four facts; one rule keeps them.")
    page.click("[data-testid=approve]")
    page.wait_for_selector("[data-testid=draft-status]:text-is('approved')")
    assert page.evaluate("scrollY") > 1000  # still down at Decide, where the swap left the reader
    assert page.evaluate(PANEL_DROP) == 0
    page.screenshot(path=str(artifacts / "rough-draft-approved-1280.png"), full_page=True)

    page.fill("#id_rollback-reason", "Hosts want the separate lessons back.")
    page.click("[data-testid=rollback]")
    page.wait_for_selector("[data-testid=rolled-back]")
    assert page.evaluate("scrollY") > 1000
    assert page.evaluate(PANEL_DROP) == 0
    page.screenshot(path=str(artifacts / "rough-draft-rolled-back-1280.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 800})
    page_fits(page)
    page.screenshot(path=str(artifacts / "rough-draft-rolled-back-390.png"), full_page=True)


# The character before each line break of a text element (its text nodes walked character by character).
CHARS_BEFORE_BREAKS = """el => {
  const chars = [];
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.length; i++) {
      const range = document.createRange(); range.setStart(node, i); range.setEnd(node, i + 1);
      const rect = range.getBoundingClientRect();
      if (rect.width) chars.push([node.data[i], Math.round(rect.top)]);
    }
  }
  const before = [];
  for (let i = 1; i < chars.length; i++) if (chars[i][1] > chars[i - 1][1]) before.push(chars[i - 1][0]);
  return before;
}"""


@pytest.mark.parametrize("width", [390, 1280])
def test_the_pile_header_breaks_the_entity_at_its_separators(corpora, reviewer, sign_in, artifacts, width):  # noqa: F811
    """Item 11: at 390 px the header read "invoice_cap / ture"; it breaks after "entity:" or the last "/"
    only, and in one line where the line is wide enough."""
    page = sign_in("rita", "rita-pass", width=width)
    page.goto(page.url + "pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture")
    heading = page.locator("h1.target")
    assert heading.inner_text() == "entity:desk.adbuy/invoice_capture"
    page.screenshot(path=str(artifacts / f"rough-pile-header-{width}.png"))
    page_fits(page)
    before_breaks = heading.evaluate(CHARS_BEFORE_BREAKS)
    assert before_breaks == (["/"] if width == 390 else [])


def test_a_members_recurrence_starts_level_with_its_other_cells(corpora, reviewer, sign_in):  # noqa: F811
    """Newcomer run of 2026-12-04: a member with counts but no "recurring" badge began its recurrence cell
    with the paragraph's browser margin, 12 px below the row's other cells (36727f00 of the adbuy pile)."""
    page = sign_in("rita", "rita-pass", width=1280)
    page.goto(page.url + "pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture")
    offsets = page.evaluate(
        """[...document.querySelectorAll('tr[data-hash]')].map(tr => {
          const first = tr.querySelector('.recurrence').querySelector('.badge, .shown-in, .no-correction');
          const top = e => e.getBoundingClientRect().top;
          return [tr.dataset.hash.slice(0, 8), first.className, Math.round(top(first) - top(tr.querySelector('time')))];
        })"""
    )
    kinds = {kind for _hash, kind, _offset in offsets}
    assert kinds == {"badge recurring", "shown-in small", "no-correction"}  # each way a cell starts
    assert {offset for _hash, _kind, offset in offsets} == {offsets[0][2]}, offsets
