"""The pile page: header, members in order with their verdicts, drafts, and retiring members."""

from __future__ import annotations

import pytest

from lessons.models import Lesson
from review.models import Decision
from review.piles.forms import MEMBERS_REQUIRED
from review.piles.views import RETIRED_NOTICE, STALE_SELECTION_KEPT
from review.services.common import REASON_REQUIRED, REASON_TOO_LONG, STALE_PILE
from review.web.lookups import ENTITY_EMPTY, HOST_UNKNOWN, PILE_PARAMS_MISSING, PILE_PARAMS_NUL
from tests.html import inline_text, parse, table_rows
from tests.lessons.test_piles_corpora import ADBUY_ORDER

ADBUY = "/pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture"
ADBUY_RETIRE = "/pile/retire/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture"
ADBUY_MEMBERS = ADBUY_ORDER  # the ten members, oldest first, with their latest verdicts
BADGE_CLASS = {
    "held": "v-held",
    "unmeasured": "v-unmeasured",
    "held_costlier": "v-costlier",
    "regressed": "v-regressed",
    "drifted": "v-drifted",
    "not applied by the loop": "v-not-applied",
}
PILE_MAX_QUERIES = 11  # the claim box reads the live claim; the stored facts and the marks (one each)


def members(page) -> list[tuple[str, str, str]]:
    """``(hash prefix, verdict text, verdict badge class)`` of each member row, in page order."""
    rows = []
    for tr in page.find("table", "members").find("tbody").find_all("tr"):
        if "data-hash" not in tr.attrs:  # a fact's head row
            continue
        cells = tr.find_all("td")
        badge = cells[-2].find("span", "badge")
        verdict_class = next(c for c in badge.classes if c.startswith("v-"))
        rows.append((tr.find("td", "hash").find("a").text, badge.text, verdict_class))
    return rows


def fact_order() -> list[str]:
    """The hash prefixes of invoice_capture's live members as the page lists them: by fact (each fact's
    oldest member first), then oldest first within a fact (lessons.selectors.facts)."""
    from lessons.models import Host
    from lessons.selectors.facts import pile_facts_stored

    host = Host.objects.get(name="adbuy-desk")
    facts = pile_facts_stored(host=host, namespace="desk.adbuy", subject="invoice_capture")
    return [h[:8] for f in facts for h in f.members]


def header(page) -> tuple[str, str, str]:
    status = page.find(cls="pile-status")
    return page.find("h1", "target").text, page.find(cls="pile-count").text, status.find(cls="state").text


def adbuy_hashes(*prefixes: str) -> list[str]:
    return [Lesson.objects.get(host__name="adbuy-desk", hash__startswith=p).hash for p in prefixes]


def version(client) -> str:
    return parse(client.get(ADBUY).content).find("input", name="pile_version").attrs["value"]


def test_the_adbuy_pile_lists_its_ten_members_by_fact_with_verdict_badges(corpora, as_viewer):
    page = parse(as_viewer.get(ADBUY).content)
    verdicts = dict(ADBUY_MEMBERS)
    order = fact_order()
    assert sorted(order) == sorted(verdicts)
    assert members(page) == [(h, verdicts[h], BADGE_CLASS[verdicts[h]]) for h in order]


def test_the_pile_header_shows_target_count_and_budget(corpora, as_viewer):
    page = parse(as_viewer.get(ADBUY).content)
    assert header(page) == (
        "entity:desk.adbuy/invoice_capture",
        "10 live lessons · budget 8",
        "over budget by 2",
    )
    # The severity is always "medium" (docs/piles-and-recurrence.md rule 7): the JSON keeps it, the page does not show it.
    assert page.find("span", "sev") is None
    assert page.find(cls="gauge").attrs["title"] == "10 live of a budget of 8"


def test_warehouse_members_show_not_applied_by_the_loop_outlined(corpora, as_viewer):
    page = parse(
        as_viewer.get("/pile/?host=warehouse-sql&namespace=analytics&subject=revenue_models").content
    )
    rows = members(page)
    # By restatement group: 590b48ce (the 7th oldest) is listed with be490fe0, the group it restates.
    assert [r[1] for r in rows] == [
        "not applied by the loop",
        "held",
        "not applied by the loop",
        "not applied by the loop",
        "not applied by the loop",
        "regressed",
        "not applied by the loop",
        "not applied by the loop",
    ]
    assert rows[0][2] == "v-not-applied"
    assert "followed" not in page.text


