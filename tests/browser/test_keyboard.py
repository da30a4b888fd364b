"""Keyboard-only triage in a real browser (static/js/keyboard.js), with every key press counted.

Issue 12's target: from the queue's load to two members of one restatement group retired with a reason in
at most 15 key presses (typing the reason counts as one). The flows below assert the exact count they need.
Also: focus stays on the acted-on control after every htmx swap (sort, filter, retire), the skip link comes
first, "?" opens the list and Esc closes it, no shortcut fires while typing, and only the notice is read out.
Keys and figures: docs/reviewing.md ("Keyboard").
"""

from __future__ import annotations

import importlib

import pytest

from tests import builders as b
from tests.fixtures.browser import browser, sign_in, wait_until  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HOST = "kb-desk"
TEXTS = (
    "Copy the `claim_id` from the first notice of loss exactly as issued.",
    "Copy the `claim_id` from the first notice of loss exactly as it was issued.",
    "Copy the `claim_id` from the first notice of loss, exactly as issued, never retyped.",
    "Record the date of loss as YYYY-MM-DD from the claimant statement.",
)
REASON = "Three rules say one thing; the newest stays."
ANNOUNCED = "document.getElementById('announcer').textContent"  # what the live region says


class Keys:
    """Presses keys on a page and counts them: ``type`` of a whole text is one press (the issue's rule)."""

    def __init__(self, page):
        self.page = page
        self.count = 0

    def press(self, key: str) -> None:
        self.page.keyboard.press(key)
        self.count += 1

    def type(self, text: str) -> None:
        self.page.keyboard.type(text)
        self.count += 1


@pytest.fixture(autouse=True)
def roles(transactional_db):
    from django.apps import apps

    importlib.import_module("review.migrations.0002_roles").create_roles(apps, None)


@pytest.fixture
def group_pile(ingest):
    """One pile on kb-desk (4 live lessons, budget 2) whose three oldest members restate one another."""
    records = [b.host(name=HOST, max_active=2, budget_enabled=True)]
    records += [
        b.lesson(
            host=HOST, namespace="kb", subject="intake", text=text, created_at=b.day_ms(i + 1), origin="llm"
        )
        for i, text in enumerate(TEXTS)
    ]
    report = ingest(records)
    assert report.ok, report.error_lines()
    from lessons.models import Lesson

    return [Lesson.objects.get(host__name=HOST, text=text).hash for text in TEXTS]


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    """WCAG 2 contrast ratio of two sRGB colours (0..255 each)."""

    def luminance(rgb):
        c = [x / 255 for x in rgb]
        c = [x / 12.92 if x <= 0.03928 else ((x + 0.055) / 1.055) ** 2.4 for x in c]
        return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2]

    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def active(page, js: str = "el => el"):
    return page.evaluate(f"({js})(document.activeElement)")


def settled(page, js: str, expected):
    """``js`` of the focused element once it equals ``expected`` (``wait_until``: up to 5 s): after an htmx
    swap, keyboard.js moves focus on ``htmx:afterSettle``, a moment after the new content is in the page.
    If it never does, the value it has (so the assertion shows what was focused)."""
    return wait_until(page, f"({js})(document.activeElement)", expected)


