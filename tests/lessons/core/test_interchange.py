"""Parsing interchange records: every kind of invalid input is named by field. spec: interchange.md."""

import json

import pytest

from lessons.core.interchange import (
    DraftRecord,
    ExposureRecord,
    HostRecord,
    LessonRecord,
    LessonRef,
    RecordError,
    VerdictRecord,
    parse_line,
)
from lessons.core.text import lesson_hash, text_hash

LESSON = {
    "type": "lesson",
    "host": "h1",
    "namespace": "ns",
    "subject": "s",
    "text": "A rule.",
    "created_at": 1000,
}
H = "a" * 64


def errors_of(obj, **kw) -> list[str]:
    line = obj if isinstance(obj, str) else json.dumps(obj)
    with pytest.raises(RecordError) as info:
        parse_line(line, **kw)
    return [str(e) for e in info.value.errors]


def test_a_blank_line_is_skipped():
    assert parse_line("   ") is None


def test_a_host_record_with_defaults_left_unset():
    assert parse_line('{"type": "host", "name": "adbuy-desk"}') == HostRecord(
        name="adbuy-desk", max_active=None, budget_enabled=None, description=None
    )


def test_a_lesson_gets_its_computed_hash_and_defaults():
    record = parse_line(json.dumps({**LESSON, "text": "  A   rule. "}))
    assert isinstance(record, LessonRecord)
    assert record.hash == lesson_hash("ns", "s", "A rule.")
    assert (record.text, record.status, record.kind, record.created_at_ms) == (
        "A rule.",
        "live",
        "lesson",
        1000,
    )


def test_a_given_hash_is_used_as_is():
    assert parse_line(json.dumps({**LESSON, "hash": H})).hash == H


def test_the_default_host_applies_only_when_the_record_has_none():
    obj = {k: v for k, v in LESSON.items() if k != "host"}
    assert parse_line(json.dumps(obj), default_host="dflt").host == "dflt"
    assert parse_line(json.dumps(LESSON), default_host="dflt").host == "h1"


def test_a_verdict_by_store_and_lesson_id():
    record = parse_line(
        json.dumps(
            {
                "type": "verdict",
                "host": "h1",
                "store": "team-playbook",
                "lesson_id": "L-0a02",
                "verdict": "held",
                "measured_at": "2026-01-24T00:00:00Z",
            }
        )
    )
    assert isinstance(record, VerdictRecord)
    assert record.lesson == LessonRef(store="team-playbook", lesson_id="L-0a02")


def test_an_exposure_text_is_normalized_and_hashed():
    record = parse_line(
        json.dumps(
            {
                "type": "exposure",
                "host": "h1",
                "session": "s1",
                "lesson": H,
                "text": " Shown  text ",
                "shown_at": 5,
            }
        )
    )
    assert isinstance(record, ExposureRecord)
    assert (record.text, record.text_hash) == ("Shown text", text_hash("Shown text"))


def test_a_correction_without_turn_start_has_unknown_timing():
    record = parse_line(
        json.dumps(
            {
                "type": "correction",
                "host": "h1",
                "session": "s1",
                "kind": "user_correction",
                "text": "No.",
                "corrected_at": 10,
                "turn_started_at": None,
            }
        )
    )
    assert record.turn_started_at_ms is None and record.identity.startswith("auto:s1")


def test_a_draft_keeps_gates_and_supersedes():
    record = parse_line(
        json.dumps(
            {
                "type": "draft",
                "host": "h1",
                "id": "rec-1",
                "namespace": "ns",
                "subject": "s",
                "text": "One rule.",
                "supersedes": [H, "b" * 64],
                "drafted_by": "llm:x",
                "gates": {"ground": "pass", "verify": "fail"},
                "created_at": 1,
            }
        )
    )
    assert isinstance(record, DraftRecord)
    assert (record.identity, record.gate_ground, record.gate_verify) == ("rec-1", "pass", "fail")


