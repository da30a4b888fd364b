"""Text normalization, content hashes and timestamps of the interchange format.

Pure functions, no ORM. docs/interchange.md, "Framing".
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import UTC, datetime, timedelta

_WHITESPACE = re.compile(r"\s+")
_ISO_WITH_OFFSET = re.compile(
    r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|z|[+-](\d{2}):?(\d{2}))$"
)


def normalize(text: str) -> str:
    """Unicode NFKC, every whitespace run to one space, trimmed; case kept.

    docs/interchange.md, "Text normalization and hashes".
    """
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip()


# What ``str.lower`` writes where PostgreSQL's ``lower()`` (per character) writes one letter: a dotted
# capital I lowers to "i" and a combining dot above; a capital sigma ending a word to the final sigma.
_FOLDS = (("i\u0307", "i"), ("\u03c2", "\u03c3"))


def search_lower(text: str) -> str:
    """``text`` lowered for the queue's text filter (the stored search documents and the words searched
    for): ``str.lower``, then the dotted ``i`` as ``i`` and the final sigma as ``σ``, so that any case of a
    word finds it as PostgreSQL's ``ILIKE`` did (it lowers one character at a time: "İSTANBUL" is
    "istanbul", "ΣΥΝΔΕΣ" is "συνδεσ", a prefix of "ΣΥΝΔΕΣΗ"). Idempotent:
    ``search_lower(search_lower(x)) == search_lower(x)``."""
    lowered = text.lower()
    for found, kept in _FOLDS:
        lowered = lowered.replace(found, kept)
    return lowered


# Characters a person cannot see but that change what is shown: the C0 controls but tab, line feed and
# carriage return (ESC starts terminal escape sequences, BEL rings), DEL and the C1 controls, and the
# bidirectional formatting characters (U+202E, right-to-left override, shows "txt.exe" as "exe.txt").
# docs/interchange.md, "Control characters in shown text".
_INVISIBLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
VISIBLE_MARK = "\u27e8U+{code:04X}\u27e9"  # ⟨U+202E⟩


def visible_controls(text: str) -> str:
    """``text`` with each control and bidi formatting character (``_INVISIBLE``) replaced by its code
    point in angle brackets, ``⟨U+001B⟩`` (``VISIBLE_MARK``); every other character as it is. For what a
    person reads (pages, CSV); the stored text is never changed (it is evidence).
    docs/interchange.md, "Control characters in shown text"."""
    if not _INVISIBLE.search(text):
        return text
    return _INVISIBLE.sub(lambda m: VISIBLE_MARK.format(code=ord(m.group())), text)


def _invisible_bytes_table() -> tuple[bytes, bytes]:
    # Each byte of UTF-8 text as a letter that says what it may be in an ``_INVISIBLE`` character: "C" an
    # ASCII control of the set; "c", "d", "e" the lead bytes 0xC2, 0xD8, 0xE2 (C1 controls, U+061C,
    # U+200E-U+2069); "a", "b", "f", "g", "h", "i", "j" the continuation bytes those characters use; "x"
    # any other byte from 0x80. Every other ASCII byte is deleted.
    table = bytearray(b"x" * 256)
    for byte in (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F):
        table[byte] = ord("C")
    table[0xC2], table[0xD8], table[0xE2] = b"cde"
    table[0x82:0xA0] = b"h" * (0xA0 - 0x82)
    table[0x80], table[0x81], table[0x8E], table[0x8F], table[0x9C] = b"abffg"
    table[0xA6:0xAA] = b"jjjj"
    table[0xAA:0xAF] = b"iiiii"
    delete = bytes(byte for byte in range(0x80) if table[byte] == ord("x"))
    return bytes(table), delete


_INVISIBLE_TABLE, _INVISIBLE_DELETE = _invisible_bytes_table()
# The letters' runs an ``_INVISIBLE`` character leaves: an ASCII control; 0xC2 then 0x80-0x9F (C1); 0xD8
# 0x9C (U+061C); 0xE2 0x80 0x8E/0x8F/0xAA-0xAE (U+200E, U+200F, U+202A-U+202E); 0xE2 0x81 0xA6-0xA9
# (U+2066-U+2069).
_INVISIBLE_RUNS = (b"C", b"ca", b"cb", b"cf", b"cg", b"ch", b"dg", b"eaf", b"eai", b"ebj")


def has_invisible_utf8(data: bytes) -> bool:
    """Whether ``data``, UTF-8 read with ``surrogateescape`` (as a page's body is), holds a character
    ``visible_controls`` marks (``_INVISIBLE``): exactly ``_INVISIBLE.search(data.decode("utf-8",
    "surrogateescape")) is not None``, found without decoding. The bytes become one letter each and the
    ASCII ones that can be none of them are dropped (one C pass, ~1 ms for a 600 KB pile page), and the
    letters' runs are looked for; only when one is found (such a character, or bytes that are not UTF-8)
    is the text decoded and searched to be sure. The regular expression over a decoded 600 KB page takes
    ~7 ms. docs/interchange.md, "Control characters in shown text"."""
    letters = data.translate(_INVISIBLE_TABLE, _INVISIBLE_DELETE)
    if not any(run in letters for run in _INVISIBLE_RUNS):
        return False
    return _INVISIBLE.search(data.decode("utf-8", "surrogateescape")) is not None


def storable(value: object) -> bool:
    """Whether ``value`` is a string every database can take as a parameter: no NUL (PostgreSQL text
    cannot hold one) and no lone surrogate (JSON's ``"\\ud800"`` decodes to one; it has no UTF-8). For a
    value from outside that is looked up before the validator refuses it by name."""
    if not isinstance(value, str) or "\x00" in value:
        return False
    try:
        value.encode()
    except UnicodeEncodeError:
        return False
    return True


def sha256_hex(text: str) -> str:
    """Lowercase hex SHA-256 of the UTF-8 bytes of ``text``.

    Total: a lone surrogate (which JSON's ``"\\ud800"`` decodes to) is hashed as its WTF-8 bytes instead
    of raising, so an importer can translate such a record and the validator then refuse it by name.
    Valid text hashes exactly as UTF-8.
    """
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def text_hash(text: str) -> str:
    """``sha256_hex(normalize(text))``: identifies a text independent of its lesson."""
    return sha256_hex(normalize(text))


def hash8(value: str | None) -> str:
    """A hash's short form, its first 8 characters, wherever one is shown: pages, command lines, reports
    and refusals (docs/piles-and-recurrence.md, "Piles" rule 8 shows members this way). Eight is also the
    shortest prefix the commands accept for a lesson (``review``), so a short form can be pasted back."""
    return (value or "")[:8]


def lesson_hash(namespace: str, subject: str, text: str) -> str:
    """A lesson's content address when the source gives none.

    ``sha256_hex(namespace + U+001F + subject + U+001F + normalize(text))``.
    docs/interchange.md, "Text normalization and hashes".
    """
    return sha256_hex(f"{namespace}\u001f{subject}\u001f{normalize(text)}")


class TimestampError(ValueError):
    """A timestamp that is neither ISO 8601 with an offset nor integer epoch milliseconds."""


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MIN_MS = -62135596800000  # 0001-01-01T00:00:00Z
MAX_MS = 253402300799999  # 9999-12-31T23:59:59.999Z
TIMESTAMP_OUT_OF_RANGE = (
    "out of range: a timestamp lies between 0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z"
)


def parse_timestamp(value: object) -> int:
    """Parse an interchange timestamp into integer milliseconds since the Unix epoch (UTC).

    Accepts an ISO 8601 / RFC 3339 string with ``Z`` or an offset, or an integer number of
    milliseconds. Raises ``TimestampError`` with a message naming what was expected: a string
    without an offset is refused (no guessing of time zones). docs/interchange.md, "Framing".
    """
    if isinstance(value, bool):
        raise TimestampError("expected a timestamp (ISO 8601 with Z or an offset, or epoch milliseconds)")
    if isinstance(value, int):
        return _in_range(value)
    if isinstance(value, str):
        shape = _ISO_WITH_OFFSET.match(value)
        if shape is None:
            if re.match(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}", value):
                raise TimestampError(
                    f"timestamp {value!r} has no time zone: add Z or an offset such as +02:00"
                )
            raise TimestampError(f"expected an ISO 8601 timestamp with Z or an offset, got {value!r}")
        if shape.group(4) is not None and (int(shape.group(4)) > 23 or int(shape.group(5)) > 59):
            raise TimestampError(f"timestamp {value!r}: its offset lies outside -23:59 to +23:59")
        try:
            parsed = datetime.fromisoformat(_trim_fraction(value.replace("z", "Z")))
        except ValueError as exc:
            raise TimestampError(f"invalid timestamp {value!r}: {exc}") from None
        # An offset can carry a stamp of year 1 or 9999 outside what a UTC datetime holds.
        return _in_range(to_ms(parsed))
    raise TimestampError("expected a timestamp (ISO 8601 with Z or an offset, or epoch milliseconds)")


def _in_range(ms: int) -> int:
    if not MIN_MS <= ms <= MAX_MS:
        raise TimestampError(TIMESTAMP_OUT_OF_RANGE)
    return ms


def _trim_fraction(value: str) -> str:
    # Python's fromisoformat takes at most 6 fraction digits; nanosecond stamps are cut,
    # not rounded, because milliseconds are all the format keeps.
    return re.sub(r"(\.\d{6})\d+", r"\1", value)


def to_ms(moment: datetime) -> int:
    """Milliseconds since the Unix epoch of an aware datetime (floor)."""
    if moment.tzinfo is None:
        raise ValueError("naive datetime")
    delta = moment - _EPOCH
    return delta.days * 86_400_000 + delta.seconds * 1000 + delta.microseconds // 1000


def from_ms(ms: int) -> datetime:
    """An aware UTC datetime from epoch milliseconds."""
    return _EPOCH + timedelta(milliseconds=ms)


def format_datetime(moment: datetime) -> str:
    """UTC ISO 8601 with milliseconds and ``Z`` for an aware datetime. docs/interchange.md, "Framing"."""
    moment = moment.astimezone(UTC)
    # Not strftime: its %Y drops the leading zeros of years before 1000 on glibc ("1-01-01").
    return (
        f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}T{moment.hour:02d}:{moment.minute:02d}:"
        f"{moment.second:02d}.{moment.microsecond // 1000:03d}Z"
    )
