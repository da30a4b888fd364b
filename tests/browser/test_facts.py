"""The pile page's facts in a real browser, 1280 and 390 px wide (issue 22, Builds 2-3): the facts view,
resolve by facts by keyboard (then the usual retire, with its reason), picking another keeper, marking two
facts as one and taking a rule out, each page axe-clean and no wider than the window. The ad-buy
corpus's invoice_capture pile; screenshots go to artifacts/ (pile-facts-<width>.png)."""

from __future__ import annotations

import importlib

import pytest

from tests.fixtures.browser import browser, sign_in  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1280, 390)
PILE = "pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture"
REASON = "Each fact once: the newer restatements go."
GROSS = ("36727f00", "353ed7f4")  # "Gross Amount" said twice (issue 22's acceptance)
ADVERTISER = ("cc844636", "e21f022e")


@pytest.fixture(autouse=True)
def roles(transactional_db):
    from django.apps import apps

    importlib.import_module("review.migrations.0002_roles").create_roles(apps, None)


def full(prefix: str) -> str:
    from lessons.models import Lesson

    return Lesson.objects.get(host__name="adbuy-desk", hash__startswith=prefix).hash


@pytest.fixture
def marked(corpora, reviewer, second_reviewer):
    """The corpora with two of invoice_capture's facts marked as one by rob (whatever the detection
    finds, these two pairs are then one fact each); returns the pile's stored facts."""
    from lessons.models import Host
    from lessons.selectors.facts import pile_facts_stored
    from review.services.restatements import restatement_mark

    host = Host.objects.get(name="adbuy-desk")
    pairs = [(full(a), full(b)) for a, b in (GROSS, ADVERTISER)]
    restatement_mark(
        host=host, pairs=pairs, same=True, actor=second_reviewer, reason="Same field, same rule."
    )
    return pile_facts_stored(host=host, namespace="desk.adbuy", subject="invoice_capture")


def problems(page) -> list[str]:
    """What is wrong with the page at its width: wider than the window, and axe-core's violations."""
    from axe_playwright_python.sync_playwright import Axe

    found = []
    scroll, inner = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    if scroll > inner:
        found.append(f"{scroll}px wide in {inner}px")
    found += [f"{v['id']}: {len(v['nodes'])}" for v in Axe().run(page).response["violations"]]
    return found


def checked(page) -> list[str]:
    return page.eval_on_selector_all("input[name=members]:checked", "els => els.map(e => e.value)")


def focused(page, js: str, expected):
    """``js`` of the focused element once it equals ``expected`` (polled up to 5 s: keyboard.js moves focus
    on htmx:afterSettle), else its value then."""
    for _ in range(100):
        value = page.evaluate(f"({js})(document.activeElement)")
        if value == expected:
            return value
        page.wait_for_timeout(50)
    return page.evaluate(f"({js})(document.activeElement)")


@pytest.mark.parametrize("width", WIDTHS)
def test_the_facts_view_then_resolve_by_facts_by_keyboard_and_retire(marked, sign_in, artifacts, width):  # noqa: F811
    from lessons.core.resolve import resolve_by_facts
    from review.models import Decision
    from review.piles.facts import facts_line

    resolution = resolve_by_facts(marked)
    umbrellas = sum(f.umbrella for f in marked)
    page = sign_in("rita", "rita-pass", width=width, height=900)
    page.goto(page.url + PILE)
    line = facts_line(rules=10, facts=len(marked) - umbrellas, umbrellas=umbrellas)
    assert page.inner_text("[data-testid=facts-line]") == line
    assert page.locator("tr[data-fact-head]").count() == len(marked)
    gross = page.locator(f"tr[data-fact-head][data-group='{full(GROSS[0])}']")
    assert "2 rules state this fact" in gross.inner_text()
    assert "corrected by rob" in gross.inner_text()
    assert problems(page) == []
    page.screenshot(path=str(artifacts / f"pile-facts-{width}.png"), full_page=True)
    page.locator("#facts").scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts / f"pile-facts-{width}-window.png"))

    page.keyboard.press("f")  # resolve by facts: a preview, nothing written
    page.wait_for_selector("[data-testid=resolve]")
    assert checked(page) == list(resolution.retire)
    assert page.input_value("select[name=reason_code]") == "restates_another"
    n = len(resolution.retire)
    assert page.inner_text("[data-retire-label]") == f"Retire {n} lesson{'s' if n != 1 else ''}"
    preview = (
        f"After the retire: 10 \u2192 {10 - n} of 8 ({'within budget' if 10 - n <= 8 else 'still over'})"
    )
    assert page.inner_text("[data-testid=resolve-preview]").startswith(preview[: preview.index("(")])
    assert focused(page, "el => el.name", "reason") == "reason"  # the reason it still needs
    assert Decision.objects.count() == 0
    assert problems(page) == []
    page.screenshot(path=str(artifacts / f"pile-resolve-{width}.png"))

    page.keyboard.type(REASON)
    page.keyboard.press("Control+Enter")  # the confirmation: the usual retire
    page.wait_for_selector(".notice-success")
    decisions = list(Decision.objects.order_by("seq").values_list("lesson_hash", "reason_code", "reason"))
    assert sorted(decisions) == sorted((h, "restates_another", REASON) for h in resolution.retire)
    assert page.inner_text("[data-testid=pile-count]") == f"{10 - n} live lessons · budget 8"
    page.click("[data-testid=undo]")  # the retire's Undo still works
    page.wait_for_selector(f"text=Restored {n} lesson")
    assert page.inner_text("[data-testid=pile-count]") == "10 live lessons · budget 8"