def test_member_rows_show_text_date_origin_kind_history_and_recurrence(corpora, as_viewer):
    page = parse(as_viewer.get(ADBUY).content)
    first = page.find("tr", data_hash=adbuy_hashes("36727f00")[0])
    cells = [td.text for td in first.find_all("td")]
    # A viewer's rows have no checkbox column; held, it is its fact's suggested keeper (with 353ed7f4).
    assert cells[0] == "36727f00 suggested keeper"
    assert first.find(cls="lesson-text").text == (
        "Write Gross Amount as a bare number with two decimals \u2014 no currency symbol, "
        "no commas (e.g. 18450.00)."
    )
    assert first.find("time").text == "2026-01-15"  # then its age, which depends on today
    assert cells[3] == "llm lesson"
    history = first.find("details", "history")
    assert history.find("summary").text == "Verdict history (2)"
    assert [li.text for li in history.find_all("li")] == [
        "held field_accuracy · 7 d · 2026-01-22T01:00:00.000Z",
        "held field_accuracy · 1 d · 2026-01-16T01:00:00.000Z",
    ]
    assert first.find("a").attrs["href"] == f"/lessons/adbuy-desk/{adbuy_hashes('36727f00')[0]}/"


def test_a_recurring_member_carries_the_recurring_badge(corpora, as_viewer):
    page = parse(as_viewer.get(ADBUY).content)
    recurring = [
        tr.find("td", "hash").find("a").text
        for tr in page.find("table", "members").find_all("tr")
        if tr.find("span", "recurring") is not None
    ]
    assert recurring == ["cc844636"]
    row = page.find("tr", data_hash=adbuy_hashes("cc844636")[0])
    assert row.find("p", "shown-in").text == "shown in 8 sessions"  # finding 9: one wording
    counts = {div.find("dt").text: div.find("dd").text for div in row.find("dl", "counts").find_all("div")}
    assert counts == {
        "recurred": "2 in 2 sessions",
        "during": "\u2014",
        "unknown": "\u2014",
        "ambiguous": "\u2014",
        "earlier version": "\u2014",
    }


def test_a_member_without_corrections_reads_no_observed_correction(entity, as_viewer):
    entity(3)
    page = parse(as_viewer.get("/pile/?host=qa-host&namespace=qa&subject=orders").content)
    notes = [p.text for p in page.find_all("p", "no-correction")]
    assert notes == ["no observed correction not shown in any session yet"] * 3


def test_the_drafts_on_the_entity_are_listed_with_status_and_gates(corpora, as_viewer):
    page = parse(as_viewer.get(ADBUY).content)
    rows = [row[:5] for row in table_rows(page, "drafts")]
    assert rows == [
        [
            "rec-adbuy-consolidate-0",
            "pending",
            "GROUND fail VERIFY pass",
            "llm:qwen3-30b confidence 0.42",
            "2",
        ],
        [
            "rec-adbuy-consolidate-1",
            "pending",
            "GROUND pass VERIFY pass",
            "llm:qwen3-30b confidence 0.81",
            "10",
        ],
    ]


def test_an_entity_within_budget_says_so(corpora, as_viewer):
    page = parse(as_viewer.get("/pile/?host=adbuy-desk&namespace=desk.adbuy&subject=gross_amount").content)
    assert header(page) == ("entity:desk.adbuy/gross_amount", "2 live lessons · budget 8", "within budget")
    assert page.find("span", "sev") is None


def test_an_entity_of_a_host_without_budget_says_the_budget_is_off(corpora, as_viewer):
    page = parse(as_viewer.get("/pile/?host=support-triage&namespace=support&subject=refunds").content)
    assert header(page)[2] == "budget off"
    assert "gauge-off" in page.find(cls="gauge").classes


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ("?host=adbuy-desk", 400, PILE_PARAMS_MISSING),
        ("?host=nope&subject=x", 404, HOST_UNKNOWN.format(host="nope")),
        (
            "?host=adbuy-desk&namespace=desk.adbuy&subject=nothing",
            404,
            ENTITY_EMPTY.format(host="adbuy-desk", target="entity:desk.adbuy/nothing"),
        ),
    ],
)
def test_a_bad_pile_address_says_what_is_wrong(corpora, as_viewer, query, status, message):
    response = as_viewer.get("/pile/" + query)
    assert response.status_code == status
    assert parse(response.content).find(cls="problem").find("p").text == message


