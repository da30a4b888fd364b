"""Shared pieces of the importers: the translation result, JSON reading, validation, references.

Pure: no ORM. A translation is a list of ``Item`` (where a record came from, and the interchange
record dict without ``host``) plus the importer's own counts and the problems it skipped.
docs/importers.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lessons.core.interchange import HEX64, RecordError, parse_object

MAX_PROBLEMS = 100  # problems listed in full; the counts always cover all of them
BOM = "\ufeff"
# What json.loads raises besides JSONDecodeError: ValueError for an integer of more than 4300 digits,
# RecursionError for arrays or objects nested about a thousand deep. Both are malformed input.
JSON_ERRORS = (ValueError, RecursionError)

# Counter names shared by both importers (the report prints them as they are).
SKIPPED_LINES = "skipped lines"
SKIPPED_RECORDS = "skipped records"
UNKNOWN_LESSON_REFS = "references to unknown lessons"


class SourceError(Exception):
    """An unreadable required input: the import stops with this message (exit status 1)."""


@dataclass(frozen=True)
class Item:
    """One translated record: ``origin`` names where it came from (``file:line``), ``record`` the dict."""

    origin: str
    record: dict[str, Any]


@dataclass
class Translation:
    """What an importer made of its source: records, its own counts, and the problems it skipped.

    ``counts`` keep insertion order so the report lists them in a stable order; ``problems`` hold
    at most ``MAX_PROBLEMS`` messages (``problem_count`` counts them all). ``retired_reasons`` maps a
    lesson hash to the source's retirement reason; ``live_hashes`` are the lessons the source holds
    live (altimate only: the runner keeps ``Lesson.source_note`` in step with them).
    """

    items: list[Item] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    problem_count: int = 0
    retired_reasons: dict[str, str] = field(default_factory=dict)
    live_hashes: set[str] = field(default_factory=set)

    def add(self, origin: str, record: dict[str, Any]) -> None:
        self.items.append(Item(origin, record))

    def count(self, name: str, n: int = 1) -> None:
        self.counts[name] = self.counts.get(name, 0) + n

    def note(self, message: str) -> None:
        self.problem_count += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(message)

    def skip(self, counter: str, origin: str, message: str) -> None:
        """Count one skipped input under ``counter`` and list why (``origin: message``)."""
        self.count(counter)
        self.note(f"{origin}: {message}")

    def problem_lines(self) -> list[str]:
        lines = list(self.problems)
        if self.problem_count > len(self.problems):
            lines.append(f"... and {self.problem_count - len(self.problems)} more")
        return lines


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path`` without a leading BOM; raises ``OSError`` or ``UnicodeDecodeError``."""
    text = path.read_bytes().decode("utf-8")
    return text[1:] if text.startswith(BOM) else text


def json_lines(text: str) -> Iterator[tuple[int, Any, str | None]]:
    """Yield ``(line_number, value, error)`` for each non-blank line; ``error`` is set when it is not JSON.

    A torn last line (a writer interrupted mid-line) is just a line that is not JSON.
    """
    for number, line in enumerate(text.split("\n"), start=1):
        line = line.rstrip("\r")
        if not line.strip():
            continue
        try:
            yield number, json.loads(line), None
        except json.JSONDecodeError as exc:
            yield number, None, f"not valid JSON: {exc.msg} (column {exc.colno})"
        except JSON_ERRORS as exc:
            yield number, None, f"not valid JSON: {json_problem(exc)}"


def json_problem(exc: BaseException) -> str:
    """Why ``json.loads`` refused a text, in words (a JSONDecodeError names its place)."""
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    if "integer string conversion" in str(exc):
        return "a number has too many digits"
    return str(exc)


def is_hash(value: Any) -> bool:
    return isinstance(value, str) and bool(HEX64.fullmatch(value))


def validated(translation: Translation, *, host: str) -> None:
    """Drop the records the interchange format refuses, counting each under ``skipped records``.

    Uses the same parser as ingest (``lessons.core.interchange.parse_object``), so what remains
    can only be refused by ingest for a reference it cannot resolve.
    """
    kept = []
    for item in translation.items:
        try:
            parse_object(item.record, default_host=host)
        except RecordError as exc:
            translation.skip(SKIPPED_RECORDS, item.origin, f"not imported: {exc}")
            continue
        kept.append(item)
    translation.items = kept


def lesson_refs(translation: Translation) -> tuple[set[str], set[tuple[str, str]]]:
    """The lessons the translation defines: their hashes and their ``(store, lesson_id)`` pairs."""
    hashes: set[str] = set()
    ids: set[tuple[str, str]] = set()
    for item in translation.items:
        r = item.record
        if r["type"] == "lesson":
            if "hash" in r:
                hashes.add(r["hash"])
            if r.get("store") and r.get("lesson_id"):
                ids.add((r["store"], r["lesson_id"]))
    return hashes, ids


def referenced(translation: Translation) -> tuple[set[str], set[tuple[str, str]]]:
    """The lesson hashes and ``(store, lesson_id)`` pairs the verdicts, exposures and drafts name."""
    hashes: set[str] = set()
    ids: set[tuple[str, str]] = set()
    for item in translation.items:
        r = item.record
        if r["type"] in ("verdict", "exposure"):
            if "lesson" in r:
                hashes.add(r["lesson"])
            else:
                ids.add((r["store"], r["lesson_id"]))
        elif r["type"] == "draft":
            hashes.update(r["supersedes"])
    return hashes, ids


def drop_unresolved(translation: Translation, *, hashes: set[str], ids: set[tuple[str, str]]) -> None:
    """Skip verdicts, exposures and drafts naming a lesson neither the source nor the database has.

    Counted under ``references to unknown lessons``: ingest would refuse them line by line.
    """
    kept = []
    for item in translation.items:
        r = item.record
        missing = None
        if r["type"] in ("verdict", "exposure"):
            if "lesson" in r:
                missing = None if r["lesson"] in hashes else f"lesson {r['lesson']}"
            elif (r["store"], r["lesson_id"]) not in ids:
                missing = f"lesson {r['store']}/{r['lesson_id']}"
        elif r["type"] == "draft":
            unknown = [h for h in r["supersedes"] if h not in hashes]
            missing = f"lesson {unknown[0]}" if unknown else None
        if missing:
            translation.skip(
                UNKNOWN_LESSON_REFS,
                item.origin,
                f"{r['type']} skipped: no {missing} in the source or the database",
            )
            continue
        kept.append(item)
    translation.items = kept


def json_dumps(records: Iterable[dict[str, Any]]) -> Iterator[str]:
    """Each record as one compact JSON line (sorted keys, so the bytes are deterministic)."""
    for record in records:
        yield json.dumps(record, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
