"""The decision log's rough edges a newcomer found: the empty log, one decision by its seq (the target of
"decision #N" links), reason codes in words, times and actions that break at sensible points.
spec: decisions.md ("The record", "Exports": the exports keep the raw values)."""

from __future__ import annotations

import json

from review.log.views import EMPTY_FILTERED, EMPTY_LOG
from review.models import Decision, ReasonCode
from tests.fixtures.log import row_seqs
from tests.html import parse
from tests.review.log.test_log_page import log, page  # noqa: F401 - the five-decision fixture


def test_an_empty_log_says_what_will_appear_there_and_offers_no_export(client, viewer, db):
    html = page(client, viewer)
    cell = parse(html).find("table", "decision-log").find("td")
    assert cell.text == EMPTY_LOG
    assert EMPTY_LOG == (
        "No decisions yet. Every retire, restore, consolidation and budget change will be recorded here."
    )
    assert "Export them" not in html
    assert "export.jsonl" not in html


def test_filters_that_leave_nothing_say_so_and_offer_no_export(client, viewer, log):  # noqa: F811
    html = page(client, viewer, "actor=ada&action=retire")
    assert parse(html).find("table", "decision-log").find("td").text == EMPTY_FILTERED
    assert "export.jsonl" not in html


def test_a_host_filter_naming_no_host_says_so(client, viewer, log):  # noqa: F811
    """Newcomer finding: "/decisions/?host=zzz" said only that no decision matched."""
    html = page(client, viewer, "host=zzz")
    assert parse(html).find("table", "decision-log").find("td").text == (
        f"There is no host named 'zzz'. {EMPTY_FILTERED}"
    )
    known = Decision.objects.values_list("host", flat=True).first()
    html = page(client, viewer, f"host={known}&actor=nobody")
    assert parse(html).find("table", "decision-log").find("td").text == EMPTY_FILTERED


def test_a_full_log_counts_its_rows_and_offers_both_exports(client, viewer, log):  # noqa: F811
    exports = parse(page(client, viewer)).find(cls="exports")
    assert exports.text.startswith("5 decisions. Export them: JSONL · CSV")


def test_seq_shows_that_one_decision(client, viewer, log):  # noqa: F811
    html = page(client, viewer, "seq=3")
    assert row_seqs(html) == [3]
    assert parse(html).find(cls="seq-only").text == "Decision #3 only. Show the whole log"


def test_seq_is_not_a_field_of_the_filter_bar(client, viewer, log):  # noqa: F811
    form = parse(page(client, viewer, "seq=3")).find("form", cls="filters")
    assert form.find("input", name="seq") is None


def test_a_seq_that_is_not_a_number_is_a_filter_error(client, viewer, log):  # noqa: F811
    html = page(client, viewer, "seq=abc")
    assert "seq: Enter a whole number." in html
    assert row_seqs(html) == []


def test_a_seq_too_big_for_the_database_is_a_filter_error(client, viewer, log):  # noqa: F811
    html = page(client, viewer, "seq=99999999999999999999")
    assert "seq: Ensure this value is less than or equal to 9223372036854775807." in html


def test_the_export_of_one_seq_has_that_record_only(client, viewer, log):  # noqa: F811
    client.force_login(viewer)
    body = b"".join(client.get("/review/decisions/export.jsonl?seq=4").streaming_content).decode()
    assert [json.loads(line)["seq"] for line in body.splitlines()] == [4]


def test_export_links_carry_the_seq(client, viewer, log):  # noqa: F811
    assert 'href="/review/decisions/export.csv?seq=4"' in page(client, viewer, "seq=4")


def test_reason_codes_are_words_in_the_filter_and_the_rows(client, viewer, reviewer, two_hosts):
    from lessons.core.text import lesson_hash
    from review.services.decisions import lessons_retire

    alpha, _beta = two_hosts
    lessons_retire(
        host=alpha,
        hashes=[lesson_hash("ns", "s", "rule 0")],
        actor=reviewer,
        reason="says rule 1 again",
        reason_code="restates_another",
    )
    html = page(client, viewer)
    options = parse(html).find("select", name="reason_code").find_all("option")
    assert [(o.attrs["value"], o.text) for o in options] == [
        ("", "any reason code"),
        ("duplicate", "duplicate"),
        ("restates_another", "restates another"),
        ("regressed", "regressed"),
        ("drifted", "drifted"),
        ("recurring", "recurring"),
        ("obsolete", "obsolete"),
        ("too_specific", "too specific"),
        ("other", "other"),
    ]
    assert '<span class="badge reason-code">restates another</span> says rule 1 again' in html
    assert "restates another: 1</li>" in html  # the chart's legend
    client.force_login(viewer)
    body = b"".join(client.get("/review/decisions/export.jsonl").streaming_content).decode()
    # the record keeps the value
    assert json.loads(body.splitlines()[-1])["reason_code"] == "restates_another"


def test_every_reason_code_label_is_its_value_in_words():
    assert dict(ReasonCode.choices) == {code: code.replace("_", " ") for code in ReasonCode.values}


def test_times_break_between_the_date_and_the_time_of_day(client, viewer, log):  # noqa: F811
    row = parse(page(client, viewer, "seq=3")).find("tr", id="decision-3")
    time = row.find_all("td")[1].find("time")
    assert time.attrs["datetime"] == "2026-03-10T12:00:00.000Z"
    assert [(c.tag, c.text) for c in time.children] == [
        ("span", "2026-03-10"),
        ("wbr", ""),
        ("span", "T12:00:00.000Z"),
    ]


def test_an_approval_action_may_break_after_its_underscore(client, viewer, reviewer, corpora):
    from lessons.models import Draft
    from review.services.consolidation import draft_reject

    draft_reject(draft=Draft.objects.get(ext_id="rec-adbuy-consolidate-0"), actor=reviewer, reason="no")
    html = page(client, viewer)
    assert '<code class="action-term">reject_<wbr>consolidation</code></span></td>' in html