def test_a_picked_keeper_is_the_one_keep_one_leaves(marked, sign_in):  # noqa: F811
    page = sign_in("rita", "rita-pass")
    page.goto(page.url + PILE)
    head = page.locator(f"tr[data-fact-head][data-group='{full(GROSS[0])}']")
    assert head.locator("select[name=keepers]").input_value() == full(GROSS[0])  # held, suggested: older
    head.locator("select[name=keepers]").select_option(full(GROSS[1]))
    head.locator("a.keep-one").click()
    assert checked(page) == [full(GROSS[0])]
    assert page.inner_text("[data-selected-count]") == "1 of 10 selected"


@pytest.mark.parametrize("width", WIDTHS)
def test_mark_two_facts_as_one_then_take_a_rule_out(corpora, reviewer, sign_in, width):  # noqa: F811
    from lessons.models import Host, RestatementMark
    from lessons.selectors.facts import pile_facts_stored

    def facts():
        return pile_facts_stored(
            host=Host.objects.get(name="adbuy-desk"), namespace="desk.adbuy", subject="invoice_capture"
        )

    gross, amount = full(GROSS[0]), full(GROSS[1])
    page = sign_in("rita", "rita-pass", width=width, height=900)
    page.goto(page.url + PILE)
    first = next(f for f in facts() if gross in f.members)
    other = next(f for f in facts() if amount in f.members)
    if first.name != other.name:  # the detection did not group them: mark them one fact
        page.click(f"tr[data-fact-head][data-group='{first.name}'] a.merge-link")
        assert focused(page, "el => el.id", "id_merge-other") == "id_merge-other"
        assert page.input_value("#id_merge-fact") == first.name
        page.select_option("#id_merge-other", other.name)
        page.fill("#id_merge-reason", "Both say how to write the gross amount.")
        page.click("#merge-form button[type=submit]")
        page.wait_for_selector(".notice-success")
        assert next(f for f in facts() if gross in f.members).members == (gross, amount)
        head = page.locator(f"tr[data-fact-head][data-group='{gross}']")
        assert "corrected by rita" in head.inner_text()
        assert page.locator("[data-testid=marks] li").count() == 1
        assert problems(page) == []

    page.click(f"tr[data-row='{amount}'] a.take-out")  # take the newer one out
    assert focused(page, "el => el.id", "id_split-reason") == "id_split-reason"
    assert page.input_value("#id_split-member") == amount
    page.keyboard.type("It says to strip symbols, not how to write the number.")
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".notice-success >> text=as a fact of its own")
    assert next(f for f in facts() if amount in f.members).members == (amount,)
    assert list(RestatementMark.objects.filter(same=False).values_list("made_by__username", flat=True)) == [
        "rita"
    ]
    assert page.locator(f"tr[data-fact-head][data-group='{amount}']").count() == 1
    assert problems(page) == []


def test_m_and_s_fill_the_mark_forms_from_the_current_row(corpora, reviewer, sign_in):  # noqa: F811
    page = sign_in("rita", "rita-pass")
    page.goto(page.url + PILE)
    gross = full(GROSS[0])
    page.focus(f"input[name=members][value='{gross}']")
    page.keyboard.press("m")
    assert focused(page, "el => el.id", "id_merge-other") == "id_merge-other"
    assert page.input_value("#id_merge-fact") == page.get_attribute(f"tr[data-row='{gross}']", "data-group")
    page.focus(f"input[name=members][value='{gross}']")
    page.keyboard.press("s")
    takes_out = page.locator(f"tr[data-row='{gross}'] a.take-out").count()
    if takes_out:  # only a member of a fact of two or more can be taken out
        assert focused(page, "el => el.id", "id_split-reason") == "id_split-reason"
        assert page.input_value("#id_split-member") == gross
    else:
        assert focused(page, "el => el.value", gross) == gross
