"""Rough edges of the pile, lesson, draft and budget pages a newcomer found: one error shown once, gate
labels as on the draft page, jargon explained in tooltips, one heading level on the lesson page, "#N"
links to the log, breadcrumbs through the host page, the budget form laid out as the others, no internal
file names in what a user reads, the favicon, and the text of ``manage.py piles``."""

from __future__ import annotations

import re

import pytest
from django.core.management import call_command
from django.urls import reverse

from lessons.models import Draft, Host, Lesson
from review.piles.forms import MEMBERS_REQUIRED
from review.services.common import REASON_REQUIRED
from review.services.decisions import lessons_retire
from review.web.format import JARGON
from tests.html import inline_text, parse

ADBUY = "/pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture"
ADBUY_RETIRE = "/pile/retire/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture"


def get(client, user, path: str):
    client.force_login(user)
    response = client.get(path)
    assert response.status_code == 200, path
    return parse(response.content)


def lesson_url(prefix: str) -> str:
    lesson = Lesson.objects.get(hash__startswith=prefix)
    return reverse("review:lesson", args=[lesson.host.name, lesson.hash])


# --- the pile page ------------------------------------------------------------------------------------


def test_retiring_nothing_says_so_once_in_the_form(corpora, client, reviewer):
    client.force_login(reviewer)
    version = parse(client.get(ADBUY).content).find("input", name="pile_version").attrs["value"]
    response = client.post(ADBUY_RETIRE, {"reason": "dup", "pile_version": version}, HTTP_HX_REQUEST="true")
    assert response.status_code == 422
    page = parse(response.content)
    assert page.text.count(MEMBERS_REQUIRED) == 1
    summary = page.find("fieldset", cls="retire").find(cls="form-summary")
    assert [p.text for p in summary.find_all("p")] == ["Nothing was retired.", MEMBERS_REQUIRED]


def test_a_bad_reason_is_shown_beside_the_reason_only(corpora, client, reviewer):
    client.force_login(reviewer)
    page = parse(client.get(ADBUY).content)
    version = page.find("input", name="pile_version").attrs["value"]
    member = page.find("input", name="members").attrs["value"]
    response = client.post(
        ADBUY_RETIRE, {"members": [member], "reason": " ", "pile_version": version}, HTTP_HX_REQUEST="true"
    )
    page = parse(response.content)
    assert page.text.count(REASON_REQUIRED) == 1
    assert [p.text for p in page.find(cls="form-summary").find_all("p")] == ["Nothing was retired."]


def test_draft_gates_read_as_on_the_draft_page(corpora, client, viewer):
    page = get(client, viewer, ADBUY)
    gates = [td.text for td in page.find("table", "drafts").find_all("td") if td.find("span", cls="gate")]
    assert gates == ["GROUND fail VERIFY pass", "GROUND pass VERIFY pass"]


def test_the_pile_header_explains_the_pile_version_and_drops_the_constant_severity(corpora, client, viewer):
    page = get(client, viewer, ADBUY)
    status = page.find(cls="pile-status")
    abbr = status.find("abbr")
    assert (abbr.text, abbr.attrs["title"]) == (
        "pile version",
        "a fingerprint of the pile's lessons; "
        "an action on a pile that changed since you loaded it is refused",
    )
    assert "severity" not in status.text


def test_verdict_badges_explain_not_applied_and_held_costlier(corpora, client, viewer):
    page = get(client, viewer, ADBUY)
    costlier = page.find("span", cls="v-costlier")
    assert (costlier.text, costlier.attrs["title"]) == ("held_costlier", "held, but at a higher cost")
    page = get(client, viewer, "/pile/?host=warehouse-sql&namespace=analytics&subject=revenue_models")
    not_applied = page.find("span", cls="v-not-applied")
    assert (not_applied.text, not_applied.attrs["title"]) == (
        "not applied by the loop",
        "No Verify-gate verdict has been recorded for this lesson",
    )
    assert page.find("span", cls="v-held").attrs.get("title") is None  # plain words need no tooltip


def test_a_stale_draft_badge_explains_stale(corpora, client, viewer, reviewer):
    draft = Draft.objects.get(ext_id="rec-adbuy-consolidate-1")
    lessons_retire(host=draft.host, hashes=[draft.supersedes[0]], actor=reviewer, reason="gone")
    badge = get(client, viewer, ADBUY).find("span", cls="d-stale")
    assert (badge.text, badge.attrs["title"]) == ("stale", JARGON["stale"])


