"""The lesson page: facts, versions, verdict history, recurrence, decisions; restoring a retired lesson."""

from __future__ import annotations

import pytest

from lessons.core.text import format_datetime
from lessons.models import Host, Lesson
from lessons.recurrence.lesson import MAX_QUERIES as RECURRENCE_SECTION_MAX_QUERIES
from review.lessons.lookups import LESSON_HASH_INVALID, LESSON_UNKNOWN
from review.lessons.views import RESTORED_NOTICE
from review.models import Decision
from review.services.decisions import lessons_retire
from tests.html import inline_text, parse, table_rows

# The page's own queries, plus the recurrence section's (lessons.recurrence.lesson).
LESSON_MAX_QUERIES = 8 + RECURRENCE_SECTION_MAX_QUERIES


def url(lesson: Lesson) -> str:
    return f"/lessons/{lesson.host.name}/{lesson.hash}/"


def facts(page) -> dict[str, str]:
    return {div.find("dt").text: div.find("dd").text for div in page.find("dl", "facts").find_all("div")}


@pytest.fixture
def l0a07(corpora) -> Lesson:
    return Lesson.objects.get(host__name="warehouse-sql", lesson_id="L-0a07", status="live")


def test_the_lesson_page_shows_text_and_facts(l0a07, as_viewer):
    page = parse(as_viewer.get(url(l0a07)).content)
    assert page.find("blockquote", "full-text").text == (
        "Filter test accounts with `is_internal = false` in every revenue and retention query."
    )
    assert facts(page) == {
        "Hash": l0a07.hash,
        "Status": "live",
        "Kind": "lesson",
        "Origin": "\u2014",
        "Lesson id / store": "L-0a07 / team-playbook",
        "Helpful / harmful / applied": "\u2014 / \u2014 / \u2014",
        "Created": "2026-01-24T00:00:00.000Z",
    }


def test_the_lesson_page_lists_every_version_of_its_lesson_id(l0a07, as_viewer):
    older = Lesson.objects.get(lesson_id="L-0a07", status="superseded")
    page = parse(as_viewer.get(url(l0a07)).content)
    assert table_rows(page, "versions") == [
        [older.hash[:8], "superseded", "Exclude internal accounts from revenue queries.", "2026-01-19"],
        [
            f"{l0a07.hash[:8]} (this)",
            "live",
            "Filter test accounts with `is_internal = false` in every revenue and retention query.",
            "2026-01-24",
        ],
    ]


def test_the_lesson_page_shows_the_verdict_history_newest_first(corpora, as_viewer):
    lesson = Lesson.objects.get(host__name="adbuy-desk", hash__startswith="36727f00")
    page = parse(as_viewer.get(url(lesson)).content)
    assert table_rows(page, "verdicts") == [
        ["held", "field_accuracy", "not reported", "7 d", "2026-01-22T01:00:00.000Z"],
        ["held", "field_accuracy", "not reported", "1 d", "2026-01-16T01:00:00.000Z"],
    ]


def test_a_lesson_without_verdicts_says_not_applied_by_the_loop(l0a07, as_viewer):
    page = parse(as_viewer.get(url(l0a07)).content)
    assert page.find("table", "verdicts") is None
    note = page.find("abbr", title="No Verify-gate verdict has been recorded for this lesson")
    assert note.text == "not applied by the loop"
    assert "not applied by the loop : no Verify-gate verdict was received for this lesson." in page.text


def test_the_lesson_page_links_back_to_its_pile(l0a07, as_viewer):
    page = parse(as_viewer.get(url(l0a07)).content)
    links = {a.text: a.attrs["href"] for a in page.find(cls="lesson-head").find_all("a")}
    assert links["back to its pile"] == "/pile/?host=warehouse-sql&namespace=analytics&subject=revenue_models"


def test_the_lesson_page_lists_the_decisions_on_it(corpora, as_viewer, reviewer):
    host = Lesson.objects.get(hash__startswith="3d46cb35").host
    lessons_retire(
        host=host,
        hashes=[Lesson.objects.get(hash__startswith="3d46cb35").hash],
        actor=reviewer,
        reason="Drifted <b>twice</b>",
        reason_code="drifted",
    )
    lesson = Lesson.objects.get(hash__startswith="3d46cb35")
    response = as_viewer.get(url(lesson))
    rows = table_rows(parse(response.content), "decisions")
    at = format_datetime(Decision.objects.get().at)
    assert rows == [
        ["1", at, "rita", "retire a lesson retire", "drifted", "Drifted <b>twice</b>", "awaiting the host"]
    ]
    seq_link = parse(response.content).find("table", "decisions").find("td").find("a")
    assert seq_link.attrs["href"] == "/decisions/?seq=1"  # the # column opens that decision in the log
    assert "Drifted &lt;b&gt;twice&lt;/b&gt;" in response.content.decode()


def test_a_retired_lesson_offers_reviewers_a_restore_form_and_viewers_none(corpora, client, viewer, reviewer):
    lesson = Lesson.objects.get(hash__startswith="3d46cb35")
    lessons_retire(host=lesson.host, hashes=[lesson.hash], actor=reviewer, reason="drifted")
    client.force_login(viewer)
    assert parse(client.get(url(lesson)).content).find("form", cls="restore") is None
    client.force_login(reviewer)
    form = parse(client.get(url(lesson)).content).find("form", cls="restore")
    assert form.attrs["action"] == f"/lessons/adbuy-desk/{lesson.hash}/restore/"


def test_a_live_lesson_offers_no_restore_form(l0a07, as_reviewer):
    assert parse(as_reviewer.get(url(l0a07)).content).find("form", cls="restore") is None