@pytest.mark.parametrize(
    ("obj", "expected"),
    [
        (
            "{not json",
            ["json: not valid JSON (Expecting property name enclosed in double quotes at column 2)"],
        ),
        ("[1, 2]", ["json: expected a JSON object, got an array"]),
        (
            {"name": "x"},
            ["type: expected one of host, lesson, verdict, exposure, correction, draft, got missing"],
        ),
        (
            {"type": "lessons"},
            ['type: expected one of host, lesson, verdict, exposure, correction, draft, got "lessons"'],
        ),
        ({**LESSON, "txet": "typo"}, ["lesson.txet: unknown key"]),
        (
            {**LESSON, "created_at": "2026-01-01T00:00:00"},
            [
                "lesson.created_at: timestamp '2026-01-01T00:00:00' has no time zone: add Z or an offset such as +02:00"
            ],
        ),
        ({**LESSON, "text": "   "}, ["lesson.text: must not be empty"]),
        (
            {**LESSON, "text": "x" * 1001},
            ["lesson.text: expected 1..1000 characters after normalization, got 1001"],
        ),
        ({**LESSON, "text": 5}, ["lesson.text: expected a string, got a number"]),
        ({**LESSON, "text": "a\u0000b"}, ["lesson.text: must not contain the NUL character (U+0000)"]),
        ({**LESSON, "tags": ["ok", "\u0000"]}, ["lesson.tags: must not contain the NUL character (U+0000)"]),
        (
            {
                "type": "correction",
                "host": "h1",
                "session": "s\u0000",
                "kind": "user_correction",
                "text": "t",
                "corrected_at": 1,
            },
            ["correction.session: must not contain the NUL character (U+0000)"],
        ),
        ({**LESSON, "subject": ""}, ["lesson.subject: must not be empty"]),
        ({k: v for k, v in LESSON.items() if k != "subject"}, ["lesson.subject: required"]),
        (
            {**LESSON, "host": "Bad Host"},
            ['lesson.host: expected a host name matching ^[a-z0-9][a-z0-9._-]{0,63}$, got "Bad Host"'],
        ),
        ({**LESSON, "hash": "ABC"}, ["lesson.hash: expected 64 lowercase hex digits"]),
        (
            {**LESSON, "status": "maybe"},
            ['lesson.status: expected one of live, retracted, superseded, got "maybe"'],
        ),
        ({**LESSON, "kind": "rule"}, ['lesson.kind: expected one of lesson, consolidation, got "rule"']),
        (
            {**LESSON, "origin": "robot"},
            ['lesson.origin: expected one of builtin, llm, human, command, got "robot"'],
        ),
        ({**LESSON, "confidence": 1.5}, ["lesson.confidence: expected a number in 0.0..1.0, got 1.5"]),
        ({**LESSON, "helpful": -1}, ["lesson.helpful: expected an integer in >= 0, got -1"]),
        ({**LESSON, "tags": "a"}, ["lesson.tags: expected an array of strings"]),
        ({**LESSON, "tags": ["t"] * 101}, ["lesson.tags: at most 100 items, got 101"]),
        (
            {**LESSON, "tags": ["ok", "x" * 201]},
            ["lesson.tags: each item at most 200 characters, got one of 201"],
        ),
        ({**LESSON, "superseded_by": H}, ['lesson.superseded_by: only with "status": "superseded"']),
        ({**LESSON, "consolidates": [H]}, ['lesson.consolidates: only with "kind": "consolidation"']),
        (
            {**LESSON, "kind": "consolidation", "consolidates": ["x"]},
            ["lesson.consolidates[0]: expected 64 lowercase hex digits"],
        ),
        (
            {"type": "host", "name": "h", "max_active": 0},
            ["host.max_active: expected an integer in 1..10000, got 0"],
        ),
        (
            {"type": "host", "name": "h", "max_active": 10001},
            ["host.max_active: expected an integer in 1..10000, got 10001"],
        ),
        (
            {"type": "host", "name": "h", "max_active": "8"},
            ["host.max_active: expected an integer, got a string"],
        ),
        (
            {"type": "host", "name": "h", "budget_enabled": "yes"},
            ["host.budget_enabled: expected true or false, got a string"],
        ),
        (
            {"type": "verdict", "host": "h1", "verdict": "held", "measured_at": 1},
            ["verdict.lesson: required: the lesson's hash, or store + lesson_id"],
        ),
        (
            {"type": "verdict", "host": "h1", "lesson": H, "verdict": "held"},
            ["verdict.measured_at: required"],
        ),
        (
            {"type": "verdict", "host": "h1", "lesson": H, "verdict": "", "measured_at": 1},
            ["verdict.verdict: must not be empty"],
        ),
        (
            {
                "type": "exposure",
                "host": "h1",
                "session": "s",
                "lesson": H,
                "shown_at": 1,
                "text": "a",
                "text_hash": "b" * 64,
            },
            ["exposure.text_hash: does not match the hash of text"],
        ),
        (
            {"type": "correction", "host": "h1", "session": "s", "kind": "user_correction", "text": "t"},
            ["correction.corrected_at: required"],
        ),
        (
            {
                "type": "draft",
                "host": "h1",
                "namespace": "n",
                "subject": "s",
                "text": "t",
                "supersedes": [],
                "drafted_by": "x",
                "gates": {"ground": "pass", "verify": "pass"},
                "created_at": 1,
            },
            ["draft.supersedes: expected at least one lesson hash"],
        ),
        (
            {
                "type": "draft",
                "host": "h1",
                "namespace": "n",
                "subject": "s",
                "text": "t",
                "supersedes": [H],
                "drafted_by": "x",
                "gates": {"ground": "ok", "verify": "pass", "extra": 1},
                "created_at": 1,
            },
            ["draft.gates.extra: unknown key", 'draft.gates.ground: expected "pass" or "fail", got "ok"'],
        ),
    ],
)
def test_invalid_records_name_the_field_and_what_was_expected(obj, expected):
    assert errors_of(obj) == expected


