"""Where reviewers see outcomes (issue 24, Build 2): the decision's page with its evidence, the log's
outcome badge and filter, the revisit queue with the way back; query counts that do not grow with the
log. docs/decisions.md, "Outcomes"."""

from __future__ import annotations

from datetime import date

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lessons.core.outcomes import EVIDENCE_CORRECTIONS
from review.models import CalibrationCount
from review.outcomes.calibration import calibration_lines
from review.outcomes.views import EMPTY_CALIBRATION
from tests.builders import correction
from tests.fixtures.outcomes import HOST, OTHER, RETIRED, at, h, retire, session
from tests.html import inline_text, parse

pytestmark = pytest.mark.django_db


@pytest.fixture
def contradicted(outcome_host, reviewer, ingest):
    decision = retire(outcome_host, reviewer)
    assert ingest(session(1, hours=1, corrected=True) + session(2, hours=2, corrected=True)).ok
    return decision


def test_the_decision_page_shows_the_outcome_its_evidence_and_the_way_back(contradicted, as_viewer):
    page = parse(as_viewer.get(f"/decisions/{contradicted.seq}/").content)
    outcome = page.find("p", data_testid="outcome")
    assert inline_text(outcome).strip() == (
        "contradicted corrected on its topic again in 2 sessions after the retire."
    )
    rows = [[td.text for td in tr.find_all("td")] for tr in page.find("table").find_all("tr")[1:]]
    assert [r[1:] for r in rows] == [["s1", "2026-02-01 01:01:00"], ["s2", "2026-02-01 02:01:00"]]
    (link,) = [a for a in page.find_all("a") if a.text == "Restore the lesson"]
    assert link.attrs["href"] == f"/lessons/{HOST}/{h(RETIRED)}/"
    assert page.find("p", data_testid="more-corrections") is None  # all listed


def test_the_decision_page_says_how_many_corrections_it_does_not_list(
    outcome_host, reviewer, ingest, as_viewer
):
    decision = retire(outcome_host, reviewer)
    rows = []
    for n in range(1, EVIDENCE_CORRECTIONS + 4):
        rows += session(n, hours=n, corrected=True)
    assert ingest(rows).ok
    page = parse(as_viewer.get(f"/decisions/{decision.seq}/").content)
    assert len(page.find("table").find_all("tr")) == 1 + EVIDENCE_CORRECTIONS
    assert page.find("p", data_testid="more-corrections").text == (
        f"The first {EVIDENCE_CORRECTIONS} are listed; 3 more came after them by then."
    )


def test_a_decision_not_judged_yet_says_so_and_an_unknown_one_is_404(outcome_host, reviewer, as_viewer):
    from lessons.models import Lesson
    from review.outcomes.views import UNDONE_RETIRE
    from review.services.decisions import lesson_restore

    decision = retire(outcome_host, reviewer)
    page = parse(as_viewer.get(f"/decisions/{decision.seq}/").content)
    assert page.find("p", data_testid="outcome").text.startswith("Not judged yet")
    assert page.find("p", data_testid="undone") is None
    # the newcomer's finding: undone since, it says so whatever its outcome (here none yet)
    lesson_restore(lesson=Lesson.objects.get(hash=h(RETIRED)), actor=reviewer, reason="needed after all")
    page = parse(as_viewer.get(f"/decisions/{decision.seq}/").content)
    assert page.find("p", data_testid="outcome").text.startswith("Not judged yet")
    assert page.find("p", data_testid="undone").text == UNDONE_RETIRE
    for seq in ("999", "x1"):  # the app's own problem page, not Django's (a newcomer saw its debug page)
        response = as_viewer.get(f"/decisions/{seq}/")
        assert response.status_code == 404
        assert (
            parse(response.content).find("main").find("p").text == f"There is no decision #{seq} in the log."
        )


def test_the_log_shows_the_badge_and_filters_by_outcome(contradicted, as_viewer):
    page = parse(as_viewer.get("/decisions/").content)
    cell = page.find("tr", id=f"decision-{contradicted.seq}").find("td")
    assert inline_text(cell) == f"{contradicted.seq}contradicted"
    assert cell.find("a").attrs["href"] == f"/decisions/{contradicted.seq}/"
    shown = parse(as_viewer.get("/decisions/?outcome=contradicted").content)
    assert [tr.attrs["data-seq"] for tr in shown.find_all("tr") if "data-seq" in tr.attrs] == [
        str(contradicted.seq)
    ]
    none = parse(as_viewer.get("/decisions/?outcome=supported").content)
    assert [tr for tr in none.find_all("tr") if "data-seq" in tr.attrs] == []