def test_an_htmx_request_gets_only_the_pile_region(corpora, as_viewer):
    response = as_viewer.get(ADBUY, HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert body.lstrip().startswith('<section id="pile"')
    assert "<html" not in body and "topbar" not in body


def test_viewers_get_no_retire_form(corpora, as_viewer):
    page = parse(as_viewer.get(ADBUY).content)
    assert page.find("form", id="retire-form") is None
    assert page.find("input", name="members") is None


def test_viewers_are_refused_a_retire_post(corpora, as_viewer):
    response = as_viewer.post(
        ADBUY_RETIRE, {"members": adbuy_hashes("36727f00"), "reason": "dup", "pile_version": "x"}
    )
    assert response.status_code == 403
    assert Decision.objects.count() == 0


def test_reviewers_get_the_retire_form_with_the_pile_version(corpora, as_reviewer):
    page = parse(as_reviewer.get(ADBUY).content)
    form = page.find("form", id="retire-form")
    assert form.attrs["hx-post"] == ADBUY_RETIRE and form.attrs["action"] == ADBUY_RETIRE
    assert len(form.find_all("input", name="members")) == 10
    assert len(form.find("input", name="pile_version").attrs["value"]) == 16
    codes = [o.attrs["value"] for o in form.find("select", name="reason_code").find_all("option")]
    assert codes == [
        "",
        "duplicate",
        "restates_another",
        "regressed",
        "drifted",
        "recurring",
        "obsolete",
        "too_specific",
        "other",
    ]


def test_a_reviewer_retires_two_members_with_one_reason(corpora, as_reviewer, reviewer):
    chosen = adbuy_hashes("ba3f6459", "0d3dae1c")
    response = as_reviewer.post(
        ADBUY_RETIRE,
        {
            "members": chosen,
            "reason": "  Both regressed; the gross rule covers them.  ",
            "reason_code": "regressed",
            "pile_version": version(as_reviewer),
        },
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    page = parse(response.content)
    assert header(page) == ("entity:desk.adbuy/invoice_capture", "8 live lessons · budget 8", "within budget")
    decisions = list(Decision.objects.order_by("seq"))
    assert [(d.action, d.lesson_hash, d.actor, d.reason, d.reason_code) for d in decisions] == [
        ("retire", h, "rita", "Both regressed; the gross rule covers them.", "regressed") for h in chosen
    ]
    assert decisions[0].batch == decisions[1].batch
    assert response["HX-Reswap"] == "outerHTML show:#pile:top"  # the news is in the header: scroll up
    notice = page.find(cls="notice-success").find("span")
    # Both members are superseded by the two pending drafts, which go stale (finding 1).
    assert inline_text(notice) == RETIRED_NOTICE.format(n=2, s="s", seqs="#1, #2") + (
        " Drafts rec-adbuy-consolidate-0, rec-adbuy-consolidate-1 became stale: they supersede a lesson"
        " retired now, and cannot be approved until the retired lessons they supersede are restored."
    )
    assert [a.attrs["href"] for a in notice.find_all("a")] == ["/decisions/?seq=1", "/decisions/?seq=2"]
    assert [m[0] for m in members(page)] == fact_order()
    assert len(fact_order()) == 8 and not {"ba3f6459", "0d3dae1c"} & set(fact_order())
    assert set(Lesson.objects.filter(hash__in=chosen).values_list("status", flat=True)) == {"retracted"}


def test_a_retire_without_htmx_redirects_to_the_pile_with_a_message(corpora, as_reviewer):
    response = as_reviewer.post(
        ADBUY_RETIRE,
        {"members": adbuy_hashes("3d46cb35"), "reason": "drifted", "pile_version": version(as_reviewer)},
        follow=True,
    )
    assert response.redirect_chain == [(ADBUY, 302)]
    page = parse(response.content)
    notice = page.find(cls="notices").find("span")
    assert inline_text(notice) == RETIRED_NOTICE.format(n=1, s="", seqs="#1") + (
        " Draft rec-adbuy-consolidate-1 became stale: it supersedes a lesson retired now, and cannot be"
        " approved until the retired lessons it supersedes are restored."
    )
    assert notice.find("a").attrs["href"] == "/decisions/?seq=1"
    assert header(page)[1] == "9 live lessons · budget 8"


@pytest.mark.parametrize(
    ("reason", "message"),
    [("x" * 501, REASON_TOO_LONG.format(length=501)), ("   ", REASON_REQUIRED), ("", REASON_REQUIRED)],
)
def test_a_bad_reason_is_refused_and_nothing_is_written(corpora, as_reviewer, reason, message):
    response = as_reviewer.post(
        ADBUY_RETIRE,
        {"members": adbuy_hashes("36727f00"), "reason": reason, "pile_version": version(as_reviewer)},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 422
    page = parse(response.content)
    assert [p.text for p in page.find_all("p", "field-error")] == [message]
    assert Decision.objects.count() == 0
    assert (
        Lesson.objects.filter(host__name="adbuy-desk", subject="invoice_capture", status="live").count() == 10
    )


def test_a_reason_of_exactly_500_characters_after_trimming_is_accepted(corpora, as_reviewer):
    response = as_reviewer.post(
        ADBUY_RETIRE,
        {
            "members": adbuy_hashes("36727f00"),
            "reason": "  " + "y" * 500 + "  ",
            "pile_version": version(as_reviewer),
        },
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert Decision.objects.get().reason == "y" * 500


def test_retiring_nothing_is_refused(corpora, as_reviewer):
    response = as_reviewer.post(
        ADBUY_RETIRE, {"reason": "dup", "pile_version": version(as_reviewer)}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 422
    assert [p.text for p in parse(response.content).find_all("p", "field-error")] == [MEMBERS_REQUIRED]
    assert Decision.objects.count() == 0


def test_a_stale_pile_version_is_refused_with_the_fresh_pile(corpora, as_reviewer):
    seen = version(as_reviewer)
    as_reviewer.post(
        ADBUY_RETIRE,
        {"members": adbuy_hashes("3d46cb35"), "reason": "first", "pile_version": seen},
        HTTP_HX_REQUEST="true",
    )
    response = as_reviewer.post(
        ADBUY_RETIRE,
        {"members": adbuy_hashes("36727f00", "3d46cb35"), "reason": "second", "pile_version": seen},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 409
    page = parse(response.content)
    # posted without seen_seq (a page from before it existed): nothing more to name
    assert page.find(cls="notice-error").text == f"{STALE_PILE} {STALE_SELECTION_KEPT}"
    assert header(page)[1] == "9 live lessons · budget 8"
    fresh = page.find("input", name="pile_version").attrs["value"]
    assert fresh != seen and fresh == version(as_reviewer)
    assert page.find("textarea", name="reason").text == "second"
    assert Decision.objects.count() == 1


def test_lesson_text_is_escaped_on_the_pile_page(entity, as_reviewer):
    entity(3, texts=["<script>alert(1)</script> first", "second", "third"])
    body = as_reviewer.get("/pile/?host=qa-host&namespace=qa&subject=orders").content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt; first" in body


@pytest.mark.parametrize("n", [3, 60])
def test_the_pile_query_count_does_not_grow_with_the_members(
    entity, ingest, as_reviewer, django_assert_max_num_queries, n
):
    hashes = entity(n)
    ingest(
        [
            {
                "type": "draft",
                "host": "qa-host",
                "id": "d-1",
                "namespace": "qa",
                "subject": "orders",
                "text": "Check every field twice.",
                "supersedes": hashes[:2],
                "drafted_by": "llm:x",
                "gates": {"ground": "pass", "verify": "pass"},
                "created_at": "2026-03-01T00:00:00Z",
            }
        ]
    )
    with django_assert_max_num_queries(PILE_MAX_QUERIES):
        response = as_reviewer.get("/pile/?host=qa-host&namespace=qa&subject=orders")
    assert len(members(parse(response.content))) == n


def test_a_nul_in_the_pile_address_is_refused_not_a_database_error(corpora, as_viewer):
    response = as_viewer.get("/pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice%00capture")
    assert response.status_code == 400
    assert parse(response.content).find(cls="problem").find("p").text == PILE_PARAMS_NUL


def test_nul_filters_are_ignored_on_the_queue(corpora, as_viewer):
    response = as_viewer.get("/?q=%00&namespace=%00")
    assert response.status_code == 200
    assert len(table_rows(parse(response.content), "queue-table")) == 2