def test_queue_to_two_members_of_a_group_retired_takes_seven_key_presses(group_pile, reviewer, sign_in):  # noqa: F811
    from review.models import Decision

    first, second, kept, other = group_pile
    page = sign_in("rita", "rita-pass")
    keys = Keys(page)

    keys.press("j")  # the first pile's link
    assert settled(page, "el => el.textContent", "entity:kb/intake") == "entity:kb/intake"
    keys.press("Enter")
    page.wait_for_url("**/pile/?host=kb-desk*")
    keys.press("j")  # the first member: the oldest of the group
    assert settled(page, "el => el.value", first) == first
    keys.press("o")  # keep one of this group: the newest is kept, the other two selected
    count = "document.querySelector('[data-selected-count]').textContent"
    assert wait_until(page, count, "2 of 4 selected") == "2 of 4 selected"
    checked = page.eval_on_selector_all("input[name=members]:checked", "els => els.map(e => e.value)")
    assert checked == [first, second]
    assert page.inner_text("[data-retire-label]") == "Retire 2 lessons"
    assert page.inner_text("[data-retire-preview]") == "After the retire: 4 \u2192 2 of 2 (within budget)"
    keys.press("r")
    assert settled(page, "el => el.name", "reason") == "reason"
    keys.type(REASON)
    keys.press("Control+Enter")
    page.wait_for_selector(".notice-success")

    assert keys.count == 7
    decisions = list(Decision.objects.order_by("seq").values_list("action", "lesson_hash", "actor", "reason"))
    assert decisions == [("retire", first, "rita", REASON), ("retire", second, "rita", REASON)]
    # focus is on the row that took the acted-on row's place, not on <body>
    assert settled(page, "el => el.value", kept) == kept
    notice = page.inner_text(".notice-success span")
    assert wait_until(page, ANNOUNCED, notice) == notice
    assert page.get_attribute("#pile", "aria-live") is None


def test_draft_to_approved_takes_three_key_presses(corpora, reviewer, sign_in):  # noqa: F811
    from review.models import Decision

    page = sign_in("rita", "rita-pass")
    page.goto(page.url + "drafts/adbuy-desk/rec-adbuy-consolidate-1/")
    keys = Keys(page)
    keys.press("r")  # the approve form's reason, the first on the page
    assert settled(page, "el => el.id", "id_approve-reason") == "id_approve-reason"
    keys.type("Ten rules restate five fields; one rule keeps them.")
    keys.press("Control+Enter")
    page.wait_for_selector("[data-testid=draft-status]:text-is('approved')")

    assert keys.count == 3
    assert list(Decision.objects.values_list("action", "actor")) == [("approve_consolidation", "rita")]
    assert (
        settled(page, "el => el.className", "notice notice-success") == "notice notice-success"
    )  # the notice, not <body>


def test_sort_and_filter_swaps_keep_focus_and_typing_fires_no_shortcut(corpora, reviewer, sign_in):  # noqa: F811
    page = sign_in("rita", "rita-pass")
    page.focus("#queue th a.sort:text-is('Host')")
    page.keyboard.press("Enter")  # sort by host: htmx swaps the whole queue region
    page.wait_for_url("**/?sort=host_name")
    page.wait_for_selector("#queue th[aria-sort]")
    assert page.inner_text("#queue th[aria-sort] a") == "Host▲"
    sorted_by = ["Host▲", "ascending"]
    assert (
        settled(page, "el => [el.textContent, el.closest('th').getAttribute('aria-sort')]", sorted_by)
        == sorted_by
    )

    page.keyboard.press("/")
    assert settled(page, "el => el.id", "id_q") == "id_q"
    page.keyboard.type("jk")  # j and k are text here, not row moves
    assert page.input_value("#id_q") == "jk"
    page.keyboard.press("Control+a")
    page.keyboard.type("invoice")
    page.keyboard.press("Enter")
    page.wait_for_url("**q=invoice*")
    assert wait_until(page, "document.querySelectorAll('#queue tbody tr[data-row]').length", 1) == 1
    assert settled(page, "el => [el.id, el.value]", ["id_q", "invoice"]) == ["id_q", "invoice"]


