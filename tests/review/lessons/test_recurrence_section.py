"""Recurrence on the pages: the lesson page's section and the unmatched topics page of a host.

spec: docs/piles-and-recurrence.md; CONTRIBUTING.md (query counts that cannot grow with the data, untrusted text escaped).
"""

from __future__ import annotations

import pytest

from lessons.recurrence.lesson import MAX_QUERIES
from tests.builders import correction, exposure, host, lesson
from tests.html import parse, table_rows
from tests.lessons.recurrence.builders import ENTITY, HOST, OCT_1, clock, correction_id, hash_of

ADVERTISER = "cc844636d4273cf9e98d465b13852a8b56a4652619ad97a5752531672a8ce79f"
FLIGHT_FROM_TO = "531d6e53751e04ee0685bb20f474b91545f844bf3f95b8ed934dc9601a59fc67"
BOTH_FLIGHT_DATES = "e0b6ccc348a5689fa6ecec10abc36cb08d16e742253179efdaef4926a8e97fa3"
L_0A07_CURRENT = "590b48ce4f04fbc6f6d8c886f5bf751fbdc53b0d02a1c746ca441c7a80bcf0cf"
# The lesson page's own queries (tests/review/lessons/test_lesson.py) plus the recurrence section's.
PAGE_MAX_QUERIES = 8 + MAX_QUERIES
TEXT = "Convert `*_at` timestamp columns with `to_utc` in staging models."
ADVICE = "No, convert the `created_at` timestamps with `to_utc`."


def section(response):
    assert response.status_code == 200
    return parse(response.content).find("section", cls="lesson-recurrence")


def test_the_advertiser_lesson_page_lists_both_recurred_corrections_by_session(corpora, as_viewer):
    page = section(as_viewer.get(f"/lessons/adbuy-desk/{ADVERTISER}/"))
    rows = table_rows(page, "recurrence-sessions")
    text = "Advertiser should be the sponsoring committee named on the order, not the station."
    assert rows == [
        [
            "ses_a05",
            "2026-02-03T00:00:00.000Z",
            "2026-02-03T00:01:45.000Z turn 2026-02-03T00:01:00.000Z",
            "recurred",
            text,
            "\u2014",
        ],
        [
            "ses_a02",
            "2026-01-31T00:00:00.000Z",
            "2026-01-31T00:01:45.000Z turn 2026-01-31T00:01:00.000Z",
            "recurred",
            text,
            "\u2014",
        ],
    ]
    wide, narrow = page.find_all("svg", cls="recurrence-timeline")  # CSS shows the one that fits
    for svg in (wide, narrow):
        assert len(svg.find_all("g", cls="m-recurred")) == 2  # two corrections
        assert len(svg.find_all("g", cls="m-shown_current")) == 8  # eight sessions
        assert len(svg.find_all("g", cls="m-verdict")) == 2
    legend = page.find("ul", cls="timeline-legend")
    assert [len(legend.find_all("g", cls=f"m-{kind}")) for kind in ("recurred", "shown_current")] == [1, 1]


def test_an_ambiguous_correction_links_the_other_candidate(corpora, as_viewer):
    page = section(as_viewer.get(f"/lessons/adbuy-desk/{FLIGHT_FROM_TO}/"))
    (row,) = table_rows(page, "recurrence-sessions")
    assert (row[0], row[3], row[5]) == ("ses_a07", "ambiguous", "e0b6ccc3\u2026")
    links = [a.attrs["href"] for a in page.find("table", cls="recurrence-sessions").find_all("a")]
    assert links == [f"/lessons/adbuy-desk/{BOTH_FLIGHT_DATES}/"]


def test_an_earlier_version_page_points_to_the_version_holding_the_counts(corpora, as_viewer):
    from lessons.models import Lesson

    earlier = Lesson.objects.get(host__name="warehouse-sql", lesson_id="L-0a07", status="superseded")
    page = section(as_viewer.get(f"/lessons/warehouse-sql/{earlier.hash}/"))
    notice = page.find("div", cls="notice")
    assert "not the current text of its lesson key" in notice.text
    assert notice.find("a").attrs["href"] == f"/lessons/warehouse-sql/{L_0A07_CURRENT}/"
    outcomes = [row[3] for row in table_rows(page, "recurrence-sessions")]
    assert outcomes == ["recurred", "recurred", "earlier version shown"]


def test_the_same_text_on_another_host_is_shown_side_by_side(ingest, as_viewer):
    records = [
        host(name="desk"),
        host(name="lab"),
        lesson(host="desk", **ENTITY, text=TEXT, created_at=OCT_1),
        lesson(host="lab", **ENTITY, text=TEXT, created_at=OCT_1, status="retracted"),
    ]
    for session in ("s1", "s2"):
        records += [
            exposure(host="lab", session=session, shown_at=clock("10:00"), lesson=hash_of(TEXT)),
            correction(
                host="lab",
                session=session,
                id=correction_id(session, "10:01"),
                text=ADVICE,
                corrected_at=clock("10:01"),
                turn_started_at=clock("10:00:30"),
            ),
        ]
    assert ingest(records).ok
    page = section(as_viewer.get(f"/lessons/desk/{hash_of(TEXT)}/"))
    assert table_rows(page, "recurrence-hosts") == [
        [
            "desk (this)",
            hash_of(TEXT)[:8],
            "live",
            "not applied by the loop",
            "0",
            "0",
            "0",
            "0",
            "0",
            "0",
            "",
        ],
        [
            "lab",
            hash_of(TEXT)[:8],
            "retracted",
            "not applied by the loop",
            "2",
            "2 in 2",
            "0",
            "0",
            "0",
            "0",
            "recurring",
        ],
    ]


