"""Attacks on ingest (the command, the service, the parser): hostile bytes must give a clear error naming
file, line and field, never a traceback, never a partial write, never lost data. spec: interchange.md,
"Framing" and "Errors and the import report"; README.md ("Commands") (exit codes).
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from lessons.core.interchange import (
    E_DUPLICATE_KEY,
    E_JSON_NUMBER_TOO_LONG,
    E_JSON_TOO_DEEP,
    E_LONE_SURROGATE,
    HOST_NAME,
)
from lessons.core.text import lesson_hash
from lessons.ingest.lesson_pass import HASH_CONTENT_DIFFERS
from lessons.models import Correction, Draft, Exposure, Host, Lesson, Verdict
from tests import builders

T0 = 1767225600000  # 2026-01-01T00:00:00.000Z


def lesson(
    text="Copy the contract number exactly.", *, host="h1", namespace="ns", subject="s", created_at=T0, **more
):
    """This module's defaults for ``builders.lesson``."""
    return builders.lesson(
        host=host, namespace=namespace, subject=subject, text=text, created_at=created_at, **more
    )


def h(text="Copy the contract number exactly.", namespace="ns", subject="s"):
    return lesson_hash(namespace, subject, text)


def snapshot():
    return tuple(m.objects.count() for m in (Host, Lesson, Verdict, Exposure, Correction, Draft))


def errors(report):
    return [str(e) for e in report.errors]


def differs(line: int, given: str) -> str:
    message = HASH_CONTENT_DIFFERS.format(short=given[:8], host="h1", entity="ns/s")
    return f"batch.jsonl:{line}: lesson.hash: {message}"


LESSON_LINE = json.dumps(lesson())


# --- JSON the decoder chokes on -----------------------------------------------------------------


def test_a_number_of_5000_digits_is_a_line_error_and_nothing_is_written(ingest):
    line = LESSON_LINE.replace(f'"created_at": {T0}', '"created_at": ' + "1" * 5000)
    report = ingest([LESSON_LINE.replace("exactly", "always"), line])
    assert errors(report) == [f"batch.jsonl:2: json: {E_JSON_NUMBER_TOO_LONG}"]
    assert not report.written and snapshot() == (0, 0, 0, 0, 0, 0)


def test_json_nested_100000_deep_is_a_line_error(ingest):
    report = ingest(["[" * 100_000, LESSON_LINE])
    assert errors(report) == [f"batch.jsonl:1: json: {E_JSON_TOO_DEEP}"]
    assert report.counts["unknown"]["rejected"] == 1 and not report.written


def test_a_duplicate_key_is_an_error_not_a_silent_last_wins(ingest):
    line = LESSON_LINE[:-1] + ', "status": "retracted", "status": "live"}'
    report = ingest([line])
    assert errors(report) == [f"batch.jsonl:1: json: {E_DUPLICATE_KEY.format(key='status')}"]
    assert Lesson.objects.count() == 0


@pytest.mark.parametrize(
    ("field", "line"),
    [
        ("lesson.text", LESSON_LINE.replace("exactly.", "exactly \\ud800.")),
        ("lesson.subject", LESSON_LINE.replace('"subject": "s"', '"subject": "s\\udfff"')),
        (
            "correction.session",
            json.dumps(
                {
                    "type": "correction",
                    "host": "h1",
                    "session": "PLACEHOLDER",
                    "kind": "user_correction",
                    "text": "No.",
                    "corrected_at": T0,
                }
            ).replace("PLACEHOLDER", "\\ud83d"),
        ),
        ("lesson.tags", LESSON_LINE[:-1] + ', "tags": ["ok", "\\udc00"]}'),
    ],
)
def test_a_lone_surrogate_escape_is_a_field_error_not_a_crash(ingest, field, line):
    report = ingest([line])
    assert errors(report) == [f"batch.jsonl:1: {field}: {E_LONE_SURROGATE}"]
    assert snapshot() == (0, 0, 0, 0, 0, 0)


def test_a_surrogate_pair_escape_is_a_valid_character(ingest):
    report = ingest([LESSON_LINE.replace("exactly.", "exactly \\ud83d\\ude00.")])
    assert report.ok, errors(report)
    assert Lesson.objects.get().text == "Copy the contract number exactly \U0001f600."


def test_nan_and_infinity_are_refused_with_a_message_that_says_why(ingest):
    report = ingest([LESSON_LINE[:-1] + ', "confidence": NaN}', LESSON_LINE[:-1] + ', "confidence": 1e400}'])
    assert errors(report) == [
        "batch.jsonl:1: lesson.confidence: expected a finite number, got NaN",
        "batch.jsonl:2: lesson.confidence: expected a finite number, got Infinity",
    ]


