"""altimate-code's lesson schema, checked as its own reader checks it, and its canonical JSON writer.

Pure: no ORM. altimate parses ``approved.json``, ``candidate.json`` and ``versions/v<N>.json`` with a
strict schema and refuses the **whole file** on any fault (an unknown key, a missing or mistyped field,
an id outside ``^L-[0-9a-f]{4,}$``, a repeated id); ``retired.json`` the same per record, without the
repeated-id check. Used by the importer (a refused file is reported and skipped whole) and by the
apply-back command (it never writes a file altimate would refuse). docs/importers.md, "altimate-code:
import_altimate".
"""

from __future__ import annotations

import json
import re
from typing import Any

LESSON_ID = re.compile(r"^L-[0-9a-f]{4,}$")
MAX_SAFE = 2**53 - 1  # a JavaScript safe integer: altimate's counters are z.number().int()
REQUIRED = ("id", "text", "tags", "scope", "helpful", "harmful", "applied", "created", "updated")
OPTIONAL = ("pinned", "trigger", "coexists", "provenance")
RETIRED_REQUIRED = ("reason",)
RETIRED_OPTIONAL = ("supersededBy",)
COUNTERS = ("helpful", "harmful", "applied")


class AltimateFileError(ValueError):
    """A lesson file altimate's reader refuses whole; ``str(exc)`` says why (field and position)."""


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # JSON.parse refuses NaN and Infinity


def loads(raw: bytes) -> Any:
    """Parse ``raw`` as Node's ``JSON.parse(readFile(utf8))`` does.

    Invalid UTF-8 becomes U+FFFD (not an error); a BOM, ``NaN`` and ``Infinity`` are refused.
    Raises ``ValueError`` (``json.JSONDecodeError`` included) or ``RecursionError``.
    """
    text = raw.decode("utf-8", errors="replace")
    if text.startswith("\ufeff"):
        raise ValueError("starts with a byte order mark, which JSON.parse refuses")
    return json.loads(text, parse_constant=_refuse_constant)


def canonical(value: Any) -> str:
    """altimate's ``canonical()``: keys sorted, two-space indent, non-ASCII kept, a trailing newline.

    Python's key order equals altimate's ``localeCompare`` for every key altimate writes (field
    names, ``L-<hex>`` ids).
    """
    return json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def is_counter(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, float):
        return value.is_integer() and 0 <= value <= MAX_SAFE  # 1.0 is an integer to JavaScript
    return isinstance(value, int) and 0 <= value <= MAX_SAFE


def _is_id(value: Any) -> bool:
    return isinstance(value, str) and bool(LESSON_ID.fullmatch(value))


def _is_strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def lesson_problem(entry: Any, *, retired: bool = False) -> str | None:
    """Why altimate's ``Lesson`` (or ``RetiredLesson``) schema refuses ``entry``; None: it accepts it."""
    if not isinstance(entry, dict):
        return "expected an object"
    allowed = set(REQUIRED) | set(OPTIONAL) | (set(RETIRED_REQUIRED + RETIRED_OPTIONAL) if retired else set())
    unknown = sorted(set(entry) - allowed)
    if unknown:
        return f"unknown key {unknown[0]!r}"
    for name in REQUIRED + (RETIRED_REQUIRED if retired else ()):
        if name not in entry:
            return f"{name}: required"
    checks = {
        "id": _is_id,
        "text": lambda v: isinstance(v, str),
        "tags": _is_strings,
        "scope": lambda v: v == "project",
        "created": lambda v: isinstance(v, str),
        "updated": lambda v: isinstance(v, str),
        "pinned": lambda v: isinstance(v, bool),
        "provenance": lambda v: isinstance(v, str),
        "coexists": lambda v: (
            isinstance(v, list) and all(isinstance(i, str) and LESSON_ID.fullmatch(i) for i in v)
        ),
        "trigger": lambda v: (
            isinstance(v, dict) and set(v) <= {"paths"} and ("paths" not in v or _is_strings(v["paths"]))
        ),
        "reason": lambda v: isinstance(v, str),
        "supersededBy": _is_id,
        **{c: is_counter for c in COUNTERS},
    }
    for name, value in entry.items():
        if not checks[name](value):
            if name in ("id", "supersededBy", "coexists"):
                return f"{name}: expected ids matching {LESSON_ID.pattern}, got {json.dumps(value)[:80]}"
            return f"{name}: wrong type or value {json.dumps(value)[:80]}"
    return None


def lesson_file(value: Any, *, retired: bool = False) -> list[dict]:
    """The lessons of a parsed lesson file, counters as ``int``; raises ``AltimateFileError`` when refused.

    ``retired``: ``retired.json`` (RetiredLesson records, repeated ids allowed as altimate allows them).
    """
    if not isinstance(value, list):
        raise AltimateFileError("expected a JSON array")
    seen: set[str] = set()
    lessons = []
    for position, entry in enumerate(value):
        problem = lesson_problem(entry, retired=retired)
        if problem:
            raise AltimateFileError(f"[{position}] {problem}")
        if not retired:
            if entry["id"] in seen:
                raise AltimateFileError(f"[{position}] repeats lesson id {entry['id']}")
            seen.add(entry["id"])
        lessons.append({k: int(v) if k in COUNTERS else v for k, v in entry.items()})
    return lessons


SNAPSHOT_TIERS = ("core", "retrieved", "request", "file")
SNAPSHOT_LISTS = ("requests", "compactions", "counted")


def snapshot_problem(state: dict) -> str | None:
    """Why altimate's delivery ``State`` schema refuses a session snapshot, or None when it accepts it.

    One bad ``shown`` entry (a lesson its strict schema refuses, an unknown tier) refuses the whole
    snapshot: delivery then skips that session.
    """
    if state.get("version") != 1:
        return "version: expected 1"
    for name in ("firstMessage", "section"):
        if not isinstance(state.get(name), str):
            return f"{name}: expected a string"
    for name in SNAPSHOT_LISTS:
        if not isinstance(state.get(name), list):
            return f"{name}: expected an array"
    for position, entry in enumerate(state["shown"]):
        if not isinstance(entry, dict):
            return f"shown[{position}]: expected an object"
        problem = lesson_problem(entry.get("lesson"))
        if problem:
            return f"shown[{position}].lesson: {problem}"
        if entry.get("tier") not in SNAPSHOT_TIERS:
            return f"shown[{position}].tier: expected one of {', '.join(SNAPSHOT_TIERS)}"
        for name in ("name", "at", "queryHash"):
            if not isinstance(entry.get(name), str):
                return f"shown[{position}].{name}: expected a string"
        if entry.get("source", "local") not in ("local", "remote"):
            return f'shown[{position}].source: expected "local" or "remote"'
    return None
