"""A reviewer writes a consolidation in a real browser: the editor's live coverage matrix (htmx, debounced),
a waiver for each dropped anchor, submit, and another reviewer approves it. At 1280 and 390 px wide, with
no axe-core violation; screenshots go to artifacts/. spec: docs/reviewing.md, "Writing a consolidation".
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest

from review.drafts.selectors import GATE_NOT_RUN_LABEL, ORIGIN_REVIEWER
from tests.browser.test_every_page import check
from tests.fixtures.browser import wait_until
from tests.review.written.helpers import HOST, NS, SUBJECT, TEXTS, hashes, pile_records

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PILE = "/pile/?" + urlencode({"host": HOST, "namespace": NS, "subject": SUBJECT})
ADBUY_WRITE = "/pile/write/?" + urlencode(
    {"host": "adbuy-desk", "namespace": "desk.adbuy", "subject": "invoice_capture"}
)
TEXT = "Wrap timestamp columns in `to_utc` before joining; keep `amount_cents` as integer cents."


@pytest.fixture
def pile(ingest):
    records = pile_records()
    assert ingest(records).ok
    return hashes(records)


def draft_waivers() -> dict:
    from lessons.models import Draft

    return Draft.objects.get().waivers


def test_a_reviewer_writes_a_consolidation_with_a_live_matrix_and_another_approves_it(
    pile,
    reviewer,
    second_reviewer,
    live_server,
    sign_in,
    artifacts,
):
    from lessons.models import Draft, Lesson

    page = sign_in("rita", "rita-pass")
    page.goto(live_server.url + PILE)
    page.click("[data-testid=write-consolidation]")
    page.wait_for_url("**/pile/write/?*")
    assert page.input_value("#id_text") == TEXTS[0] + "\n" + TEXTS[2]
    assert page.locator("#waive-at").count() == 1  # the prefill drops the restatement's `at`

    # Typing refreshes the matrix after a pause: the count, the dropped anchors, the waivers asked for.
    page.fill("#id_text", "")
    page.type("#id_text", TEXT, delay=5)
    counted = "t => document.querySelector('[data-testid=text-count]').textContent.startsWith(t)"
    assert wait_until(page, counted, arg=f"{len(TEXT)} /") is True
    assert page.inner_text("[data-testid=text-count]") == f"{len(TEXT)} / 1000 characters"
    held = page.locator(f"[data-testid=member-{pile[1][:8]}]")
    assert held.locator("[data-testid=dropped] del.chip-anchor[data-word=at]").count() == 1
    assert page.inner_text("[data-testid=to-waive]") == "1 still to waive"

    # Unticking the member that holds `at` asks for no waiver any more; ticking it again asks again.
    page.uncheck(f"[data-testid=choose-{pile[1][:8]}]")
    page.wait_for_selector("#waive-at", state="detached")
    assert page.locator(f"[data-testid=member-{pile[1][:8]}]").count() == 0
    page.check(f"[data-testid=choose-{pile[1][:8]}]")
    page.wait_for_selector("#waive-at")
    # A reason being typed survives a refresh of the matrix (its value is posted with the text, and
    # hx-preserve keeps the field itself while the region is swapped).
    page.fill("#waive-at", "Half a reas")
    with page.expect_response("**/pile/write/matrix/**"):
        page.type("#id_text", " ", delay=5)
    page.wait_for_load_state("networkidle")
    assert page.input_value("#waive-at") == "Half a reas"
    page.fill("#waive-at", "")
    page.fill("#id_text", TEXT)

    assert check(page) == {}  # 1440 and 390 wide: no overflow, no axe violation (leaves it at 390)
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(artifacts / "write_390.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.screenshot(path=str(artifacts / "write_1280.png"), full_page=True)

    # Submitting without the waiver is refused, the text kept; with it, a draft written by rita. The
    # matrix's last refresh is let finish first: a swap landing on the click could swallow the submit.
    page.wait_for_load_state("networkidle")
    page.fill("#waive-at", "")  # again: a late matrix swap may bring back the reason typed earlier
    page.wait_for_load_state("networkidle")
    member = page.locator(f"[data-testid=choose-{pile[1][:8]}]")
    assert member.is_checked() and page.input_value("#waive-at") == ""
    with page.expect_response(lambda r: r.request.method == "POST" and "/pile/write/?" in r.url) as posted:
        page.click("[data-testid=write-submit]")
    assert "members=" + pile[1] in (posted.value.request.post_data or ""), posted.value.request.post_data
    page.wait_for_selector("[data-testid=write-errors]")
    assert "The text drops the anchor `at`" in page.inner_text("[data-testid=write-errors]")
    assert page.input_value("#id_text") == TEXT
    assert not Draft.objects.exists()
    page.fill("#waive-at", "The alias suffix is in the style guide now.")
    page.wait_for_load_state("networkidle")
    page.press("#waive-at", "Control+Enter")  # submits, as on every form (docs/reviewing.md, "Keyboard")
    page.wait_for_url("**/drafts/wh/written-*/")
    assert page.inner_text("[data-testid=draft-origin]") == ORIGIN_REVIEWER
    assert page.inner_text("[data-testid=gate-ground]") == GATE_NOT_RUN_LABEL
    assert "`at`: The alias suffix is in the style guide now." in page.inner_text("[data-testid=waived]")
    assert draft_waivers() == {"`at`": "The alias suffix is in the style guide now."}
    assert page.locator("[data-testid=approve]").count() == 0  # rita wrote it
    assert check(page) == {}
    page.set_viewport_size({"width": 1280, "height": 800})
    page.screenshot(path=str(artifacts / "written_draft_1280.png"), full_page=True)
    draft = Draft.objects.get()

    other = sign_in("rob", "rob-pass")
    other.goto(f"{live_server.url}/drafts/wh/{draft.ext_id}/")
    other.fill("#id_approve-reason", "One rule for the staging timestamps and cents.")
    other.click("[data-testid=approve]")
    other.wait_for_selector("[data-testid=draft-status]:text-is('approved')")
    created = Lesson.objects.get(kind="consolidation")
    assert (created.text, created.status, created.origin) == (TEXT, "live", "human")
    assert set(Lesson.objects.filter(hash__in=pile).values_list("status", flat=True)) == {"superseded"}


def test_the_adbuy_editor_fits_both_widths_with_no_axe_violation(
    corpora, reviewer, live_server, sign_in, artifacts
):
    page = sign_in("rita", "rita-pass")
    page.goto(live_server.url + ADBUY_WRITE)
    assert page.locator("input[name=members]:checked").count() == 10
    assert check(page) == {}
    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=str(artifacts / "write_adbuy_390.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.screenshot(path=str(artifacts / "write_adbuy_1280.png"), full_page=True)
