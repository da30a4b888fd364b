"""Parsing and validating interchange records (JSON Lines) into typed records.

Pure: no ORM. One line in, one record or a list of ``FieldError`` out. References between
records (a verdict naming a lesson) are resolved later, against the batch and the database.
The records (and ``LessonRef``) are immutable ``NamedTuple`` rows: ingest makes one per line and spools
it to a file between its phases, and a named tuple is made, pickled and read back about ten times
faster than a frozen dataclass (about 0.6 s of 100,000 lines went to that). docs/interchange.md.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .text import TimestampError, lesson_hash, normalize, parse_timestamp, text_hash

HOST_NAME = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
LESSON_STATUSES = ("live", "retracted", "superseded")
LESSON_KINDS = ("lesson", "consolidation")
ORIGINS = ("builtin", "llm", "human", "command")
GATE_RESULTS = ("pass", "fail")
RECORD_TYPES = ("host", "lesson", "verdict", "exposure", "correction", "draft")
DEFAULT_MAX_ACTIVE = 8
MAX_ACTIVE_MIN, MAX_ACTIVE_MAX = 1, 10_000
# What every place that takes a max_active (the budget page, the service, the command) says it must be.
MAX_ACTIVE_WANTED = f"max_active must be a whole number from {MAX_ACTIVE_MIN} to {MAX_ACTIVE_MAX}"
MAX_TEXT = 1000
# A correction is what a person typed, kept whole up to 2000 characters (altimate's signal cap); a
# lesson is a rule shown in every prompt and stays at 1000. docs/interchange.md, "correction: a user corrected
# the agent".
MAX_CORRECTION_TEXT = 2000
NUL_MESSAGE = "must not contain the NUL character (U+0000)"
MAX_SHORT = 200  # ids, sessions, metrics, labels: long enough for any real id, bounded for the database
MAX_LIST_ITEMS = 100  # a list of labels (tags)
MAX_COUNTER = 2**31 - 1  # helpful, harmful, applied: a PositiveIntegerField on PostgreSQL
MAX_BIGINT = 2**63 - 1  # horizon_ms: a BigIntegerField
E_JSON_TOO_DEEP = "not valid JSON (nested too deeply)"
E_JSON_NUMBER_TOO_LONG = "not valid JSON (a number has too many digits)"
E_DUPLICATE_KEY = 'duplicate key "{key}": a key may appear once in an object'
E_LONE_SURROGATE = "contains a lone surrogate escape (\\ud800-\\udfff); text must be valid Unicode"
_SURROGATE = re.compile(r"[\ud800-\udfff]")
# Where a decoded line can hold a lone surrogate: one in the text itself, or a JSON escape of one.
_SURROGATE_SOURCE = re.compile(r"[\ud800-\udfff]|\\u[dD][89a-fA-F]")


@dataclass(frozen=True)
class FieldError:
    """One problem with one field of one record: ``field`` is a dotted name such as ``lesson.created_at``."""

    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.field}: {self.message}"


class RecordError(ValueError):
    """A line that is not a valid record; ``errors`` names each field and what was expected."""

    def __init__(self, errors: list[FieldError]):
        super().__init__("; ".join(str(e) for e in errors))
        self.errors = errors


class LessonRef(NamedTuple):
    """A reference to a lesson: by ``hash``, or by ``store`` + ``lesson_id``."""

    hash: str | None = None
    store: str | None = None
    lesson_id: str | None = None

    def describe(self) -> str:
        if self.hash:
            return f"lesson {self.hash}"
        return f"lesson {self.store}/{self.lesson_id}"


class HostRecord(NamedTuple):
    name: str
    max_active: int | None
    budget_enabled: bool | None
    description: str | None
    type: str = "host"


class LessonRecord(NamedTuple):
    host: str
    namespace: str
    subject: str
    text: str  # normalized
    created_at_ms: int
    hash: str
    status: str = "live"
    kind: str = "lesson"
    lesson_id: str | None = None
    store: str | None = None
    origin: str | None = None
    superseded_by: str | None = None
    consolidates: tuple[str, ...] = ()
    confidence: float | None = None
    helpful: int | None = None
    harmful: int | None = None
    applied: int | None = None
    tags: tuple[str, ...] = ()
    type: str = "lesson"


class VerdictRecord(NamedTuple):
    host: str
    lesson: LessonRef
    verdict: str
    measured_at_ms: int
    metric: str | None = None
    baseline: float | None = None
    current: float | None = None
    horizon_ms: int | None = None
    type: str = "verdict"


class ExposureRecord(NamedTuple):
    host: str
    session: str
    lesson: LessonRef
    shown_at_ms: int
    text: str | None = None  # normalized
    text_hash: str | None = None
    tier: str | None = None
    type: str = "exposure"


class CorrectionRecord(NamedTuple):
    host: str
    session: str
    kind: str
    text: str
    corrected_at_ms: int
    turn_started_at_ms: int | None = None
    id: str | None = None
    type: str = "correction"

    @property
    def identity(self) -> str:
        """``id`` when given, else a digest of session, time and text. docs/interchange.md, "correction: a
        user corrected the agent"."""
        if self.id:
            return f"id:{self.id}"
        return f"auto:{self.session}\u001f{self.corrected_at_ms}\u001f{text_hash(self.text)}"