def test_revisit_lists_the_contradicted_newest_first_with_the_way_back(contradicted, as_viewer):
    page = parse(as_viewer.get("/decisions/revisit/").content)
    (row,) = page.find("tbody").find_all("tr")
    cells = row.find_all("td")
    assert cells[2].text == "corrected on its topic again in 2 sessions after the retire"
    assert cells[3].find("a").attrs["href"] == f"/lessons/{HOST}/{h(RETIRED)}/"


def test_revisit_is_empty_and_its_queries_do_not_grow(outcome_host, reviewer, as_viewer, ingest):
    page = parse(as_viewer.get("/decisions/revisit/").content)
    assert page.find("p", cls="empty").text.startswith("No contradicted decision")
    retire(outcome_host, reviewer)
    assert ingest(session(1, hours=1, corrected=True) + session(2, hours=2, corrected=True)).ok
    with CaptureQueriesContext(connection) as one:
        as_viewer.get("/decisions/revisit/")
    # A second contradicted decision: the other lesson retired, its topic corrected in two sessions.
    retire(outcome_host, reviewer, text=OTHER)
    rows = []
    for n in (3, 4):
        rows += session(n, hours=n, corrected=False, shown=RETIRED)
        rows.append(
            correction(
                host=HOST,
                session=f"s{n}",
                id=f"g{n}",
                text="The gross_amount needs two decimals",
                corrected_at=at(n + 0.1),
            )
        )
    assert ingest(rows).ok
    with CaptureQueriesContext(connection) as two:
        page = parse(as_viewer.get("/decisions/revisit/").content)
    assert len(page.find("tbody").find_all("tr")) == 2
    assert len(one) == len(two)


def test_calibration_shows_a_reviewer_their_own_and_an_admin_the_team(
    contradicted, outcome_host, reviewer, admin_user, client, ingest
):
    """Rita's contradicted retire (February, no reason code); Ada's later retire of the other lesson,
    quiet afterwards: too early. Rita sees hers only; Ada (admin) sees the team's and each reviewer's."""
    from datetime import UTC, datetime

    from review.services.decisions import lessons_retire

    lessons_retire(
        host=outcome_host,
        hashes=[h(OTHER)],
        actor=admin_user,
        reason="obsolete",
        reason_code="obsolete",
        now=datetime(2026, 3, 2, tzinfo=UTC),
    )
    from review.services.outcomes import outcomes_refresh

    outcomes_refresh(host=outcome_host)

    def tables(user):
        client.force_login(user)
        page = parse(client.get("/decisions/calibration/").content)
        return [
            (
                t.attrs["aria-label"],
                [[td.text for td in tr.find_all("td")][:7] for tr in t.find("tbody").find_all("tr")],
            )
            for t in page.find_all("table")
        ]

    rita = ["2026-02", "every host", "—", "1", "0%", "100%", "0"]
    ada = ["2026-03", "every host", "obsolete", "0", "—", "—", "1"]
    assert tables(reviewer) == [("Your decisions", [rita])]
    assert tables(admin_user) == [
        ("Your decisions", [ada]),
        ("The team", [ada, rita]),
        (admin_user.username, [ada]),
        ("rita", [rita]),
    ]
    # one host asked for: its lines name it, and their links filter the log by it
    client.force_login(reviewer)
    page = parse(client.get(f"/decisions/calibration/?host={HOST}").content)
    cells = [td.text for td in page.find("tbody").find("tr").find_all("td")]
    assert cells[:7] == ["2026-02", HOST, "—", "1", "0%", "100%", "0"]
    assert page.find("tbody").find("a").attrs["href"] == f"/decisions/?host={HOST}&from=2026-02-01&actor=rita"
    assert parse(client.get("/decisions/calibration/?host=elsewhere").content).find("p", "empty").text == (
        EMPTY_CALIBRATION
    )


