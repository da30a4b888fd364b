"""The fast paths of exposures and corrections return exactly the general validator's record, or nothing.

``parse_object`` tries ``_FAST_PARSERS`` first and falls back to ``_parse_with_reader``, which reports
every problem; the fast path may refuse anything, but what it accepts must be what the general validator
returns for the same object (same record, no error). spec: interchange.md ("exposure", "correction").
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.core.interchange import (
    _ALLOWED,
    _FAST_PARSERS,
    CorrectionRecord,
    ExposureRecord,
    LessonRef,
    RecordError,
    _parse_with_reader,
    parse_line,
)
from lessons.core.text import text_hash

H = "b" * 64
TEXT = "Use `col_1`  in\tstaging."
# Values chosen to sit on every edge the validators check: types, blanks, NUL, lengths, hex, times.
ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63),
    st.floats(allow_nan=True),
    st.sampled_from(
        [
            "",
            " ",
            "h1",
            "H1",
            "a\x00b",
            "x" * 64,
            "x" * 65,
            "y" * 200,
            "y" * 201,
            H,
            H.upper(),
            H + "\n",
            "s1",
            TEXT,
            "\u00a0",
            "t" * 1001,
            "t" * 2001,
            "2026-01-15T00:00:00Z",
            "2026-01-15T00:00:00",
            "2026-01-15T00:00:00.123456789+02:00",
            "0001-01-01T00:00:00+01:00",
        ]
    ),
    st.integers(min_value=-62135596800001, max_value=-62135596799999),
    st.integers(min_value=253402300799998, max_value=253402300800000),
    st.lists(st.just("x"), max_size=1),
)
KEYS = sorted({*_ALLOWED["exposure"], *_ALLOWED["correction"], "extra"} - {"type"})


def general(obj: dict, default_host: str | None):
    try:
        return _parse_with_reader(obj, obj["type"], default_host)
    except RecordError:
        return None


@settings(max_examples=1500, deadline=None)
@given(
    rtype=st.sampled_from(["exposure", "correction"]),
    values=st.dictionaries(st.sampled_from(KEYS), ODD, max_size=10),
    default_host=st.sampled_from([None, "h2", "Bad Host"]),
)
def test_what_the_fast_path_accepts_is_the_general_validators_record(rtype, values, default_host):
    obj = {"type": rtype, **values}
    fast = _FAST_PARSERS[rtype](obj, default_host)
    if fast is not None:
        assert fast == general(obj, default_host)


@settings(max_examples=500, deadline=None)
@given(
    host=st.sampled_from(["h1", None]),
    ref=st.sampled_from([{"lesson": H}, {"store": "st", "lesson_id": "L-1"}, {"lesson": H, "store": "st"}]),
    text=st.sampled_from([None, TEXT]),
    digest=st.sampled_from([None, "with text"]),
    tier=st.sampled_from([None, "", "core"]),
    shown_at=st.sampled_from([1_800_000_000_000, "2026-01-15T00:00:00.5Z"]),
)
def test_valid_exposures_take_the_fast_path(host, ref, text, digest, tier, shown_at):
    obj = {"type": "exposure", "session": "s1", "shown_at": shown_at, **ref}
    for name, value in (("host", host), ("text", text), ("tier", tier)):
        if value is not None:
            obj[name] = value
    if digest is not None and text is not None:
        obj["text_hash"] = text_hash(text)
    fast = _FAST_PARSERS["exposure"](obj, "h2")
    assert fast is not None
    assert fast == general(obj, "h2")


def test_valid_records_come_out_of_parse_line_the_same_either_way():
    line = '{"type": "exposure", "host": "h1", "session": "s1", "store": "st", "lesson_id": "L-1", "shown_at": 5}'
    assert parse_line(line) == ExposureRecord(
        host="h1", session="s1", lesson=LessonRef(store="st", lesson_id="L-1"), shown_at_ms=5
    )
    line = (
        '{"type": "correction", "host": "h1", "session": "s1", "kind": "user_correction", '
        '"text": "  Use  it. ", "corrected_at": 7, "turn_started_at": 6}'
    )
    assert parse_line(line) == CorrectionRecord(
        host="h1",
        session="s1",
        kind="user_correction",
        text="Use it.",
        corrected_at_ms=7,
        turn_started_at_ms=6,
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            '{"type": "exposure", "host": "h1", "session": "s1", "lesson": "'
            + H
            + '", "shown_at": "x", "tier": 3}',
            "exposure.shown_at",
        ),
        (
            '{"type": "correction", "host": "h1", "session": " ", "kind": "k", "text": "t", "corrected_at": 1}',
            "correction.session: must not be empty",
        ),
    ],
)
def test_a_refused_fast_path_still_reports_through_the_general_validator(line, message):
    with pytest.raises(RecordError) as info:
        parse_line(line)
    assert message in str(info.value)
