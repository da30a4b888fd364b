"""``has_invisible_utf8``: the body's bytes say whether ``visible_controls`` has anything to mark, exactly as
the decoded text's search does (docs/interchange.md, "Control characters in shown text")."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.core.text import _INVISIBLE, has_invisible_utf8, visible_controls

INVISIBLE = [chr(c) for c in range(0x110000) if 0xD800 > c or c > 0xDFFF if _INVISIBLE.match(chr(c))]
# Bytes around every invisible character's encoding: its leads and continuations, their neighbours, other
# leads, ASCII.
ALPHABET = [
    bytes([b])
    for b in (0x61, 0x00, 0x09, 0x0A, 0x7F, 0xC2, 0xC3, 0xD8, 0xE2, 0xE0, 0xF0, 0x80, 0x81, 0x8E, 0x8F, 0x9C)
    + (0x9D, 0x9F, 0xA0, 0xA5, 0xA6, 0xA9, 0xAA, 0xAE, 0xAF, 0xBF, 0x90)
]


def decoded_search(data: bytes) -> bool:
    return _INVISIBLE.search(data.decode("utf-8", "surrogateescape")) is not None


def test_the_invisible_characters_are_those_of_the_docs():
    assert len(INVISIBLE) == 29 + 1 + 32 + 1 + 2 + 5 + 4
    assert INVISIBLE[:2] == ["\x00", "\x01"] and INVISIBLE[-1] == "\u2069"


def test_each_invisible_character_is_found_anywhere_in_a_page():
    page = "<td>abc · – — … → ⟨U+202E⟩ é 😀</td>\n" * 50
    assert has_invisible_utf8(page.encode()) is False
    for char in INVISIBLE:
        for at in (0, 17, len(page)):
            body = (page[:at] + char + page[at:]).encode()
            assert has_invisible_utf8(body) is True, (char, at)


def test_no_other_character_is_found():
    others = "".join(
        chr(c) for c in range(0x3000) if not _INVISIBLE.match(chr(c)) and not 0xD800 <= c <= 0xDFFF
    )
    assert has_invisible_utf8(others.encode()) is False
    for c in (0x061B, 0x061D, 0x200D, 0x2010, 0x2029, 0x202F, 0x2065, 0x206A, 0x10000, 0x10FFFF, 0xE2080):
        assert has_invisible_utf8(chr(c).encode()) is False, hex(c)


def test_every_short_byte_string_agrees_with_the_decoded_search():
    for length in (1, 2, 3):
        for parts in itertools.product(ALPHABET, repeat=length):
            data = b"".join(parts)
            assert has_invisible_utf8(data) is decoded_search(data), data


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(ALPHABET), max_size=12).map(b"".join))
def test_longer_byte_strings_agree(data):
    assert has_invisible_utf8(data) is decoded_search(data)


@settings(max_examples=2000, deadline=None)
@given(st.binary(max_size=64))
def test_any_bytes_agree(data):
    assert has_invisible_utf8(data) is decoded_search(data)


@settings(max_examples=1000, deadline=None)
@given(st.text(max_size=40))
def test_any_text_agrees_with_visible_controls(text):
    assert has_invisible_utf8(text.encode()) is (visible_controls(text) != text)