def test_skip_link_comes_first_and_the_shortcut_list_opens_and_closes(corpora, reviewer, sign_in):  # noqa: F811
    page = sign_in("rita", "rita-pass")
    page.keyboard.press("Tab")
    assert settled(page, "el => el.textContent", "Skip to content") == "Skip to content"
    ring = active(
        page,
        "el => [getComputedStyle(el).outlineStyle, getComputedStyle(el).outlineWidth, "
        "getComputedStyle(el).outlineColor, getComputedStyle(document.body).backgroundColor]",
    )
    assert ring == ["solid", "3px", "rgb(29, 78, 216)", "rgb(246, 246, 243)"]
    assert round(contrast((29, 78, 216), (246, 246, 243)), 2) == 6.19  # at least 3:1 (docs/reviewing.md)
    page.keyboard.press("Enter")
    assert settled(page, "el => el.id", "content") == "content"

    page.keyboard.press("?")
    assert page.evaluate("document.getElementById('shortcuts').open") is True
    assert (
        page.inner_text("#shortcuts dl div:first-child")
        == "j / k\nnext / previous row: a pile in the queue, a member in a pile"
    )
    page.keyboard.press("j")  # inside the dialog a shortcut does nothing
    assert page.evaluate("document.getElementById('shortcuts').open") is True
    page.keyboard.press("Escape")
    assert page.evaluate("document.getElementById('shortcuts').open") is False


def test_a_viewer_is_told_why_a_pile_has_no_checkboxes(corpora, viewer, sign_in):  # noqa: F811
    page = sign_in("vera", "vera-pass")
    page.goto(page.url + "pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture")
    assert page.locator("input[name=members]").count() == 0
    assert page.inner_text("[data-testid=why-no-checkboxes]") == (
        "No checkboxes: you are signed in as vera (role viewer), and selecting and retiring members needs "
        "the reviewer role."
    )
    page.keyboard.press("j")  # j still walks the members, by their lesson links
    assert settled(page, "el => el.closest('tr').dataset.row.length", 64) == 64


def test_x_g_and_a_select_a_member_its_group_and_every_member(group_pile, reviewer, sign_in):  # noqa: F811
    first, second, kept, other = group_pile
    page = sign_in("rita", "rita-pass")
    page.goto(page.url + "pile/?host=kb-desk&namespace=kb&subject=intake")

    def selected():
        return [
            page.eval_on_selector_all("input[name=members]:checked", "els => els.map(e => e.value)"),
            page.inner_text("[data-selected-count]"),
            page.inner_text("[data-retire-label]"),
        ]

    page.keyboard.press("j")
    page.keyboard.press("g")  # the whole group of the first member
    assert selected() == [[first, second, kept], "3 of 4 selected", "Retire 3 lessons"]
    page.keyboard.press("g")  # again: none of it
    assert selected() == [[], "0 of 4 selected", "Retire selected lessons"]
    page.keyboard.press("k")  # already on the first row: stays
    page.keyboard.press("x")
    assert selected() == [[first], "1 of 4 selected", "Retire 1 lesson"]
    page.keyboard.press("a")  # every member; the header box shows it
    assert selected() == [[first, second, kept, other], "4 of 4 selected", "Retire 4 lessons"]
    assert page.is_checked("#select-all")
    page.keyboard.press("a")
    assert selected() == [[], "0 of 4 selected", "Retire selected lessons"]
    assert page.inner_text("[data-retire-preview]") == "After the retire: 4 \u2192 4 of 2 (still over by 2)"


SHORT = 500  # px: the member rows push the retire and restore forms below the fold


def short_pile_page(sign_in):  # noqa: F811
    """rita on kb-desk's pile in a window ``SHORT`` px high."""
    page = sign_in("rita", "rita-pass", height=SHORT)
    page.click("text=entity:kb/intake")
    page.wait_for_url("**/pile/?host=kb-desk*")
    return page


def focus_in_view(page) -> bool:
    """Whether the focused element lies wholly inside the window (not above or below it)."""
    top, bottom = active(page, "el => { const r = el.getBoundingClientRect(); return [r.top, r.bottom]; }")
    return 0 <= top and bottom <= SHORT


