"""The consolidation editor: prefilled with one line per fact, its matrix region for htmx, submitting, and
the draft page of a consolidation written by a reviewer. spec: docs/reviewing.md, "Writing a
consolidation"; issue 22, Build 4."""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from django.urls import reverse

from lessons.core.written import TEXT_EMPTY, WAIVER_MISSING
from review.drafts.selectors import GATE_NOT_RUN_LABEL, ORIGIN_MODEL, ORIGIN_REVIEWER
from review.services.consolidation import DRAFT_BY_WRITER
from review.written.views import WRITTEN_NOTICE
from tests.html import parse
from tests.review.written.helpers import HOST, NS, PREFILL, SUBJECT, TEXTS, hashes, pile_records

QS = urlencode({"host": HOST, "namespace": NS, "subject": SUBJECT})
WRITE = reverse("review:pile_write") + "?" + QS
MATRIX = reverse("review:pile_write_matrix") + "?" + QS
QUERIES = 7  # session, user, groups; host; lessons (recurrence joined); stored facts; areev cursor
EDITOR_QUERIES = QUERIES + 1  # a page read: the data version too (its ETag, review/middleware.py)
KEEPS_ALL = "Wrap timestamp columns in `to_utc`, alias them with an `at` suffix; keep `amount_cents` as integer cents."


@pytest.fixture
def pile(ingest):
    records = pile_records()
    assert ingest(records).ok
    return hashes(records)


def _version():
    from tests.fixtures.drafts import entity_version

    return entity_version(HOST, NS, SUBJECT)


def _area(doc) -> str:
    """The editor's text as typed (line breaks kept)."""
    return "".join(doc.find("textarea", id="id_text").children).strip("\n")


def _post(client, pile, text, **extra):
    return client.post(
        WRITE, {"text": text, "members": pile, "pile_version": _version(), "submit": "1", **extra}
    )


def test_the_editor_is_prefilled_with_one_line_per_fact_and_every_member_chosen(
    pile, as_reviewer, django_assert_max_num_queries
):
    with django_assert_max_num_queries(8):
        response = as_reviewer.get(WRITE)
    assert response.status_code == 200
    doc = parse(response.content.decode())
    assert _area(doc) == PREFILL
    checked = [
        el.attrs["value"]
        for el in doc.find_all("input", type="checkbox", name="members")
        if "checked" in el.attrs
    ]
    assert checked == pile
    assert (
        doc.find(id="write-matrix").find(data_testid="text-count").text == f"{len(PREFILL)} / 1000 characters"
    )
    # The restatement's keeper leaves out the other's `at`: the reviewer waives it or writes it back.
    assert [el.attrs["name"] for el in doc.find(data_testid="waivers").find_all("input")] == ["waive-at"]


def test_the_textarea_asks_for_the_matrix_as_the_reviewer_types(pile, as_reviewer):
    doc = parse(as_reviewer.get(WRITE).content.decode())
    area = doc.find("textarea", id="id_text")
    assert area.attrs["hx-post"] == MATRIX
    assert area.attrs["hx-trigger"] == "input changed delay:400ms"
    assert area.attrs["hx-target"] == "#write-matrix"


def test_the_matrix_region_shows_what_the_text_drops_and_asks_for_waivers(pile, as_reviewer):
    text = "Wrap timestamp columns in `to_utc` before joining."
    data = {"text": text, "members": pile, "waive-at": "In the style guide."}
    response = as_reviewer.post(MATRIX, data, headers={"HX-Request": "true"})
    html = response.content.decode()
    assert html.startswith('\n      <div id="write-matrix"')  # the region alone
    doc = parse(html)
    assert doc.find(data_testid="text-count").text == f"{len(text)} / 1000 characters"
    assert doc.find(data_testid="to-waive").text == "1 still to waive"
    assert doc.find("input", id="waive-at").attrs["value"] == "In the style guide."
    assert doc.find("input", id="waive-amount_cents").attrs["value"] == ""
    assert doc.find(data_testid="after-count").text == "1 / 2"


def test_submitting_makes_a_draft_written_by_the_reviewer(pile, as_reviewer):
    from lessons.models import Draft

    response = _post(as_reviewer, pile, KEEPS_ALL)
    draft = Draft.objects.get()
    assert response.status_code == 302
    assert response["Location"] == reverse("review:draft", args=[HOST, draft.ext_id])
    page = as_reviewer.get(response["Location"]).content.decode()
    assert WRITTEN_NOTICE.format(draft=draft.ext_id) in page
    doc = parse(page)
    assert doc.find(data_testid="draft-origin").text == ORIGIN_REVIEWER
    assert doc.find(data_testid="gate-ground").text == GATE_NOT_RUN_LABEL
    assert doc.find(data_testid="gate-verify").text == GATE_NOT_RUN_LABEL
    assert doc.find(data_testid="drafted-by").text == "user:rita"
    assert doc.find(data_testid="approve-blocked").find("p").text == DRAFT_BY_WRITER.format(
        user="rita", draft=draft.ext_id
    )
    assert ORIGIN_MODEL not in page