def test_a_reviewer_restores_a_retired_lesson(corpora, as_reviewer, reviewer):
    lesson = Lesson.objects.get(hash__startswith="3d46cb35")
    lessons_retire(host=lesson.host, hashes=[lesson.hash], actor=reviewer, reason="drifted")
    seen = parse(as_reviewer.get(url(lesson)).content).find("input", name="pile_version").attrs["value"]
    response = as_reviewer.post(
        url(lesson) + "restore/",
        {"reason": "It drifted back.", "reason_code": "other", "pile_version": seen},
        follow=True,
    )
    assert response.redirect_chain == [(url(lesson), 302)]
    page = parse(response.content)
    notice = page.find(cls="notices").find("span")
    assert inline_text(notice) == RESTORED_NOTICE.format(short=lesson.hash[:8], seq=2)
    assert notice.find("a").attrs["href"] == "/decisions/?seq=2"
    assert [r[3] for r in table_rows(page, "decisions")] == [
        "retire a lesson retire",
        "restore a lesson restore",
    ]
    lesson.refresh_from_db()
    assert lesson.status == "live"


def test_viewers_are_refused_a_restore_post(corpora, as_viewer):
    lesson = Lesson.objects.get(hash__startswith="3d46cb35")
    response = as_viewer.post(url(lesson) + "restore/", {"reason": "x", "pile_version": "x"})
    assert response.status_code == 403
    assert Decision.objects.count() == 0


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("/lessons/adbuy-desk/xyz/", LESSON_HASH_INVALID.format(hash="xyz")),
        ("/lessons/adbuy-desk/" + "0" * 64 + "/", LESSON_UNKNOWN.format(host="adbuy-desk", hash="0" * 64)),
    ],
)
def test_an_unknown_lesson_is_a_404_that_says_why(corpora, as_viewer, path, message):
    response = as_viewer.get(path)
    assert response.status_code == 404
    assert parse(response.content).find(cls="problem").find("p").text == message


def test_lesson_text_is_escaped_on_the_lesson_page(entity, as_viewer):
    hashes = entity(3, texts=["<script>alert(1)</script> first", "second", "third"])
    body = as_viewer.get(f"/lessons/qa-host/{hashes[0]}/").content.decode()
    assert "<script>alert(1)</script>" not in body
    assert "&lt;script&gt;alert(1)&lt;/script&gt; first" in body


@pytest.mark.parametrize("n", [3, 60])
def test_the_lesson_query_count_does_not_grow_with_the_entity(
    entity, as_reviewer, reviewer, django_assert_max_num_queries, n
):
    hashes = entity(n, lesson_ids=True)
    lessons_retire(host=Host.objects.get(name="qa-host"), hashes=hashes[:2], actor=reviewer, reason="dup")
    with django_assert_max_num_queries(LESSON_MAX_QUERIES):
        response = as_reviewer.get(f"/lessons/qa-host/{hashes[0]}/")
    assert response.status_code == 200
    assert parse(response.content).find("form", cls="restore") is not None


SCRIPT = "<script>alert(1)</script>"


def test_untrusted_text_is_escaped_on_every_page(ingest, client, reviewer):
    """Lesson text, subjects and host descriptions come from hosts (a model wrote them): never raw HTML."""
    records = [
        {"type": "host", "name": "xss-host", "max_active": 1, "budget_enabled": True, "description": SCRIPT},
        *(
            {
                "type": "lesson",
                "host": "xss-host",
                "namespace": "ns",
                "subject": "s<b>",
                "text": f"{SCRIPT} {i}",
                "created_at": f"2026-01-0{i + 1}T00:00:00Z",
            }
            for i in range(2)
        ),
    ]
    assert ingest(records).ok
    lesson = Lesson.objects.filter(host__name="xss-host").order_by("created_at").first()
    client.force_login(reviewer)
    pages = [
        "/",
        f"/?q={SCRIPT}",
        "/pile/?host=xss-host&namespace=ns&subject=s<b>",
        url(lesson),
        "/hosts/",
    ]
    for path in pages:
        response = client.get(path)
        assert response.status_code == 200, path
        body = response.content.decode()
        assert SCRIPT not in body and "s<b>" not in body, path
    assert "&lt;script&gt;alert(1)&lt;/script&gt; 0" in client.get(url(lesson)).content.decode()
    assert "entity:ns/<wbr>s&lt;b&gt;" in client.get("/").content.decode()


def test_a_nul_in_the_lesson_host_is_an_unknown_lesson(corpora, client, viewer):
    client.force_login(viewer)
    response = client.get("/lessons/adbuy%00desk/" + "0" * 64 + "/")
    assert response.status_code == 404
    assert parse(response.content).find(cls="problem").find("p").text == LESSON_UNKNOWN.format(
        host="adbuy\x00desk", hash="0" * 64
    )


def test_a_viewer_is_told_why_the_lesson_page_has_no_retire_form(l0a07, client, viewer, reviewer):
    """Newcomer finding: the retire form was simply missing for a viewer; the pile page says why."""
    client.force_login(viewer)
    why = parse(client.get(url(l0a07)).content).find(data_testid="why-no-retire")
    assert why.text == (
        f"No retire form: you are signed in as {viewer.username} (role viewer), and retiring a lesson needs"
        " the reviewer role."
    )
    client.force_login(reviewer)
    page = parse(client.get(url(l0a07)).content)
    assert page.find(data_testid="why-no-retire") is None and page.find("form", cls="retire-one") is not None