class DraftRecord(NamedTuple):
    host: str
    namespace: str
    subject: str
    text: str  # normalized
    supersedes: tuple[str, ...]
    drafted_by: str
    gate_ground: str
    gate_verify: str
    created_at_ms: int
    triggered_by: str | None = None
    confidence: float | None = None
    id: str | None = None
    type: str = "draft"

    @property
    def identity(self) -> str:
        """``id`` when given, else a digest of the text and the sorted supersedes."""
        if self.id:
            return self.id
        return (
            "auto-" + text_hash(normalize(self.text) + "\u001f" + "\u001f".join(sorted(self.supersedes)))[:16]
        )


Record = HostRecord | LessonRecord | VerdictRecord | ExposureRecord | CorrectionRecord | DraftRecord

# A lesson record's optional fields that are stored as given (lists for the arrays): one home for the
# reader here and the ingest's writer (lessons/ingest/passes.py).
LESSON_GIVEN_FIELDS = (
    "kind",
    "lesson_id",
    "store",
    "origin",
    "superseded_by",
    "consolidates",
    "confidence",
    "helpful",
    "harmful",
    "applied",
    "tags",
)
_ALLOWED = {
    "host": {"type", "name", "max_active", "budget_enabled", "description"},
    "lesson": {
        "type",
        "host",
        "namespace",
        "subject",
        "text",
        "created_at",
        "hash",
        "status",
        *LESSON_GIVEN_FIELDS,
    },
    "verdict": {
        "type",
        "host",
        "lesson",
        "lesson_id",
        "store",
        "verdict",
        "metric",
        "baseline",
        "current",
        "horizon_ms",
        "measured_at",
    },
    "exposure": {
        "type",
        "host",
        "session",
        "lesson",
        "store",
        "lesson_id",
        "text",
        "text_hash",
        "shown_at",
        "tier",
    },
    "correction": {"type", "host", "session", "id", "kind", "text", "corrected_at", "turn_started_at"},
    "draft": {
        "type",
        "host",
        "id",
        "namespace",
        "subject",
        "text",
        "supersedes",
        "drafted_by",
        "triggered_by",
        "gates",
        "confidence",
        "created_at",
    },
}