def test_the_pile_breadcrumb_and_header_link_the_host_page(corpora, client, viewer):
    page = get(client, viewer, ADBUY)
    assert [(a.text, a.attrs["href"]) for a in page.find("p", cls="crumbs").find_all("a")] == [
        ("Piles", "/"),
        ("adbuy-desk", "/hosts/adbuy-desk/"),
    ]
    assert page.find(cls="pile-title").find("a").attrs["href"] == "/hosts/adbuy-desk/"


# --- the lesson page ----------------------------------------------------------------------------------


def test_the_lesson_page_sections_are_one_heading_level(corpora, client, viewer):
    section = get(client, viewer, lesson_url("e21f022e")).find("section", id="lesson")
    assert section.find_all("h3") == []
    assert [h.text for h in section.find_all("h2")] == [
        "Versions",
        "Verdict history newest first; the first is the latest verdict",
        "Recurrence",
        "Timeline UTC; the tables below list each marker's session, time and text (or hover a marker)",
        "Sessions with corrections charged to it",
        "The same text on other hosts",
        "Decisions on this lesson",
    ]


def test_a_lesson_shown_without_correction_says_in_how_many_sessions(corpora, client, viewer):
    page = get(client, viewer, lesson_url("e21f022e"))  # shown in 8 sessions, never corrected
    notes = [p.text for p in page.find("section", id="recurrence-detail").find_all("p")]
    assert notes == [
        "No observed correction in 8 sessions shown its current text.",
        "No other host has a lesson with this text.",
    ]


def test_a_lesson_never_shown_says_so(entity, client, viewer):
    (first,) = entity(1)
    page = get(client, viewer, reverse("review:lesson", args=["qa-host", first]))
    notes = [p.text for p in page.find("section", id="recurrence-detail").find_all("p")]
    assert notes == [
        "No observed correction; not shown in any session yet.",
        "No other host has a lesson with this text.",
    ]


def test_the_lesson_breadcrumb_goes_through_the_host_page(corpora, client, viewer):
    page = get(client, viewer, lesson_url("36727f00"))
    assert [a.attrs["href"] for a in page.find("p", cls="crumbs").find_all("a")] == [
        "/",
        "/hosts/adbuy-desk/",
        "/pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture",
    ]


def test_the_lesson_decisions_show_reason_codes_in_words(corpora, client, viewer, reviewer):
    lesson = Lesson.objects.get(hash__startswith="36727f00")
    lessons_retire(
        host=lesson.host, hashes=[lesson.hash], actor=reviewer, reason="a", reason_code="too_specific"
    )
    row = get(client, viewer, lesson_url("36727f00")).find("table", "decisions").find("tbody").find("tr")
    assert row.find_all("td")[4].text == "too specific"


def test_no_page_names_an_internal_file(corpora, client, reviewer):
    draft = Draft.objects.get(ext_id="rec-adbuy-consolidate-1")
    paths = [
        "/",
        ADBUY,
        lesson_url("36727f00"),
        reverse("review:draft", args=["adbuy-desk", draft.ext_id]),
        "/hosts/",
        "/hosts/adbuy-desk/",
        "/decisions/",
    ]
    client.force_login(reviewer)
    for path in paths:
        response = client.get(path)
        assert response.status_code == 200, path
        text = parse(response.content).find("main").text
        assert not re.search(r"\b[\w/]+\.(md|py)\b", text), path


# --- the draft page -----------------------------------------------------------------------------------


def test_the_draft_decisions_link_their_seq_to_the_log(corpora, client, viewer, reviewer):
    from review.services.consolidation import draft_reject

    draft = Draft.objects.get(ext_id="rec-adbuy-consolidate-0")
    draft_reject(draft=draft, actor=reviewer, reason="keeps a contract number")
    page = get(client, viewer, reverse("review:draft", args=["adbuy-desk", draft.ext_id]))
    cells = page.find("section", id="draft-decisions").find("tbody").find("tr").find_all("td")
    assert cells[0].find("a").attrs["href"] == "/decisions/?seq=1"
    assert cells[4].text == "(no code)"
    crumbs = [a.attrs["href"] for a in page.find("p", cls="crumbs").find_all("a")]
    assert crumbs[:2] == ["/", "/hosts/adbuy-desk/"]


# --- the budget page ----------------------------------------------------------------------------------


