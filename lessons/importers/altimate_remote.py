"""Team lessons of an altimate store: ``<store>/remote.json``, overlaid on the local ones as delivery does.

Pure: reads one file, never the database. altimate's workspace sync pulls the team's lessons into
``remote.json``; delivery shows those of this store under an id of their own (``lesson_key``, or an
alias when a visible local lesson or an earlier team lesson holds it) and hides a local lesson whose
identity ``(repo_identity, store, id)`` a team lesson or a tombstone has. Sessions record team lessons
in ``shown.jsonl`` under that id, so the importer needs them for those exposures to resolve.
A malformed ``remote.json`` reads as absent, as altimate's ``readParsed`` reads it.
docs/importers.md, "altimate-code: import_altimate"; issue 11, item 4.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .altimate_lesson import is_counter, loads
from .common import JSON_ERRORS, Translation

LESSON_KEY = re.compile(r"^L-[0-9a-f]{4,32}$")
SKIPPED_REMOTE = "remote.json read as absent"

_STRINGS = ("public_id", "store", "text", "updated_at")
_LISTS = ("tags", "trigger_paths", "coexists")


@dataclass
class Team:
    """The team lessons delivered in one store (as lesson dicts with their delivered ``id``) and the
    local ids they or tombstones hide."""

    lessons: list[dict] = field(default_factory=list)
    hidden: set[str] = field(default_factory=set)


def _lesson_problem(value: Any) -> str | None:
    if not isinstance(value, dict):
        return "expected an object"
    if not isinstance(value.get("lesson_key"), str) or not LESSON_KEY.fullmatch(value["lesson_key"]):
        return f"lesson_key: expected {LESSON_KEY.pattern}"
    if "repo_identity" not in value or not (
        value["repo_identity"] is None or isinstance(value["repo_identity"], str)
    ):
        return "repo_identity: expected a string or null"
    for name in _STRINGS:
        if not isinstance(value.get(name), str):
            return f"{name}: expected a string"
    for name in _LISTS:
        if name in value and not (
            isinstance(value[name], list) and all(isinstance(x, str) for x in value[name])
        ):
            return f"{name}: expected an array of strings"
    for name in ("helpful", "harmful", "applied"):
        if name in value and not is_counter(value[name]):
            return f"{name}: expected a count"
    if "pinned" in value and not isinstance(value["pinned"], bool):
        return "pinned: expected true or false"
    version = value.get("version")
    if isinstance(version, bool) or not (
        isinstance(version, int) or (isinstance(version, float) and version.is_integer())
    ):
        return "version: expected an integer"
    return None


def _remote_problem(value: Any) -> str | None:
    """Why altimate's ``Remote`` schema refuses ``value`` (then the file reads as absent), or None."""
    if not isinstance(value, dict) or value.get("version") != 1:
        return "expected an object with version 1"
    if not isinstance(value.get("repo_identity"), str):
        return "repo_identity: expected a string"
    if not isinstance(value.get("lessons"), list) or not isinstance(value.get("tombstones"), list):
        return "expected lessons and tombstones arrays"
    for position, lesson in enumerate(value["lessons"]):
        problem = _lesson_problem(lesson)
        if problem:
            return f"lessons[{position}] {problem}"
    for position, stone in enumerate(value["tombstones"]):
        if not (
            isinstance(stone, dict)
            and isinstance(stone.get("store"), str)
            and isinstance(stone.get("lesson_key"), str)
            and LESSON_KEY.fullmatch(stone["lesson_key"])
            and (stone.get("repo_identity") is None or isinstance(stone["repo_identity"], str))
        ):
            return f"tombstones[{position}]: expected {{repo_identity, store, lesson_key}}"
    return None


def _alias(repo: str | None, store: str, key: str, attempt: int) -> str:
    """delivery's alias for a team lesson whose key is taken: sha256 of the identity, 16 hex digits."""
    identity = json.dumps([repo, store, key], ensure_ascii=False, separators=(",", ":"))
    return "L-" + hashlib.sha256(f"alias\0{attempt}\0{identity}".encode()).hexdigest()[:16]


def team_lessons(store: Path, translation: Translation, local_ids: list[str]) -> Team:
    """The team lessons ``store/remote.json`` delivers in this store, and the local ids they hide.

    ``local_ids``: the ids of approved.json. Each team lesson is ``{id, text, tags, helpful, harmful,
    applied, created, lesson_key}`` (``created`` = its ``updated_at``). A file that does not parse or
    does not fit the schema is listed and read as absent.
    """
    path = store / "remote.json"
    if not path.is_file():
        return Team()
    name = f"{store.name}/remote.json"
    try:
        value = loads(path.read_bytes())
    except (OSError, *JSON_ERRORS) as exc:
        translation.skip(SKIPPED_REMOTE, name, f"read as absent, as altimate reads it ({exc})")
        return Team()
    problem = _remote_problem(value)
    if problem:
        translation.skip(SKIPPED_REMOTE, name, f"read as absent, as altimate reads it ({problem})")
        return Team()
    repo = value["repo_identity"]
    mine = [x for x in value["lessons"] if x["store"] == store.name]
    identities = {(x["repo_identity"], x["store"], x["lesson_key"]) for x in mine}
    identities |= {(x.get("repo_identity"), x["store"], x["lesson_key"]) for x in value["tombstones"]}
    team = Team(hidden={i for i in local_ids if (repo, store.name, i) in identities})
    used = {i for i in local_ids if i not in team.hidden}

    def claim_order(x: dict) -> tuple:
        group = 0 if x["repo_identity"] == repo else 1 if x["repo_identity"] is None else 2
        return (group, x["lesson_key"], x["repo_identity"] or "")

    for lesson in sorted(mine, key=claim_order):
        lesson_id, attempt = lesson["lesson_key"], 0
        while lesson_id in used:
            lesson_id = _alias(lesson["repo_identity"], store.name, lesson["lesson_key"], attempt)
            attempt += 1
        used.add(lesson_id)
        team.lessons.append(
            {
                "id": lesson_id,
                "text": lesson["text"],
                "tags": list(lesson.get("tags", [])),
                "helpful": int(lesson.get("helpful", 0)),
                "harmful": int(lesson.get("harmful", 0)),
                "applied": int(lesson.get("applied", 0)),
                "created": lesson["updated_at"],
                "lesson_key": lesson["lesson_key"],
            }
        )
    return team