@dataclass
class _Reader:
    """Collects every error of one object instead of stopping at the first."""

    obj: dict[str, Any]
    kind: str
    errors: list[FieldError] = field(default_factory=list)

    def fail(self, name: str, message: str) -> None:
        self.errors.append(FieldError(f"{self.kind}.{name}", message))

    def present(self, name: str) -> bool:
        return self.obj.get(name) is not None

    def string(
        self, name: str, *, required: bool, empty_ok: bool = False, max_len: int = MAX_SHORT
    ) -> str | None:
        if name not in self.obj or self.obj[name] is None:
            if required:
                self.fail(name, "required")
            return None
        value = self.obj[name]
        if not isinstance(value, str):
            self.fail(name, f"expected a string, got {_json_type(value)}")
            return None
        if not value.strip() and not empty_ok:
            self.fail(name, "must not be empty")
            return None
        if "\x00" in value:
            self.fail(name, NUL_MESSAGE)
            return None
        if len(value) > max_len:
            self.fail(name, f"at most {max_len} characters, got {len(value)}")
            return None
        return value

    def integer(
        self,
        name: str,
        *,
        required: bool,
        lo: int | None = None,
        hi: int | None = None,
        cap: int | None = None,
    ) -> int | None:
        """An integer in ``lo..hi``; ``cap`` is a storage limit with its own message."""
        if not self.present(name):
            if required:
                self.fail(name, "required")
            return None
        value = self.obj[name]
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                self.fail(name, f"expected an integer, got {_json_type(value)}")
                return None
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            bounds = f"{lo}..{hi}" if hi is not None else f">= {lo}"
            self.fail(name, f"expected an integer in {bounds}, got {value}")
            return None
        if cap is not None and value > cap:
            self.fail(name, f"expected at most {cap}, got {value}")
            return None
        return value

    def number(self, name: str, *, lo: float | None = None, hi: float | None = None) -> float | None:
        if not self.present(name):
            return None
        value = self.obj[name]
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(name, f"expected a number, got {_json_type(value)}")
            return None
        if not math.isfinite(value):
            self.fail(name, f"expected a finite number, got {json.dumps(value)}")
            return None
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            self.fail(name, f"expected a number in {lo}..{hi}, got {value}")
            return None
        return float(value)

    def boolean(self, name: str) -> bool | None:
        if not self.present(name):
            return None
        value = self.obj[name]
        if not isinstance(value, bool):
            self.fail(name, f"expected true or false, got {_json_type(value)}")
            return None
        return value

    def timestamp(self, name: str, *, required: bool) -> int | None:
        if not self.present(name):
            if required:
                self.fail(name, "required")
            return None
        try:
            return parse_timestamp(self.obj[name])
        except TimestampError as exc:
            self.fail(name, str(exc))
            return None

    def choice(self, name: str, choices: tuple[str, ...], *, default: str | None) -> str | None:
        if not self.present(name):
            return default
        value = self.obj[name]
        if value not in choices:
            self.fail(name, f"expected one of {', '.join(choices)}, got {json.dumps(value)}")
            return None
        return value

    def hex64(self, name: str, *, required: bool = False) -> str | None:
        value = self.string(name, required=required)
        if value is not None and not HEX64.fullmatch(value):
            self.fail(name, "expected 64 lowercase hex digits")
            return None
        return value

    def hash_list(self, name: str, *, required: bool) -> tuple[str, ...] | None:
        if not self.present(name):
            if required:
                self.fail(name, "required")
            return None if required else ()
        value = self.obj[name]
        if not isinstance(value, list):
            self.fail(name, f"expected an array of hashes, got {_json_type(value)}")
            return None
        bad = [i for i, h in enumerate(value) if not isinstance(h, str) or not HEX64.fullmatch(h)]
        if bad:
            self.fail(f"{name}[{bad[0]}]", "expected 64 lowercase hex digits")
            return None
        return tuple(dict.fromkeys(value))

    def text(self, name: str, *, max_len: int = MAX_TEXT) -> str | None:
        raw = self.string(name, required=True, max_len=100_000)
        if raw is None:
            return None
        text = normalize(raw)
        if not 1 <= len(text) <= max_len:
            self.fail(name, f"expected 1..{max_len} characters after normalization, got {len(text)}")
            return None
        return text

    def host(self, default_host: str | None) -> str | None:
        if "host" in self.obj and self.obj["host"] is not None:
            name = self.string("host", required=True, max_len=64)
        else:
            name = default_host
            if name is None:
                self.fail("host", "required (or give a default host with --host)")
                return None
        if name is not None and not HOST_NAME.fullmatch(name):
            self.fail("host", f"expected a host name matching {HOST_NAME.pattern}, got {json.dumps(name)}")
            return None
        return name

    def lesson_ref(self) -> LessonRef | None:
        if self.present("lesson"):
            value = self.hex64("lesson")
            for extra in ("store", "lesson_id"):
                if self.present(extra) and self.kind == "verdict":
                    self.fail(extra, "give either lesson or store + lesson_id, not both")
                    return None
            return LessonRef(hash=value) if value else None
        store = self.string("store", required=False)
        lesson_id = self.string("lesson_id", required=False)
        if store and lesson_id:
            return LessonRef(store=store, lesson_id=lesson_id)
        if not any(e.field.endswith((".store", ".lesson_id")) for e in self.errors):
            self.fail("lesson", "required: the lesson's hash, or store + lesson_id")
        return None


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def parse_line(line: str, *, default_host: str | None = None) -> Record | None:
    """Parse one JSON Lines line into a record; ``None`` for a blank line.

    Raises ``RecordError`` listing every invalid field (``type.field: what was expected``).
    Unknown types, unknown keys and wrong JSON types are errors. docs/interchange.md.
    """
    if not line.strip():
        return None
    try:
        obj = _decode(line)
    except json.JSONDecodeError as exc:
        raise RecordError([FieldError("json", f"not valid JSON ({exc.msg} at column {exc.colno})")]) from None
    except _DuplicateKey as exc:
        raise RecordError([FieldError("json", E_DUPLICATE_KEY.format(key=exc.key))]) from None
    except RecursionError:
        raise RecordError([FieldError("json", E_JSON_TOO_DEEP)]) from None
    except ValueError as exc:  # Python refuses integers of more than 4300 digits
        too_long = "integer string conversion" in str(exc)
        message = E_JSON_NUMBER_TOO_LONG if too_long else f"not valid JSON ({exc})"
        raise RecordError([FieldError("json", message)]) from None
    if not isinstance(obj, dict):
        raise RecordError([FieldError("json", f"expected a JSON object, got {_json_type(obj)}")])
    # A line with neither a surrogate nor an escape of one cannot decode to one: skip the walk. An ASCII
    # line (``isascii`` is a flag of the string, no scan) without a backslash-u holds neither.
    surrogates = (not line.isascii() or "\\u" in line) and _SURROGATE_SOURCE.search(line) is not None
    return parse_object(obj, default_host=default_host, surrogates=surrogates)


