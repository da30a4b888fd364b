"""The text each lesson of an altimate store had live at a given time, from the store's own history.

Pure: reads files, never the database. altimate changes a lesson's text only when ``learn promote``
publishes a staged candidate (or ``learn rollback`` undoes one); ``updated`` also moves for a vote or
a pin, so it says nothing about when a text went live. What says it:
- ``versions/v<N>.json``: the approved set the promote with ``"version": N`` replaced (live until that
  promote's ``ts``); a version number is reused after a rollback, so the file belongs to the last line
  naming ``N``;
- ``history.jsonl`` ``reflect`` lines: the texts an ``ADD``/``EDIT`` staged, live from the next promote
  (a ``reject`` discards them);
- ``approved.json``: the set live since the last promote.
Without history, only approved.json is known: its text is taken, but as a guess (``certain`` False).
docs/importers.md, "altimate-code: import_altimate"; issue 11, item 4.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path

from lessons.core.text import TimestampError, parse_timestamp

from .altimate_lesson import AltimateFileError, lesson_file, loads
from .common import JSON_ERRORS

PROMOTES = ("promote", "auto-promote")


@dataclass
class _State:
    """The approved set from ``start`` (epoch ms) on: ``texts`` by id, ``lessons`` whole where known."""

    start: int | None
    texts: dict[str, str] = field(default_factory=dict)
    lessons: dict[str, dict] = field(default_factory=dict)
    complete: bool = False  # every live lesson's text is known (from a file, not only staged deltas)


@dataclass(frozen=True)
class Shown:
    """The text of one lesson at one time; ``lesson`` is its full entry when a file holds it."""

    text: str
    certain: bool
    lesson: dict | None = None


def _ms(value) -> int | None:
    try:
        return parse_timestamp(value)
    except TimestampError:
        return None


def _version_file(store: Path, number: int) -> list[dict] | None:
    path = store / "versions" / f"v{number}.json"
    try:
        return lesson_file(loads(path.read_bytes())) if path.is_file() else None
    except (OSError, AltimateFileError, *JSON_ERRORS):
        return None  # a version altimate would refuse tells nothing; the gap falls back to a guess


def _history_lines(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    lines = []
    for raw in path.read_bytes().decode("utf-8", errors="replace").split("\n"):
        try:
            value = json.loads(raw) if raw.strip() else None
        except JSON_ERRORS:
            continue  # altimate quarantines a malformed line; it is no event
        if isinstance(value, dict) and isinstance(value.get("action"), str):
            lines.append(value)
    return lines


def _set(state: _State, lessons: list[dict]) -> None:
    state.texts = {x["id"]: x["text"] for x in lessons}
    state.lessons = {x["id"]: x for x in lessons}
    state.complete = True


class TextHistory:
    """Answers "which text of lesson X was live at time t" for one store (see the module docstring)."""

    def __init__(self, store: Path, approved: list[dict] | None):
        self.states: list[_State] = [_State(start=None)]
        lines = _history_lines(store / "history.jsonl")
        owner = {}  # version number -> index of the last line naming it (that line's file is on disk)
        for index, line in enumerate(lines):
            if isinstance(line.get("version"), int):
                owner[line["version"]] = index
        staged: dict[str, str | None] = {}
        stack: list[_State] = []
        for index, line in enumerate(lines):
            action, ts = line["action"], _ms(line.get("ts"))
            if action == "reflect":
                for delta in line.get("applied") or []:
                    if not isinstance(delta, dict) or not isinstance(delta.get("id"), str):
                        continue
                    if delta.get("op") in ("ADD", "EDIT") and isinstance(delta.get("text"), str):
                        staged[delta["id"]] = delta["text"]
                    elif delta.get("op") == "REMOVE":
                        staged[delta["id"]] = None
            elif action == "reject":
                staged = {}
            elif action in PROMOTES and not line.get("published") and ts is not None:
                before = self.states[-1]
                number = line.get("version")
                if isinstance(number, int) and owner.get(number) == index:
                    archived = _version_file(store, number)
                    if archived is not None:
                        _set(before, archived)
                after = _State(start=ts, texts=dict(before.texts), complete=before.complete)
                for lesson_id, text in staged.items():
                    if text is None:
                        after.texts.pop(lesson_id, None)
                    else:
                        after.texts[lesson_id] = text
                stack.append(before)
                self.states.append(after)
                staged = {}
            elif action == "rollback" and ts is not None and stack:
                undone = stack.pop()
                self.states.append(
                    _State(
                        start=ts, texts=dict(undone.texts), lessons=undone.lessons, complete=undone.complete
                    )
                )
        self.has_history = len(self.states) > 1
        if approved is not None:
            _set(self.states[-1], approved)
        self.starts = [s.start for s in self.states[1:]]

    def shown(self, lesson_id: str, at_ms: int) -> Shown | None:
        """The text of ``lesson_id`` live at ``at_ms``; None when no file tells it."""
        state = self.states[bisect_right(self.starts, at_ms)]
        text = state.texts.get(lesson_id)
        final = self.states[-1]
        if text is not None and self.has_history:
            # a staged edit has no file entry: its created is the lesson's (altimate keeps it on edits)
            lesson = state.lessons.get(lesson_id) or final.lessons.get(lesson_id)
            return Shown(
                text=text, certain=True, lesson=lesson and {**lesson, "text": text}
            )  # the text it has: a guess, since the edit may have gone live after at_ms
        text = final.texts.get(lesson_id)
        return None if text is None else Shown(text=text, certain=False, lesson=final.lessons.get(lesson_id))