def test_the_budget_form_is_laid_out_as_the_retire_form(corpora, client, admin_user):
    page = get(client, admin_user, reverse("review:host_budget", args=["adbuy-desk"]))
    form = page.find("form", id="budget-form")
    labels = [label.text for label in form.find_all("label")]
    assert labels == [
        "max_active",
        "Budget enabled",
        "Reason (required, 1–500 characters)",
    ]
    reason = form.find("textarea", name="reason")
    assert reason.attrs["data-counter"] == "500"
    assert form.find("p", cls="counter").attrs["data-counter-for"] == reason.attrs["id"]
    fields = form.find_all("div", cls="field")
    helps = [p.text for field in fields for p in field.find_all("p", cls="help")]
    assert helps == [p.text for p in form.find_all("p", cls="help")]  # every help inside its field
    assert len(helps) == 3
    assert form.find("select", name="reason_code") is None  # finding 12: no retire codes on a budget
    intro = page.find(cls="page-head").text
    assert "Preview shows what changes before you save" in intro
    assert "Preview a change first" not in intro


def test_the_saved_budget_message_links_its_decision(corpora, client, admin_user):
    client.force_login(admin_user)
    response = client.post(
        reverse("review:host_budget", args=["adbuy-desk"]),
        {"max_active": "12", "budget_enabled": "on", "reason": "room", "save": "1"},
        follow=True,
    )
    notice = parse(response.content).find(cls="notices").find("span")
    assert (
        inline_text(notice)
        == "Budget of adbuy-desk saved: max_active 12, enabled. Decision #1 is in the log."
    )
    assert notice.find("a").attrs["href"] == "/decisions/?seq=1"


def test_a_message_that_quotes_a_host_id_stays_escaped(client):
    from review.web.links import link_decisions

    assert str(link_decisions("Rejected draft <b>x</b>. Decision #7.")) == (
        'Rejected draft &lt;b&gt;x&lt;/b&gt;. Decision <a href="/decisions/?seq=7">#7</a>.'
    )


# --- favicon, API docs, manage.py piles -----------------------------------------------------------------


def test_every_page_names_the_icon_and_favicon_ico_redirects_to_it(client, viewer):
    client.force_login(viewer)
    icon = parse(client.get("/hosts/").content).find("link", rel="icon")
    assert icon.attrs["href"] == "/static/icons/pile.svg"
    client.logout()
    response = client.get("/favicon.ico")
    assert (response.status_code, response["Location"]) == (302, "/static/icons/pile.svg")


def test_the_api_docs_speak_to_a_host_developer(client):
    schema = client.get("/api/v1/openapi.json").json()
    text = str(schema)
    for internal in ("config/urls.py", "review.services", "settings.API_MAX_BODY_BYTES", ".md"):
        assert internal not in text, internal
    assert schema["info"]["description"].startswith("The API a host uses to send its lessons")


def test_manage_piles_prints_a_header_and_cuts_long_text(corpora, capsys):
    call_command("piles", "--host", "adbuy-desk")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["HOST", "ENTITY", "LIVE", "/", "BUDGET", "SEVERITY"]
    assert lines[1].split() == ["adbuy-desk", "entity:desk.adbuy/invoice_capture", "10", "/", "8", "medium"]
    assert lines[2] == (
        "    36727f00  held                     "
        "Write Gross Amount as a bare number with two decimals — no currency s…"
    )
    assert lines[-1] == "1 pile(s)"


@pytest.mark.parametrize(
    ("text", "width", "cut"), [("abc", 3, "abc"), ("abcd", 3, "ab…"), ("a\n  b", 9, "a b")]
)
def test_cut_keeps_one_line_within_its_width(text, width, cut):
    from lessons.management.commands.piles import cut as cut_text

    assert cut_text(text, width) == cut


def test_a_budget_off_host_is_neutral_on_its_pile_page(corpora, client, viewer):
    assert Host.objects.get(name="support-triage").budget_enabled is False
    page = get(client, viewer, "/pile/?host=support-triage&namespace=support&subject=refunds")
    assert "gauge-off" in page.find(cls="gauge").classes
    assert page.find(cls="pile-status").find(cls="state").text == "budget off"


def test_the_budget_gauge_draws_the_overage_past_the_budget_tick():
    from review.web.format import budget_gauge

    assert budget_gauge(12, 8) == (
        '<span class="gauge gauge-over" title="12 live of a budget of 8">'
        '<svg viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true" focusable="false">'
        '<rect class="g-track" x="0" y="1" width="100" height="8"/>'
        '<rect class="g-within" x="0" y="1" width="66.67" height="8"/>'
        '<rect class="g-over" x="66.67" y="1" width="33.33" height="8"/>'
        '<rect class="g-tick" x="65.87" y="0" width="0.8" height="10"/></svg>'
        '<span class="gauge-text"><b>12</b> / 8</span></span>'
    )
    assert budget_gauge(3, 8, False).startswith(
        '<span class="gauge gauge-off" title="3 live of a budget of 8 (budget off)">'
    )