def test_invalid_utf8_names_the_line_and_the_valid_lines_around_it_are_not_written(db):
    from lessons.ingest.passes import ingest_sources
    from lessons.ingest.reading import bytes_source

    body = (LESSON_LINE + "\n").encode() + b'{"type": "host", "name": "x\xff"}\n'
    report = ingest_sources(sources=[bytes_source(body, name="up.jsonl")])
    assert errors(report) == ["up.jsonl:2: line: not valid UTF-8"]
    assert snapshot() == (0, 0, 0, 0, 0, 0)


def test_a_bom_and_mixed_crlf_and_lf_line_ends_are_accepted(db):
    from lessons.ingest.passes import ingest_sources
    from lessons.ingest.reading import bytes_source

    body = b"\xef\xbb\xbf" + b'{"type": "host", "name": "a1"}\r\n\r\n{"type": "host", "name": "a2"}\n'
    report = ingest_sources(sources=[bytes_source(body, name="up.jsonl")])
    assert report.ok and sorted(Host.objects.values_list("name", flat=True)) == ["a1", "a2"]


# --- names and hashes: a pattern must match the whole value -------------------------------------


def test_a_host_name_with_a_trailing_newline_is_refused(ingest):
    report = ingest([lesson(host="h1\n")])
    assert errors(report) == [
        f'batch.jsonl:1: lesson.host: expected a host name matching {HOST_NAME.pattern}, got "h1\\n"'
    ]
    assert Host.objects.count() == 0


def test_a_default_host_with_a_trailing_newline_is_refused(ingest):
    record = lesson()
    del record["host"]
    report = ingest([record], default_host="h1\n")
    assert errors(report) == [
        f'batch.jsonl:1: lesson.host: expected a host name matching {HOST_NAME.pattern}, got "h1\\n"'
    ]
    assert Host.objects.count() == 0


def test_host_names_of_64_characters_pass_and_65_are_refused(ingest):
    report = ingest([{"type": "host", "name": "a" * 64}, {"type": "host", "name": "b" * 65}])
    assert errors(report) == ["batch.jsonl:2: host.name: at most 64 characters, got 65"]


def test_a_given_hash_with_a_trailing_newline_or_in_uppercase_is_refused(ingest):
    report = ingest([lesson(hash="a" * 64 + "\n"), lesson(hash="A" * 64)])
    assert errors(report) == [
        "batch.jsonl:1: lesson.hash: expected 64 lowercase hex digits",
        "batch.jsonl:2: lesson.hash: expected 64 lowercase hex digits",
    ]


# --- timestamps at the edges --------------------------------------------------------------------


@pytest.mark.parametrize(
    "stamp", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00.000+00:01"]
)
def test_an_offset_that_moves_a_timestamp_outside_years_1_to_9999_is_refused(ingest, stamp):
    report = ingest([lesson(created_at=stamp)])
    assert errors(report) == [
        "batch.jsonl:1: lesson.created_at: out of range: a timestamp lies between "
        "0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z"
    ]


def test_timestamps_at_the_extremes_are_kept_and_shown_with_four_digit_years(ingest):
    from lessons.selectors.piles import piles_json

    ingest(
        [
            {"type": "host", "name": "h1", "max_active": 1, "budget_enabled": True},
            lesson("First.", created_at="0001-01-01T00:00:00Z"),
            lesson("Last.", created_at="9999-12-31T23:59:59.999999999Z"),
        ]
    )
    members = piles_json()["piles"][0]["members"]
    assert [m["created_at"] for m in members] == ["0001-01-01T00:00:00.000Z", "9999-12-31T23:59:59.999Z"]


def test_nine_fraction_digits_are_cut_to_milliseconds_and_offsets_move_to_utc(ingest):
    ingest(
        [
            lesson("A.", created_at="2026-01-01T00:00:00.123999999+14:00"),
            lesson("B.", created_at="2026-01-01T00:00:00-12:00"),
            lesson("C.", created_at=-1),
        ]
    )
    from lessons.core.text import format_datetime

    got = {x.text: format_datetime(x.created_at) for x in Lesson.objects.all()}
    assert got == {
        "A.": "2025-12-31T10:00:00.123Z",
        "B.": "2026-01-01T12:00:00.000Z",
        "C.": "1969-12-31T23:59:59.999Z",
    }