def _decode(line: str) -> Any:
    """``json.loads(line, object_pairs_hook=_unique_keys)``, with one decoder made once: ``json.loads``
    with a hook builds a new decoder per call. A leading BOM (which ``json.loads`` refuses before decoding,
    with its own message) and a non-``str`` go through ``json.loads`` itself."""
    if type(line) is not str or line.startswith("\ufeff"):
        return json.loads(line, object_pairs_hook=_unique_keys)
    return _DECODER.decode(line)


class _DuplicateKey(Exception):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = json.dumps(key)[1:-1]  # escaped: a key may hold control characters or surrogates


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``object_pairs_hook``: a repeated key would silently keep its last value, so refuse it."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _value in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return obj


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)


def _has_surrogate(value: Any) -> bool:
    """Whether a string anywhere in ``value`` holds a lone surrogate (JSON's ``"\\ud800"`` decodes to one,
    and it cannot be encoded as UTF-8: hashing or storing it would fail)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _surrogate_errors(obj: dict[str, Any], rtype: str) -> list[FieldError]:
    errors = []
    for key, value in obj.items():
        if _has_surrogate(key):
            errors.append(FieldError("json", f"a key {E_LONE_SURROGATE}"))
        elif _has_surrogate(value):
            errors.append(FieldError(f"{rtype}.{key}", E_LONE_SURROGATE))
    return errors


def parse_object(obj: dict[str, Any], *, default_host: str | None = None, surrogates: bool = True) -> Record:
    """Validate one decoded JSON object; see ``parse_line``. ``surrogates=False`` skips the search for lone
    surrogates (for a caller that knows the object's source holds none)."""
    rtype = obj.get("type")
    if rtype not in RECORD_TYPES:
        got = "missing" if rtype is None else json.dumps(rtype)
        raise RecordError([FieldError("type", f"expected one of {', '.join(RECORD_TYPES)}, got {got}")])
    found = _surrogate_errors(obj, rtype) if surrogates else []
    if found:
        raise RecordError(found)
    fast = _FAST_PARSERS.get(rtype)
    if fast is not None:
        record = fast(obj, default_host)
        if record is not None:
            return record
    return _parse_with_reader(obj, rtype, default_host)


def _parse_with_reader(obj: dict[str, Any], rtype: str, default_host: str | None) -> Record:
    """The general validator: every field through ``_Reader``, every problem collected."""
    reader = _Reader(obj, rtype)
    unknown = sorted(set(obj) - _ALLOWED[rtype])
    for key in unknown:
        reader.fail(key, "unknown key")
    record = _PARSERS[rtype](reader, default_host)
    if reader.errors:
        raise RecordError(reader.errors)
    assert record is not None
    return record


def _parse_host(r: _Reader, _default: str | None) -> HostRecord | None:
    name = r.string("name", required=True, max_len=64)
    if name is not None and not HOST_NAME.fullmatch(name):
        r.fail("name", f"expected a host name matching {HOST_NAME.pattern}, got {json.dumps(name)}")
    max_active = r.integer("max_active", required=False, lo=MAX_ACTIVE_MIN, hi=MAX_ACTIVE_MAX)
    enabled = r.boolean("budget_enabled")
    description = r.string("description", required=False, empty_ok=True, max_len=1000)
    if r.errors:
        return None
    return HostRecord(name=name, max_active=max_active, budget_enabled=enabled, description=description)


def _parse_lesson(r: _Reader, default_host: str | None) -> LessonRecord | None:
    host = r.host(default_host)
    namespace = r.string("namespace", required=True, empty_ok=True)
    subject = r.string("subject", required=True)
    text = r.text("text")
    created = r.timestamp("created_at", required=True)
    given_hash = r.hex64("hash")
    status = r.choice("status", LESSON_STATUSES, default="live")
    kind = r.choice("kind", LESSON_KINDS, default="lesson")
    lesson_id = r.string("lesson_id", required=False)
    store = r.string("store", required=False)
    origin = r.choice("origin", ORIGINS, default=None)
    superseded_by = r.hex64("superseded_by")
    consolidates = r.hash_list("consolidates", required=False)
    confidence = r.number("confidence", lo=0.0, hi=1.0)
    counters = {
        c: r.integer(c, required=False, lo=0, cap=MAX_COUNTER) for c in ("helpful", "harmful", "applied")
    }
    tags = _string_list(r, "tags")
    if superseded_by and status != "superseded":
        r.fail("superseded_by", 'only with "status": "superseded"')
    if consolidates and kind != "consolidation":
        r.fail("consolidates", 'only with "kind": "consolidation"')
    if r.errors:
        return None
    return LessonRecord(
        host=host,
        namespace=namespace,
        subject=subject,
        text=text,
        created_at_ms=created,
        hash=given_hash or lesson_hash(namespace, subject, text),
        status=status,
        kind=kind,
        lesson_id=lesson_id,
        store=store,
        origin=origin,
        superseded_by=superseded_by,
        consolidates=consolidates or (),
        confidence=confidence,
        tags=tags,
        **counters,
    )


def _string_list(r: _Reader, name: str) -> tuple[str, ...]:
    if not r.present(name):
        return ()
    value = r.obj[name]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        r.fail(name, "expected an array of strings")
        return ()
    if any("\x00" in v for v in value):
        r.fail(name, NUL_MESSAGE)
        return ()
    # Bounded as the other identifiers are (the attacker's finding 11: one tag of 100,000 characters, or
    # 200,000 tags, were stored).
    if len(value) > MAX_LIST_ITEMS:
        r.fail(name, f"at most {MAX_LIST_ITEMS} items, got {len(value)}")
        return ()
    long = next((v for v in value if len(v) > MAX_SHORT), None)
    if long is not None:
        r.fail(name, f"each item at most {MAX_SHORT} characters, got one of {len(long)}")
        return ()
    return tuple(value)


def _parse_verdict(r: _Reader, default_host: str | None) -> VerdictRecord | None:
    host = r.host(default_host)
    ref = r.lesson_ref()
    verdict = r.string("verdict", required=True, max_len=64)
    metric = r.string("metric", required=False)
    baseline = r.number("baseline")
    current = r.number("current")
    horizon = r.integer("horizon_ms", required=False, lo=0, cap=MAX_BIGINT)
    measured = r.timestamp("measured_at", required=True)
    if r.errors:
        return None
    return VerdictRecord(
        host=host,
        lesson=ref,
        verdict=verdict.strip(),
        measured_at_ms=measured,
        metric=metric,
        baseline=baseline,
        current=current,
        horizon_ms=horizon,
    )


def _parse_exposure(r: _Reader, default_host: str | None) -> ExposureRecord | None:
    host = r.host(default_host)
    session = r.string("session", required=True)
    ref = r.lesson_ref()
    shown = r.timestamp("shown_at", required=True)
    text = r.text("text") if r.present("text") else None
    given_hash = r.hex64("text_hash")
    tier = r.string("tier", required=False, empty_ok=True)
    if text is not None and given_hash is not None and text_hash(text) != given_hash:
        r.fail("text_hash", "does not match the hash of text")
    if r.errors:
        return None
    return ExposureRecord(
        host=host,
        session=session,
        lesson=ref,
        shown_at_ms=shown,
        text=text,
        text_hash=text_hash(text) if text is not None else given_hash,
        tier=tier,
    )


def _parse_correction(r: _Reader, default_host: str | None) -> CorrectionRecord | None:
    host = r.host(default_host)
    session = r.string("session", required=True)
    cid = r.string("id", required=False)
    kind = r.string("kind", required=True, max_len=64)
    text = r.text("text", max_len=MAX_CORRECTION_TEXT)
    corrected = r.timestamp("corrected_at", required=True)
    turn = r.timestamp("turn_started_at", required=False)
    if r.errors:
        return None
    return CorrectionRecord(
        host=host,
        session=session,
        kind=kind,
        text=text,
        corrected_at_ms=corrected,
        turn_started_at_ms=turn,
        id=cid,
    )


def _parse_draft(r: _Reader, default_host: str | None) -> DraftRecord | None:
    host = r.host(default_host)
    did = r.string("id", required=False)
    namespace = r.string("namespace", required=True, empty_ok=True)
    subject = r.string("subject", required=True)
    text = r.text("text")
    supersedes = r.hash_list("supersedes", required=True)
    if supersedes is not None and not supersedes:
        r.fail("supersedes", "expected at least one lesson hash")
    drafted_by = r.string("drafted_by", required=True)
    triggered_by = r.string("triggered_by", required=False)
    confidence = r.number("confidence", lo=0.0, hi=1.0)
    created = r.timestamp("created_at", required=True)
    gates = r.obj.get("gates")
    ground = verify = None
    if not isinstance(gates, dict):
        r.fail("gates", 'required: {"ground": "pass"|"fail", "verify": "pass"|"fail"}')
    else:
        for key in sorted(set(gates) - {"ground", "verify"}):
            r.fail(f"gates.{key}", "unknown key")
        ground, verify = gates.get("ground"), gates.get("verify")
        for key, value in (("ground", ground), ("verify", verify)):
            if value not in GATE_RESULTS:
                r.fail(f"gates.{key}", f'expected "pass" or "fail", got {json.dumps(value)}')
    if r.errors:
        return None
    return DraftRecord(
        host=host,
        namespace=namespace,
        subject=subject,
        text=text,
        supersedes=supersedes,
        drafted_by=drafted_by,
        triggered_by=triggered_by,
        gate_ground=ground,
        gate_verify=verify,
        created_at_ms=created,
        confidence=confidence,
        id=did,
    )


_PARSERS = {
    "host": _parse_host,
    "lesson": _parse_lesson,
    "verdict": _parse_verdict,
    "exposure": _parse_exposure,
    "correction": _parse_correction,
    "draft": _parse_draft,
}


# --- the fast paths ----------------------------------------------------------------------------
# Exposures and corrections are nearly every line of a large batch. Their fast path checks a record in
# one go and returns the very record the general validator would; at the first thing it does not
# accept plainly (an error, an unusual but valid value) it returns None and the general validator runs,
# which reports every problem (tests/lessons/core/test_interchange_fast.py holds both to the same result).


def _plain(value: Any, max_len: int = MAX_SHORT) -> bool:
    """What ``_Reader.string`` accepts without a message: a non-blank string without NUL, at most
    ``max_len`` characters."""
    return type(value) is str and len(value) <= max_len and "\x00" not in value and bool(value.strip())


def _fast_host(obj: dict[str, Any], default_host: str | None) -> str | None:
    name = obj.get("host")
    if name is None:
        name = default_host
    # The pattern admits no NUL, no blank and at most 64 characters: what ``_Reader.host`` checks.
    return name if type(name) is str and HOST_NAME.fullmatch(name) else None


def _fast_text(value: Any, max_len: int) -> str | None:
    if type(value) is not str or len(value) > 100_000 or "\x00" in value or not value.strip():
        return None
    text = normalize(value)
    return text if 1 <= len(text) <= max_len else None


def _fast_time(value: Any) -> int | None:
    try:
        return parse_timestamp(value)
    except TimestampError:
        return None


_EXPOSURE_KEYS = frozenset(_ALLOWED["exposure"])
_CORRECTION_KEYS = frozenset(_ALLOWED["correction"])


def _fast_exposure(obj: dict[str, Any], default_host: str | None) -> ExposureRecord | None:
    """``_parse_exposure``'s record for a plainly valid exposure, else None."""
    if not obj.keys() <= _EXPOSURE_KEYS:
        return None
    host = _fast_host(obj, default_host)
    session = obj.get("session")
    shown = _fast_time(obj.get("shown_at"))
    if host is None or shown is None or not _plain(session):
        return None
    given = obj.get("lesson")
    if given is not None:  # by hash; an exposure's store and lesson_id beside it are not read
        if type(given) is not str or not HEX64.fullmatch(given):
            return None
        ref = LessonRef(hash=given)
    else:
        store, lesson_id = obj.get("store"), obj.get("lesson_id")
        if not (_plain(store) and _plain(lesson_id)):
            return None
        ref = LessonRef(store=store, lesson_id=lesson_id)
    digest = obj.get("text_hash")
    if digest is not None and (type(digest) is not str or not HEX64.fullmatch(digest)):
        return None
    tier = obj.get("tier")
    if tier is not None and (type(tier) is not str or len(tier) > MAX_SHORT or "\x00" in tier):
        return None
    text = obj.get("text")
    if text is not None:
        text = _fast_text(text, MAX_TEXT)
        if text is None:
            return None
        own = text_hash(text)
        if digest is not None and digest != own:
            return None
        digest = own
    return ExposureRecord(
        host=host, session=session, lesson=ref, shown_at_ms=shown, text=text, text_hash=digest, tier=tier
    )


def _fast_correction(obj: dict[str, Any], default_host: str | None) -> CorrectionRecord | None:
    """``_parse_correction``'s record for a plainly valid correction, else None."""
    if not obj.keys() <= _CORRECTION_KEYS:
        return None
    host = _fast_host(obj, default_host)
    session, cid, kind = obj.get("session"), obj.get("id"), obj.get("kind")
    corrected = _fast_time(obj.get("corrected_at"))
    if host is None or corrected is None or not _plain(session) or not _plain(kind, 64):
        return None
    if cid is not None and not _plain(cid):
        return None
    turn = obj.get("turn_started_at")
    if turn is not None:
        turn = _fast_time(turn)
        if turn is None:
            return None
    text = _fast_text(obj.get("text"), MAX_CORRECTION_TEXT)
    return None if text is None else CorrectionRecord(host, session, kind, text, corrected, turn, cid)


_FAST_PARSERS = {"exposure": _fast_exposure, "correction": _fast_correction}