def test_a_record_without_host_and_no_default_is_refused():
    obj = {k: v for k, v in LESSON.items() if k != "host"}
    assert errors_of(obj) == ["lesson.host: required (or give a default host with --host)"]


def test_every_problem_of_one_record_is_listed():
    obj = {**LESSON, "status": "x", "created_at": None, "bogus": 1}
    assert errors_of(obj) == [
        "lesson.bogus: unknown key",
        "lesson.created_at: required",
        'lesson.status: expected one of live, retracted, superseded, got "x"',
    ]


@pytest.mark.parametrize(
    ("line", "field"),
    [
        # Upper-case hex, a key, and an escaped backslash before the escape: each still searched.
        (json.dumps({**LESSON, "text": "PLACEHOLDER"}).replace("PLACEHOLDER", "\\uDBFF"), "lesson.text"),
        (json.dumps(LESSON)[:-1] + ', "\\udc00": 1}', "json"),
        (json.dumps({**LESSON, "text": "PLACEHOLDER"}).replace("PLACEHOLDER", "\\\\\\ud800"), "lesson.text"),
    ],
)
def test_the_surrogate_search_is_skipped_only_where_no_surrogate_can_be(line, field):
    with pytest.raises(RecordError) as exc:
        parse_line(line)
    assert [e.field for e in exc.value.errors][:1] == [field]
    assert "lone surrogate" in exc.value.errors[0].message


def test_an_escaped_backslash_before_ud800_is_text_not_a_surrogate():
    record = parse_line(json.dumps({**LESSON, "text": "A \\ud800 rule."}))  # JSON: "A \\ud800 rule."
    assert record.text == "A \\ud800 rule."