def test_a_missing_waiver_is_refused_with_the_text_kept(pile, as_reviewer):
    from lessons.models import Draft

    text = "Wrap timestamp columns in `to_utc` before joining."
    response = _post(as_reviewer, pile, text, **{"waive-at": "In the style guide."})
    assert response.status_code == 422
    doc = parse(response.content.decode())
    assert [p.text for p in doc.find(data_testid="write-errors").find_all("p", cls="field-error")] == [
        WAIVER_MISSING.format(anchor="`amount_cents`")
    ]
    assert _area(doc) == text
    assert not Draft.objects.exists()


def test_an_empty_text_is_refused(pile, as_reviewer):
    response = _post(as_reviewer, pile, "  ")
    assert response.status_code == 422
    assert TEXT_EMPTY in response.content.decode()


def test_a_changed_pile_is_refused_with_409_and_the_text_kept(pile, as_reviewer):
    from lessons.models import Draft

    response = as_reviewer.post(
        WRITE, {"text": KEEPS_ALL, "members": pile, "pile_version": "0" * 16, "submit": "1"}
    )
    assert response.status_code == 409
    doc = parse(response.content.decode())
    assert _area(doc) == KEEPS_ALL
    assert doc.find("input", type="hidden", name="pile_version").attrs["value"] == _version()
    assert not Draft.objects.exists()


def test_preview_shows_the_matrix_and_writes_nothing(pile, as_reviewer):
    from lessons.models import Draft

    response = as_reviewer.post(
        WRITE, {"text": TEXTS[0], "members": pile, "pile_version": _version(), "preview": "1"}
    )
    assert response.status_code == 200
    assert parse(response.content.decode()).find(data_testid="to-waive").text == "2 still to waive"
    assert not Draft.objects.exists()


def test_a_viewer_gets_no_editor_and_no_link(pile, as_viewer):
    assert as_viewer.get(WRITE).status_code == 403
    assert as_viewer.post(MATRIX, {"text": "x"}).status_code == 403
    pile_page = as_viewer.get(reverse("review:pile") + "?" + QS).content.decode()
    assert 'data-testid="write-consolidation"' not in pile_page


def test_the_pile_page_links_a_reviewer_to_the_editor(pile, as_reviewer):
    doc = parse(as_reviewer.get(reverse("review:pile") + "?" + QS).content.decode())
    assert doc.find("a", data_testid="write-consolidation").attrs["href"] == WRITE


def test_the_drafts_table_says_no_gate_ran(pile, reviewer, as_reviewer):
    _post(as_reviewer, pile, KEEPS_ALL)
    html = as_reviewer.get(reverse("review:pile") + "?" + QS).content.decode()
    assert '<span class="gate gate-not_run">not run: written by a reviewer</span>' in html


def test_a_member_retired_meanwhile_is_named_and_nothing_written(pile, reviewer, as_reviewer):
    from lessons.models import Draft, Host
    from review.services.decisions import lessons_retire
    from review.written.forms import MEMBER_GONE

    version = _version()
    lessons_retire(
        host=Host.objects.get(name=HOST), hashes=[pile[0]], actor=reviewer, reason="Restates another."
    )
    response = as_reviewer.post(
        WRITE, {"text": KEEPS_ALL, "members": pile, "pile_version": version, "submit": "1"}
    )
    assert response.status_code == 422
    assert MEMBER_GONE % {"value": pile[0]} in response.content.decode()
    assert not Draft.objects.exists()


def test_the_editor_and_its_matrix_read_a_fixed_number_of_queries(
    ingest, as_reviewer, django_assert_num_queries
):
    from tests.review.written.helpers import TEXTS as BASE

    records = pile_records(texts=[f"{t} Rule {i}." for i in range(20) for t in BASE][:40])
    assert ingest(records).ok
    with django_assert_num_queries(EDITOR_QUERIES):
        assert as_reviewer.get(WRITE).status_code == 200
    with django_assert_num_queries(QUERIES):
        as_reviewer.post(MATRIX, {"text": "x", "members": hashes(records)}, headers={"HX-Request": "true"})