def test_a_leap_second_is_refused_with_the_reason(ingest):
    report = ingest([lesson(created_at="2016-12-31T23:59:60Z")])
    assert errors(report) == [
        "batch.jsonl:1: lesson.created_at: invalid timestamp '2016-12-31T23:59:60Z': second must be in 0..59"
    ]


# --- numbers the database cannot hold -------------------------------------------------------------


def test_a_counter_larger_than_the_database_holds_is_refused(ingest):
    report = ingest([lesson(helpful=2**31), lesson("Other.", applied=2**31 - 1)])
    assert errors(report) == ["batch.jsonl:1: lesson.helpful: expected at most 2147483647, got 2147483648"]


def test_a_horizon_beyond_64_bits_is_refused(ingest):
    report = ingest(
        [
            lesson(),
            {
                "type": "verdict",
                "host": "h1",
                "lesson": h(),
                "verdict": "held",
                "measured_at": T0,
                "horizon_ms": 2**63,
            },
        ]
    )
    assert errors(report) == [
        "batch.jsonl:2: verdict.horizon_ms: expected at most 9223372036854775807, got 9223372036854775808"
    ]


def test_booleans_where_integers_are_expected_are_refused(ingest):
    report = ingest([{"type": "host", "name": "h1", "max_active": True}, lesson(created_at=False)])
    assert errors(report) == [
        "batch.jsonl:1: host.max_active: expected an integer, got a boolean",
        "batch.jsonl:2: lesson.created_at: "
        "expected a timestamp (ISO 8601 with Z or an offset, or epoch milliseconds)",
    ]


# --- identity: one hash names one content ---------------------------------------------------------


def test_the_same_given_hash_with_different_text_is_refused_and_the_stored_text_kept(ingest):
    given = "c" * 64
    assert ingest([lesson("Original text.", hash=given)]).ok
    report = ingest([lesson("Replaced text.", hash=given)])
    assert errors(report) == [differs(1, given)]
    assert Lesson.objects.get().text == "Original text."


def test_a_given_hash_cannot_move_a_lesson_to_another_namespace(ingest):
    given = "d" * 64
    assert ingest([lesson(hash=given)]).ok
    report = ingest([lesson(hash=given, namespace="elsewhere")])
    assert errors(report) == [differs(1, given)]
    assert Lesson.objects.get().namespace == "ns"


def test_two_lines_of_one_batch_giving_one_hash_two_texts_refuse_the_second(ingest):
    given = "e" * 64
    report = ingest(
        [lesson("First text.", hash=given), lesson("Second text.", hash=given)], skip_invalid=True
    )
    assert errors(report) == [differs(2, given)]
    assert Lesson.objects.get().text == "First text."


def test_the_same_hash_on_another_host_is_another_lesson(ingest):
    given = "f" * 64
    report = ingest([lesson("On h1.", hash=given), lesson("On h2.", hash=given, host="h2")])
    assert report.ok and Lesson.objects.count() == 2


def test_a_batch_that_creates_and_updates_counts_both(ingest):
    assert ingest([lesson()]).ok
    report = ingest([lesson(status="retracted"), lesson("New one.")])
    assert report.ok
    assert report.counts["lesson"] == {"created": 1, "unchanged": 0, "updated": 1, "held": 0, "rejected": 0}


# --- references across hosts, stores and invalid lines ------------------------------------------


def test_a_draft_cannot_supersede_a_lesson_of_another_host(ingest):
    assert ingest([lesson(host="other")]).ok
    draft = {
        "type": "draft",
        "host": "h1",
        "id": "d1",
        "namespace": "ns",
        "subject": "s",
        "text": "Merged.",
        "supersedes": [h()],
        "drafted_by": "llm:x",
        "gates": {"ground": "pass", "verify": "pass"},
        "created_at": T0,
    }
    report = ingest([draft])
    assert errors(report) == [
        f"batch.jsonl:1: draft.supersedes[0]: no lesson {h()} on host h1 in this batch or the database"
    ]
    assert Draft.objects.count() == 0


def test_a_verdict_by_lesson_id_of_another_store_does_not_resolve(ingest):
    assert ingest([lesson(lesson_id="L-0001", store="team-playbook")]).ok
    report = ingest(
        [
            {
                "type": "verdict",
                "host": "h1",
                "store": "other-store",
                "lesson_id": "L-0001",
                "verdict": "held",
                "measured_at": T0,
            }
        ]
    )
    assert errors(report) == [
        "batch.jsonl:1: verdict.lesson: no lesson other-store/L-0001 on host h1 in this batch or the database"
    ]


