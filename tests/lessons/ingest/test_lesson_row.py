"""The ingest writes a lesson's fields in the order of its table (lessons/ingest/passes.py), and stores the
optional fields the interchange reader accepts (lessons/core/interchange.py), one list for both."""

from __future__ import annotations

from lessons.core.interchange import LESSON_GIVEN_FIELDS, LessonRecord
from lessons.core.text import text_hash
from lessons.ingest.lesson_pass import LESSON_ROWS, _lesson_row, _lesson_values


def distinct_record() -> LessonRecord:
    """A record whose every field holds a value no other field holds."""
    return LessonRecord(
        host="h",
        namespace="ns",
        subject="s",
        text="Send an Idempotency-Key.",
        created_at_ms=1_767_225_600_000,
        hash="a" * 64,
        status="superseded",
        kind="rule",
        lesson_id="L-7",
        store="global",
        origin="user:rita",
        superseded_by="b" * 64,
        consolidates=("c" * 64,),
        confidence=0.75,
        helpful=3,
        harmful=1,
        applied=9,
        tags=("billing",),
    )


def test_a_new_lessons_row_puts_each_value_under_its_field():
    record = distinct_record()
    row = dict(zip(LESSON_ROWS.fields, _lesson_row(42, record), strict=True))
    assert row == {
        "host_id": 42,
        "hash": "a" * 64,
        "namespace": "ns",
        "subject": "s",
        "text": "Send an Idempotency-Key.",
        "text_hash": text_hash("Send an Idempotency-Key."),
        "created_at": 1_767_225_600_000,
        "status": "superseded",
        **_lesson_values(record),
    }


def test_the_given_fields_are_stored_as_given_with_lists_for_arrays():
    assert LESSON_ROWS.fields[-len(LESSON_GIVEN_FIELDS) :] == LESSON_GIVEN_FIELDS
    assert _lesson_values(distinct_record()) == {
        "kind": "rule",
        "lesson_id": "L-7",
        "store": "global",
        "origin": "user:rita",
        "superseded_by": "b" * 64,
        "consolidates": ["c" * 64],
        "confidence": 0.75,
        "helpful": 3,
        "harmful": 1,
        "applied": 9,
        "tags": ["billing"],
    }