def test_calibration_shows_six_months_a_page_newest_first(outcome_host, reviewer, client):
    """Eight months with decisions: the first page shows the newest six and links to the earlier two."""
    from datetime import UTC, datetime

    from lessons.models import Lesson
    from review.outcomes.calibration import MONTHS_SHOWN
    from review.services.decisions import lesson_restore, lessons_retire
    from review.services.outcomes import outcomes_refresh

    for month in range(1, 9):  # a retire, then (but the last) its restore, in each month of 2026 from January
        lessons_retire(
            host=outcome_host,
            hashes=[h(OTHER)],
            actor=reviewer,
            reason="r",
            now=datetime(2026, month, 2, tzinfo=UTC),
        )
        if month < 8:
            lesson = Lesson.objects.get(hash=h(OTHER))
            lesson_restore(
                lesson=lesson, actor=reviewer, reason="b", now=datetime(2026, month, 3, tzinfo=UTC)
            )
    outcomes_refresh(host=outcome_host)
    client.force_login(reviewer)

    def months(url):
        page = parse(client.get(url).content)
        rows = [tr.find("td").text for tr in page.find("tbody").find_all("tr")]
        links = {a.text: a.attrs["href"] for a in page.find("p", data_testid="months").find_all("a")}
        return rows, links

    assert MONTHS_SHOWN == 6
    rows, links = months("/decisions/calibration/")
    assert rows == ["2026-08", "2026-07", "2026-06", "2026-05", "2026-04", "2026-03"]
    assert links == {"earlier months": "?before=2026-03-01"}
    rows, links = months("/decisions/calibration/" + links["earlier months"])
    assert rows == ["2026-02", "2026-01"]
    assert links == {"newest months": "?"}


def test_the_api_gives_outcomes_beside_the_hashed_records(contradicted, call, make_token):
    """Issue 24: ``GET /api/v1/decisions`` carries each decision's outcome in ``outcomes`` by seq,
    outside the records (whose hash covers only the record); the schema says it is derived."""
    body = call("get", "/decisions", token=make_token()).json()
    (record,) = body["decisions"]
    assert "outcome" not in record
    got = body["outcomes"][str(contradicted.seq)]
    assert (got["outcome"], got["sessions_after"]) == ("contradicted", 2)
    assert got["evidence"]["why"] == "corrected on its topic again in 2 sessions after the retire"
    assert got["computed_at"].endswith("Z")


def test_the_openapi_schema_says_outcomes_are_derived(client, db):
    schema = client.get("/api/v1/openapi.json").json()
    described = schema["components"]["schemas"]["DecisionsOut"]["properties"]["outcomes"]["description"]
    assert described.startswith("DERIVED, not part of any hashed record")


def test_digits_that_are_not_ascii_are_no_decision_number(contradicted, as_viewer):
    """The attacker's finding: "²" passed str.isdigit and int() failed (a 500); "٣" showed decision #3."""
    for seq in ("%C2%B2", "%D9%A3", "9" * 30):
        response = as_viewer.get(f"/decisions/{seq}/")
        assert response.status_code == 404, seq
    for before in ("%C2%B2", "9" * 30):
        assert as_viewer.get(f"/decisions/revisit/?before={before}").status_code == 200


def test_a_decision_undone_since_offers_no_way_back(contradicted, reviewer, as_viewer):
    """The attacker's finding: a retire whose lesson a later decision restored still offered "Restore the
    lesson" on its page and in revisit."""
    from lessons.models import Lesson
    from review.outcomes.views import UNDONE_RETIRE
    from review.services.decisions import lesson_restore

    lesson_restore(lesson=Lesson.objects.get(hash=h(RETIRED)), actor=reviewer, reason="needed after all")
    page = parse(as_viewer.get(f"/decisions/{contradicted.seq}/").content)
    assert [a for a in page.find_all("a") if a.text == "Restore the lesson"] == []
    assert page.find("p", data_testid="undone").text == UNDONE_RETIRE
    revisit = parse(as_viewer.get("/decisions/revisit/").content)
    row = revisit.find("tr", data_seq=str(contradicted.seq))
    assert row.find_all("td")[3].text == UNDONE_RETIRE


