"""A text a session was shown that is no stored version of its lesson is kept with the lesson key, and a
correction matching only that text counts as ``earlier_version`` (issue 11, item 5).

spec: docs/piles-and-recurrence.md, "Attributing one correction" (step 2: any version the session was shown; step 5:
only earlier texts shown → earlier_version); interchange.md, "exposure" (``text``).
"""

from __future__ import annotations

import pytest

from lessons.core.text import text_hash
from lessons.models import CorrectionAttribution, Exposure, ShownText
from lessons.recurrence.refresh import recurrence_recompute
from tests.builders import correction, exposure, host, lesson
from tests.html import parse, table_rows
from tests.lessons.recurrence.builders import (
    ENTITY,
    HOST,
    clock,
    correction_id,
    counts,
    hash_of,
    stored_counts,
)

CURRENT = "Convert timestamp columns with `to_utc` in every staging model."
# What the session saw: an earlier edit the host never sent as a lesson (an altimate session snapshot).
EARLIER = "Cast `*_at` columns through `to_utc` before the staging select."
# Matches EARLIER (full anchor `to_utc` and the content token "staging" and "select"), not CURRENT:
# rule A needs the anchor and one more content token of the text; CURRENT's others are absent.
CORRECTION = "No: cast them through `to_utc` before the select."
ID = {"store": "team-playbook", "lesson_id": "L-1"}


def records(*, shown_text: str | None = EARLIER, **shown) -> list[dict]:
    return [
        host(name=HOST),
        lesson(host=HOST, **ENTITY, text=CURRENT, created_at="2026-10-02T00:00:00.000Z", **ID),
        exposure(host=HOST, session="s1", shown_at=clock("10:00"), text=shown_text, **ID, **shown),
        correction(
            host=HOST,
            session="s1",
            id=correction_id("s1", "10:01"),
            text=CORRECTION,
            corrected_at=clock("10:01"),
            turn_started_at=clock("10:00:30"),
        ),
    ]


def test_the_correction_matching_only_the_text_shown_counts_as_an_earlier_version(ingest):
    report = ingest(records())
    assert report.ok, report.error_lines()
    assert list(ShownText.objects.values_list("host__name", "lesson_key", "text_hash", "text")) == [
        (HOST, "id:team-playbook\x1fL-1", text_hash(EARLIER), EARLIER)
    ]
    (shown,) = Exposure.objects.all()
    assert (shown.lesson_key, shown.text_hash, shown.lesson_id) == (
        "id:team-playbook\x1fL-1",
        text_hash(EARLIER),
        None,
    )
    assert stored_counts() == {(HOST, hash_of(CURRENT)): counts(earlier_version=1)}
    (charged,) = CorrectionAttribution.objects.values_list("lesson__hash", "outcome")
    assert charged == (hash_of(CURRENT), "earlier_version")


def test_a_full_recompute_and_a_repeated_batch_give_the_same_counts_and_one_kept_text(ingest):
    assert ingest(records()).ok
    again = ingest(records())
    assert again.ok
    assert again.counts["exposure"]["created"] == 0
    assert ShownText.objects.count() == 1
    recurrence_recompute()
    assert stored_counts() == {(HOST, hash_of(CURRENT)): counts(earlier_version=1)}


def test_without_the_text_only_its_hash_nothing_can_match(ingest):
    # interchange.md: a text_hash alone names the text but does not carry it; nothing is kept.
    assert ingest(records(shown_text=None, text_hash=text_hash(EARLIER))).ok
    assert ShownText.objects.count() == 0
    assert stored_counts() == {(HOST, hash_of(CURRENT)): counts()}
    (unmatched,) = CorrectionAttribution.objects.values_list("lesson_id", "outcome")
    assert unmatched == (None, "unmatched")


def test_a_text_that_later_arrives_as_a_stored_version_is_matched_as_that_version(ingest):
    assert ingest(records()).ok
    # The earlier edit arrives as a lesson version after all (older created_at: not current).
    assert ingest(
        [
            lesson(
                host=HOST,
                **ENTITY,
                text=EARLIER,
                created_at="2026-10-01T00:00:00.000Z",
                status="superseded",
                **ID,
            )
        ]
    ).ok
    # Matched once, through the stored version: the kept text does not count a second time.
    assert stored_counts() == {(HOST, hash_of(CURRENT)): counts(earlier_version=1)}
    recurrence_recompute()
    assert stored_counts() == {(HOST, hash_of(CURRENT)): counts(earlier_version=1)}


def test_an_exposure_stored_before_its_text_was_kept_is_attributed_again_when_the_text_arrives(ingest):
    assert ingest(records()).ok
    ShownText.objects.all().delete()  # as a database from before texts were kept
    recurrence_recompute()
    assert stored_counts() == {(HOST, hash_of(CURRENT)): counts()}
    assert ingest(records()).ok  # the same batch again: the text is kept and s1 attributed again
    assert ShownText.objects.count() == 1
    assert stored_counts() == {(HOST, hash_of(CURRENT)): counts(earlier_version=1)}


@pytest.mark.parametrize("session_count", [1, 3])
def test_the_lesson_page_lists_the_text_shown_with_its_sessions(ingest, as_viewer, session_count):
    batch = records()
    for n in range(2, session_count + 1):
        batch.append(exposure(host=HOST, session=f"s{n}", shown_at=clock(f"11:0{n}"), text=EARLIER, **ID))
    assert ingest(batch).ok
    response = as_viewer.get(f"/lessons/{HOST}/{hash_of(CURRENT)}/")
    assert response.status_code == 200
    page = parse(response.content).find("section", cls="lesson-recurrence")
    assert table_rows(page, "recurrence-texts-shown") == [
        [EARLIER, str(session_count), "2026-10-05T10:00:00.000Z"]
    ]
    (charged,) = table_rows(page, "recurrence-sessions")
    assert charged[0] == "s1"
    assert charged[1:4] == [
        "2026-10-05T10:00:00.000Z an earlier text",
        "2026-10-05T10:01:00.000Z turn 2026-10-05T10:00:30.000Z",
        "earlier version shown",
    ]


def test_the_lesson_page_has_no_such_list_when_every_text_shown_is_stored(ingest, as_viewer):
    assert ingest(records(shown_text=CURRENT)).ok
    page = parse(as_viewer.get(f"/lessons/{HOST}/{hash_of(CURRENT)}/").content)
    assert page.find("table", cls="recurrence-texts-shown") is None
    assert "no stored version" not in page.text