def test_a_retire_with_nothing_selected_focuses_its_error_in_view(group_pile, reviewer, sign_in):  # noqa: F811
    from review.models import Decision
    from review.piles.forms import MEMBERS_REQUIRED

    page = short_pile_page(sign_in)
    page.fill("#retire-form textarea[name=reason]", REASON)
    page.click("#retire-form button.btn-danger")
    summary = "notice notice-error form-summary"
    assert settled(page, "el => el.className", summary) == summary
    assert active(page, "el => el.innerText") == f"Nothing was retired.\n\n{MEMBERS_REQUIRED}"
    assert focus_in_view(page)
    assert Decision.objects.count() == 0


def test_a_restore_with_nothing_selected_focuses_its_error_in_view(group_pile, reviewer, sign_in):  # noqa: F811
    from review.models import Decision
    from review.piles.forms import RESTORE_REQUIRED

    page = short_pile_page(sign_in)
    page.check(f"input[name=members][value='{group_pile[0]}']")
    page.fill("#retire-form textarea[name=reason]", REASON)
    page.click("#retire-form button.btn-danger")
    page.wait_for_selector(".notice-success")
    page.fill("#restore-form textarea[name=reason]", "Back: it was the clearest.")
    page.click("#restore-form button[type=submit]")
    assert settled(page, "el => el.innerText", RESTORE_REQUIRED) == RESTORE_REQUIRED
    assert focus_in_view(page)
    assert list(Decision.objects.values_list("action", flat=True)) == ["retire"]


def test_keep_one_on_a_rule_alone_in_its_fact_says_so(group_pile, reviewer, sign_in):  # noqa: F811
    """Issue 23, newcomer item 8: ``o`` on a member that states its fact alone selected nothing,
    silently; it now says why, read out and shown under the selection count."""
    first, second, kept, other = group_pile
    page = sign_in("rita", "rita-pass")
    page.goto(page.url + f"pile/?host={HOST}&namespace=kb&subject=intake")
    alone = "This rule is the only one of its fact: there is nothing to keep one of."
    for _ in range(4):
        page.keyboard.press("j")
    assert settled(page, "el => el.value", other) == other  # the date-of-loss rule, a fact of its own
    page.keyboard.press("o")
    assert wait_until(page, ANNOUNCED, alone) == alone
    assert page.inner_text("[data-keyboard-said]") == alone
    assert page.eval_on_selector_all("input[name=members]:checked", "els => els.length") == 0


def test_u_undoes_the_retire_just_made_wherever_focus_went(group_pile, reviewer, sign_in):  # noqa: F811
    """Newcomer item 9: after a retire focus is on the next member, below the notice's Undo; `u` presses
    Undo from there, and the retired lessons are live again with the reason "undo: …"."""
    from lessons.models import Lesson
    from review.models import Decision

    first, second, kept, other = group_pile
    page = sign_in("rita", "rita-pass")
    page.goto(page.url + "pile/?host=kb-desk&namespace=kb&subject=intake")
    keys = Keys(page)
    keys.press("j")
    keys.press("x")
    keys.press("r")
    keys.type(REASON)
    keys.press("Control+Enter")
    page.wait_for_selector("[data-undo]")
    assert page.get_attribute("[data-undo]", "aria-keyshortcuts") == "u"
    assert page.inner_text("[data-undo]") == "Undo u"
    assert Lesson.objects.get(hash=first).status == "retracted"
    assert settled(page, "el => el.closest('tr') && el.closest('tr').dataset.row", second) == second
    keys.press("u")
    page.wait_for_selector("text=Restored 1 lesson with one reason")
    assert Lesson.objects.get(hash=first).status == "live"
    assert list(Decision.objects.filter(action="restore").values_list("lesson_hash", "reason")) == [
        (first, f"undo: {REASON}")
    ]
    assert keys.count == 6
    keys.press("u")  # nothing left to undo: the key does nothing
    assert Decision.objects.filter(action="restore").count() == 1