def test_correction_and_session_texts_are_escaped_on_the_page(ingest, as_viewer):
    hostile = f"<script>alert(1)</script> {ADVICE}"
    records = [
        host(name=HOST),
        lesson(host=HOST, **ENTITY, text=TEXT, created_at=OCT_1),
        exposure(host=HOST, session="<b>s</b>", shown_at=clock("10:00"), lesson=hash_of(TEXT)),
        correction(
            host=HOST,
            session="<b>s</b>",
            id=correction_id("<b>s</b>", "10:01"),
            text=hostile,
            corrected_at=clock("10:01"),
            turn_started_at=clock("10:00:30"),
        ),
    ]
    assert ingest(records).ok
    body = as_viewer.get(f"/lessons/desk/{hash_of(TEXT)}/").content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "<b>s</b>" not in body
    # the table and the marker's tooltip in each drawing (wide and narrow)
    assert body.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 3


@pytest.mark.parametrize("sessions", [2, 250])
def test_the_lesson_page_query_count_does_not_grow_with_exposures(
    ingest, as_viewer, django_assert_max_num_queries, sessions
):
    records = [
        host(name=HOST),
        lesson(host=HOST, **ENTITY, text=TEXT, created_at=OCT_1),
        lesson(
            host=HOST,
            **ENTITY,
            text="Use `orders_v2` for revenue models in staging models.",
            created_at=OCT_1,
        ),
    ]
    for i in range(sessions):
        records += [
            exposure(host=HOST, session=f"s{i}", shown_at=clock("10:00"), lesson=hash_of(TEXT)),
            exposure(
                host=HOST,
                session=f"s{i}",
                shown_at=clock("10:00"),
                lesson=hash_of("Use `orders_v2` for revenue models in staging models."),
            ),
            correction(
                host=HOST,
                session=f"s{i}",
                id=correction_id(f"s{i}", "10:01"),
                text=f"{ADVICE} In staging models too, case {i}.",
                corrected_at=clock("10:01"),
                turn_started_at=clock("10:00:30"),
            ),
        ]
    assert ingest(records).ok
    with django_assert_max_num_queries(PAGE_MAX_QUERIES):
        page = section(as_viewer.get(f"/lessons/desk/{hash_of(TEXT)}/"))
    rows = table_rows(page, "recurrence-sessions")
    assert len(rows) == min(sessions, 200)
    # Every charged session names its first exposure, also those beyond the 200 drawn.
    assert {row[1] for row in rows} == {"2026-10-05T10:00:00.000Z"}


def test_the_unmatched_topics_page_lists_cycle_year_with_its_corrections(corpora, as_viewer):
    page = parse(as_viewer.get("/hosts/adbuy-desk/unmatched-topics/").content)
    rows = table_rows(page, "unmatched-topics")
    assert [row[:2] for row in rows] == [["cycle_year", "2"]]
    assert rows[0][2] == (
        "ses_a08 2026-02-06T00:01:45.000Z Please double-check the `cycle_year` field, it was wrong again. "
        "ses_a04 2026-02-02T00:01:45.000Z "
        "That invoice belongs to the 2026 cycle, check the `cycle_year` field."
    )


def test_a_host_without_unmatched_topics_says_so(corpora, as_viewer):
    response = as_viewer.get("/hosts/warehouse-sql/unmatched-topics/")
    assert response.status_code == 200
    main = parse(response.content).find("main")
    assert main.find("table") is None
    (empty,) = main.find_all(cls="empty")
    assert empty.text == (
        "No unmatched topic. "
        "No backticked name was corrected in two or more sessions without a live lesson anchoring it."
    )


def test_an_unknown_host_is_a_404_naming_it(db, as_viewer):
    response = as_viewer.get("/hosts/nowhere/unmatched-topics/")
    assert response.status_code == 404
    assert "There is no host &#x27;nowhere&#x27;." in response.content.decode()


def test_anonymous_visitors_are_sent_to_sign_in(corpora, outsider):
    response = outsider.get("/hosts/adbuy-desk/unmatched-topics/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_the_hosts_page_links_each_host_s_unmatched_topics(corpora, as_viewer):
    links = parse(as_viewer.get("/hosts/").content).find("p", cls="unmatched-topics-links").find_all("a")
    assert [a.attrs["href"] for a in links] == [
        "/hosts/adbuy-desk/unmatched-topics/",
        "/hosts/support-triage/unmatched-topics/",
        "/hosts/warehouse-sql/unmatched-topics/",
    ]
