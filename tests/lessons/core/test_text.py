"""Normalization, hashes and timestamps (interchange.md, "Framing", "Text normalization and hashes")."""

import hashlib

import pytest

from lessons.core.text import (
    TimestampError,
    format_datetime,
    from_ms,
    lesson_hash,
    normalize,
    parse_timestamp,
    search_lower,
    storable,
    text_hash,
)


def test_normalize_applies_nfkc_collapses_whitespace_and_trims_keeping_case():
    assert normalize("  Ｃｏｐｙ\tthe \n\n Number\u00a0 ") == "Copy the Number"


def test_text_hash_is_sha256_of_the_normalized_text():
    assert text_hash(" a  b ") == hashlib.sha256(b"a b").hexdigest()


def test_lesson_hash_joins_namespace_subject_and_text_with_unit_separators():
    expected = hashlib.sha256(b"desk.adbuy\x1finvoice_capture\x1fA rule.").hexdigest()
    assert lesson_hash("desk.adbuy", "invoice_capture", "  A   rule. ") == expected


def test_lesson_hash_matches_the_corpus_given_hash():
    text = "Write Gross Amount as a bare number with two decimals \u2014 no currency symbol, no commas (e.g. 18450.00)."
    assert lesson_hash("desk.adbuy", "invoice_capture", text) == (
        "36727f000a42d1e7a5433589cd409dd00beee693f1e5ed207234dfaa30717f05"
    )


@pytest.mark.parametrize(
    ("value", "ms"),
    [
        ("2026-10-05T16:38:10.004Z", 1791218290004),
        ("2026-10-05T18:38:10.004+02:00", 1791218290004),
        ("2026-10-05T16:38:10Z", 1791218290000),
        ("2026-10-05T16:38:10.0049999Z", 1791218290004),
        ("2026-10-05T16:38:10.0049999999Z", 1791218290004),  # ten digits: cut too (attacker's finding 5)
        ("2026-10-05T22:08:10.004+0530", 1791218290004),
        (1768694400000, 1768694400000),
        (0, 0),
    ],
)
def test_timestamps_parse_to_epoch_milliseconds(value, ms):
    assert parse_timestamp(value) == ms


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("2026-10-05T16:38:10", "has no time zone"),
        ("yesterday", "expected an ISO 8601 timestamp"),
        (1.5, "expected a timestamp"),
        (True, "expected a timestamp"),
        (None, "expected a timestamp"),
        ("2026-13-05T16:38:10Z", "invalid timestamp"),
        # the attacker's finding 5: Python's own timedelta text before
        ("2026-10-05T16:38:10+25:00", r"its offset lies outside -23:59 to \+23:59"),
        ("2026-10-05T16:38:10+2400", r"its offset lies outside -23:59 to \+23:59"),
        ("2026-10-05T16:38:10+02:60", r"its offset lies outside -23:59 to \+23:59"),
    ],
)
def test_invalid_timestamps_are_refused_with_a_reason(value, message):
    with pytest.raises(TimestampError, match=message):
        parse_timestamp(value)


def test_output_is_utc_iso_with_milliseconds_and_z():
    assert format_datetime(from_ms(1791218290004)) == "2026-10-05T16:38:10.004Z"
    assert format_datetime(from_ms(1768435200000)) == "2026-01-15T00:00:00.000Z"


def test_search_lower_lowers_one_character_as_postgresql_does():
    assert search_lower("İSTANBUL") == "istanbul"
    assert search_lower("ΣΥΝΔΕΣ ΣΥΝΔΕΣΗ ς") == "συνδεσ συνδεση σ"
    assert search_lower("Straẞe ÉCOLE") == "straße école"
    for text in ("İSTANBUL", "ΟΔΟΣ", "i\u0307", "MiXeD"):
        assert search_lower(search_lower(text)) == search_lower(text)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("ses_01", True),
        ("", True),
        ("\U0001f600 \u202e", True),  # a surrogate pair's character and a bidi control are text
        ("ses_\x00", False),  # PostgreSQL text cannot hold a NUL
        ("ses_\ud800", False),  # a lone surrogate has no UTF-8
        ("\udfff", False),
        (7, False),
        (None, False),
    ],
)
def test_storable_is_a_string_without_a_nul_or_a_lone_surrogate(value, expected):
    assert storable(value) is expected