def test_with_skip_invalid_a_reference_to_a_lesson_only_in_an_invalid_line_is_refused_too(ingest):
    bad = lesson("Only here.", created_at="2026-01-01T00:00:00")  # no offset: invalid
    ref = {"type": "verdict", "host": "h1", "lesson": h("Only here."), "verdict": "held", "measured_at": T0}
    report = ingest([lesson(), bad, ref], skip_invalid=True)
    assert report.written and report.error_count == 2
    assert errors(report)[1] == (
        f"batch.jsonl:3: verdict.lesson: no lesson {h('Only here.')} on host h1 in this batch or the database"
    )
    assert list(Lesson.objects.values_list("text", flat=True)) == ["Copy the contract number exactly."]
    assert Verdict.objects.count() == 0


def test_a_10_mb_line_is_refused_by_its_size_and_a_long_text_by_field(ingest):
    report = ingest([json.dumps(lesson("x" * 10_000_000))])  # never read whole: longer than any record
    assert errors(report) == [
        "batch.jsonl:1: line: longer than 1,048,576 bytes: no record is that long (is this an interchange file?)"
    ]
    report = ingest([json.dumps(lesson("x" * 100_001))])  # within the line limit: the field says
    assert errors(report) == ["batch.jsonl:1: lesson.text: at most 100000 characters, got 100001"]


# --- the command: exit 1 and a message, never a traceback ----------------------------------------


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (LESSON_LINE.replace(f"{T0}", "9" * 5000), f"in.jsonl:1: json: {E_JSON_NUMBER_TOO_LONG}"),
        ("[" * 50_000, f"in.jsonl:1: json: {E_JSON_TOO_DEEP}"),
        (LESSON_LINE.replace("exactly.", "\\ud800"), f"in.jsonl:1: lesson.text: {E_LONE_SURROGATE}"),
        (
            json.dumps(lesson(created_at="0001-01-01T00:00:00+01:00")),
            "in.jsonl:1: lesson.created_at: out of range",
        ),
        (json.dumps(lesson(harmful=10**30)), "in.jsonl:1: lesson.harmful: expected at most 2147483647"),
    ],
    ids=["bigint", "deep", "surrogate", "year0", "counter"],
)
def test_the_ingest_command_exits_1_with_file_line_and_field(db, tmp_path, body, expected):
    path = tmp_path / "in.jsonl"
    path.write_text(body + "\n", encoding="utf-8")
    err = io.StringIO()
    with pytest.raises(CommandError) as caught:
        call_command("ingest", str(path), stdout=io.StringIO(), stderr=err)
    assert caught.value.returncode == 1
    assert err.getvalue().startswith(f"{path.parent}/{expected}")
    assert snapshot() == (0, 0, 0, 0, 0, 0)


@pytest.mark.parametrize("command", ["ingest", "import_altimate", "import_areev"])
def test_a_host_option_with_a_trailing_newline_is_wrong_usage(db, tmp_path, command):
    path = tmp_path / "in.jsonl"
    path.write_text(LESSON_LINE + "\n")
    with pytest.raises(CommandError) as caught:
        call_command(command, str(path), "--host", "h1\n", stdout=io.StringIO(), stderr=io.StringIO())
    assert caught.value.returncode == 2
    assert str(caught.value) == f"--host: expected a host name matching {HOST_NAME.pattern}, got 'h1\\n'"
    assert Host.objects.count() == 0


def test_texts_equal_after_nfkc_and_whitespace_are_one_lesson(ingest):
    report = ingest([lesson("Use the \ufb01le\u3000name."), lesson("Use  the file name.")])
    assert report.ok
    assert report.counts["lesson"]["created"] == 1 and report.counts["lesson"]["unchanged"] == 1
    assert Lesson.objects.get().text == "Use the file name."


def test_an_invalid_second_file_refuses_the_first_file_too(db, tmp_path):
    good, bad = tmp_path / "good.jsonl", tmp_path / "bad.jsonl"
    good.write_text(LESSON_LINE + "\n")
    bad.write_text('{"type": "host", "name": "ok"}\n' + "[" * 50_000 + "\n")
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("ingest", str(good), str(bad), stdout=io.StringIO(), stderr=err)
    assert f"{bad}:2: json: {E_JSON_TOO_DEEP}" in err.getvalue()
    assert snapshot() == (0, 0, 0, 0, 0, 0)


def test_a_folder_given_as_a_file_is_a_clear_error(db, tmp_path):
    with pytest.raises(CommandError) as caught:
        call_command("ingest", str(tmp_path), stdout=io.StringIO(), stderr=io.StringIO())
    assert (caught.value.returncode, str(caught.value)) == (1, f"{tmp_path}: cannot read: Is a directory")