def test_an_empty_calibration_says_where_outcomes_come_from_and_a_viewer_whose_decisions_it_shows(
    outcome_host, reviewer, viewer, client
):
    """The newcomer's finding: an empty page said only "No decision of yours has an outcome yet", to a
    viewer too, who makes no decisions."""
    retire(outcome_host, reviewer)  # not judged yet: no outcome
    client.force_login(reviewer)
    empty = parse(client.get("/decisions/calibration/").content).find("p", "empty").text
    assert empty == (
        "No decision of yours has an outcome yet: outcomes come from the sessions, corrections and verdicts a"
        " host sends after a decision."
    )
    client.force_login(viewer)
    assert parse(client.get("/decisions/calibration/").content).find("p", "empty").text == (
        "A viewer makes no decisions: this page shows a reviewer their own decisions, and an admin the team's."
    )


def test_an_approves_page_links_its_draft_and_the_consolidation_it_created(adbuy, second_reviewer, as_viewer):
    """The newcomer's finding: decision #9 of the demo named its draft and the lesson it created as plain
    text; the page now links both (and the draft from its head line)."""
    from lessons.models import Draft
    from review.services.consolidation import draft_approve
    from tests.fixtures.drafts import ADBUY, CONSOLIDATE

    draft = Draft.objects.get(host__name=ADBUY, ext_id=CONSOLIDATE)
    decision = draft_approve(draft=draft, actor=second_reviewer, reason="Ten rules restate four facts.")
    draft.refresh_from_db()
    created = draft.created_lesson.hash
    page = parse(as_viewer.get(f"/decisions/{decision.seq}/").content)
    record = page.find("dl", cls="record")
    links = [(a.text, a.attrs["href"]) for a in record.find_all("a")]
    assert links == [
        (CONSOLIDATE, f"/drafts/{ADBUY}/{CONSOLIDATE}/"),
        (created, f"/lessons/{ADBUY}/{created}/"),
    ]
    head = [a.text for a in page.find("div", cls="page-head").find_all("a")]
    assert head == ["In the log", "the pile", "the draft"]


def test_calibration_names_a_reason_code_by_its_label(outcome_host, reviewer, client):
    """The newcomer's finding: the calibration table showed ``restates_another`` where the log, the pile and
    the decision page say "restates another"."""
    from datetime import UTC, datetime

    from review.services.decisions import lessons_retire
    from review.services.outcomes import outcomes_refresh

    lessons_retire(
        host=outcome_host,
        hashes=[h(OTHER)],
        actor=reviewer,
        reason="Said by the other rule.",
        reason_code="restates_another",
        now=datetime(2026, 3, 2, tzinfo=UTC),
    )
    outcomes_refresh(host=outcome_host)
    client.force_login(reviewer)
    row = parse(client.get("/decisions/calibration/").content).find("tbody").find("tr")
    assert [td.text for td in row.find_all("td")][:3] == ["2026-03", "every host", "restates another"]


@pytest.mark.django_db
def test_calibration_lines_sum_the_hosts_unless_one_is_asked_for():
    """The rollup's rows of two hosts, two reviewers and two codes in one month: summed over the hosts into
    one line a code (and per reviewer), or, on one host, that host's rows only."""
    month = date(2026, 3, 1)
    for actor, host, code, outcome, n in [
        ("rita", "a", "", "supported", 2),
        ("rita", "b", "", "supported", 3),
        ("rita", "b", "", "contradicted", 1),
        ("ada", "a", "", "contradicted", 4),
        ("ada", "a", "obsolete", "too_early", 5),
    ]:
        CalibrationCount.objects.create(
            actor=actor, month=month, host=host, reason_code=code, outcome=outcome, n=n
        )

    def shown(lines):
        return [(x.host, x.reason_code, dict(x.counts)) for x in lines]

    team, by_actor = calibration_lines(actor=None, months=[month])
    assert shown(team) == [
        ("", "", {"supported": 5, "contradicted": 5}),
        ("", "obsolete", {"too_early": 5}),
    ]
    assert {who: shown(lines) for who, lines in by_actor.items()} == {
        "ada": [("", "", {"contradicted": 4}), ("", "obsolete", {"too_early": 5})],
        "rita": [("", "", {"supported": 5, "contradicted": 1})],
    }
    mine, _ = calibration_lines(actor="rita", months=[month], host="b")
    assert shown(mine) == [("b", "", {"supported": 3, "contradicted": 1})]
