"""Translating an altimate-code learn store into interchange records. docs/importers.md, "altimate-code:
import_altimate".

Pure: reads files, never the database. What the database already holds (earlier versions of the
store's lessons) is passed in as ``KnownVersion`` values by the runner (``run.py``).

Layout: ``.altimate-code/learn/<store>/{approved,retired,candidate,usage,remote}.json``,
``<store>/{shown,signals,history}.jsonl``, ``<store>/versions/v<N>.json``, the legacy
``learn/signals.jsonl`` and ``.sessions/<sha256 of session id>.json``. This module reads the stores
and their lesson files; ``altimate_lesson`` holds altimate's strict schemas (a file is accepted exactly
when altimate accepts it), ``altimate_history`` the text each lesson had live at a time,
``altimate_remote`` the team lessons, ``altimate_sessions`` the exposures, snapshots and corrections.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lessons.core.text import hash8, lesson_hash, normalize

from .altimate_history import TextHistory
from .altimate_lesson import LESSON_ID, AltimateFileError, is_counter, lesson_file, loads
from .altimate_remote import team_lessons
from .altimate_sessions import (
    HISTORY_VERSIONS,
    ORIGIN,
    SESSIONS,
    SKIPPED_FILES,
    SKIPPED_SNAPSHOTS,
    SUBJECT,
    SnapshotVersions,
    migrated_signals,
    shown_exposures,
    signal_corrections,
    snapshot_exposures,
    valid_signals,
    why,
)
from .common import JSON_ERRORS, SKIPPED_LINES, SourceError, Translation, read_text

STORE_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
DEFAULT_STORE = "team-playbook"
NOT_STORES = frozenset({"claims"})  # altimate's lock-claim folder matches the store pattern

# Counter names (printed as they are in the report).
STORES = "stores"
CANDIDATES = "candidates"
SKIPPED_SYMLINKS = "skipped symlinks"
SKIPPED_LESSONS = "skipped lessons"
MERGED = "shown lines matched by a snapshot"
SUPERSEDED_VERSIONS = "earlier versions superseded"
GONE = "lessons no longer in the store"
STAGED = "staged removals"
TEAM = "team lessons"
HIDDEN = "local lessons hidden by team lessons"
HIDDEN_WHY = "{id} is hidden by a team lesson or tombstone in remote.json (delivery does not show it)"

ERROR_NOT_FOUND = "{path}: no such folder: give a project root or its .altimate-code/learn/ folder"
ERROR_NO_STORE = (
    "{path}: no learn store found: expected store folders such as team-playbook/ in .altimate-code/learn/"
)
ERROR_NO_APPROVED = "{path}: no store has an approved.json or a remote.json (stores found: {stores})"


@dataclass(frozen=True)
class KnownVersion:
    """A lesson version of this host already in the database, with the fields a record needs."""

    hash: str
    store: str
    lesson_id: str
    namespace: str
    subject: str
    text: str
    created_at_ms: int
    status: str
    kind: str = "lesson"
    origin: str | None = None
    confidence: float | None = None
    helpful: int | None = None
    harmful: int | None = None
    applied: int | None = None
    tags: tuple[str, ...] = ()
    consolidates: tuple[str, ...] = ()


def find_learn_dir(path: Path) -> Path:
    """The learn folder for ``path``: ``path/.altimate-code/learn`` when present, else ``path`` itself.

    Raises ``SourceError`` when ``path`` is not a folder.
    """
    if not path.is_dir():
        raise SourceError(ERROR_NOT_FOUND.format(path=path))
    nested = path / ".altimate-code" / "learn"
    return nested if nested.is_dir() else path


def store_folders(learn: Path, translation: Translation) -> list[Path]:
    """The store folders of ``learn``, sorted by name; symlinked ones are skipped and counted.

    Skips ``claims/``, ``*.lock/``, ``*.tmp``, ``*.malformed-*`` and anything not named like a store.
    """
    stores = []
    for entry in sorted(learn.iterdir(), key=lambda p: p.name):
        if not STORE_NAME.match(entry.name) or entry.name in NOT_STORES:
            continue
        if entry.is_symlink():
            translation.skip(SKIPPED_SYMLINKS, f"{entry.name}/", "symlinked store folder skipped")
            continue
        if entry.is_dir():
            stores.append(entry)
    return stores


def translate_learn_dir(path: Path, *, known: Iterable[KnownVersion] = ()) -> Translation:
    """Translate a learn folder (or a project root) into interchange records without ``host``.

    ``known`` are the versions already stored for this host (for earlier versions of an edited
    lesson). Raises ``SourceError`` when there is no store or no store has an ``approved.json``;
    everything else that is malformed is skipped, counted and listed. docs/importers.md.
    """
    learn = find_learn_dir(path)
    translation = Translation()
    for name in (STORES, CANDIDATES, SKIPPED_LINES, SKIPPED_SNAPSHOTS, SKIPPED_SYMLINKS):
        translation.count(name, 0)  # always printed, in this order (docs/importers.md)
    stores = store_folders(learn, translation)
    if not stores:
        raise SourceError(ERROR_NO_STORE.format(path=path))
    if not any((s / "approved.json").is_file() or (s / "remote.json").is_file() for s in stores):
        raise SourceError(ERROR_NO_APPROVED.format(path=path, stores=", ".join(s.name for s in stores)))
    translation.count(STORES, len(stores))
    known = list(known)
    known_by_store: dict[str, list[KnownVersion]] = {}
    for version in known:
        known_by_store.setdefault(version.store, []).append(version)
    exposures: dict[tuple, tuple[str, dict]] = {}
    shown: dict[tuple, tuple[str, dict]] = {}  # exposure key -> (store, lesson as its history holds it)
    # altimate migrates the legacy project-wide signals file into the default store on its next read.
    legacy = valid_signals(learn / "signals.jsonl", translation)
    for store in stores:
        _translate_store(store, translation, known_by_store.get(store.name, []), exposures, shown, legacy)
    if legacy and DEFAULT_STORE not in {s.name for s in stores}:
        signal_corrections(migrated_signals([], legacy, translation), translation)
    versions = SnapshotVersions(translation, {v.hash for v in known})
    merged = snapshot_exposures(learn / SESSIONS, translation, exposures, versions)
    translation.count(MERGED, merged)
    for key in sorted(shown):
        origin, _record = exposures[key]
        if not origin.startswith(SESSIONS):  # a snapshot's text won: it registered its own version
            versions.add_version(translation, origin, *shown[key], counter=HISTORY_VERSIONS)
    for key in sorted(exposures):
        origin, record = exposures[key]
        translation.add(origin, record)
    return translation


# --- lessons -----------------------------------------------------------------------------------


def _lesson_file(path: Path, translation: Translation) -> list[dict] | None:
    """The lessons of a lesson file as altimate's reader accepts them, or None when it is missing.

    A file altimate refuses (it does not parse, an unknown key, a missing or mistyped field, an id
    outside ``^L-[0-9a-f]{4,}$``, a repeated id outside retired.json) is reported and skipped whole,
    as altimate's delivery skips it. docs/importers.md, "altimate-code: import_altimate".
    """
    if not path.is_file():
        return None
    name = f"{path.parent.name}/{path.name}"
    try:
        return lesson_file(loads(path.read_bytes()), retired=path.name == "retired.json")
    except OSError as exc:
        translation.skip(SKIPPED_FILES, name, f"cannot be read, skipped whole ({why(exc)})")
    except AltimateFileError as exc:  # a ValueError too: caught first
        translation.skip(SKIPPED_FILES, name, f"altimate refuses it, skipped whole ({exc})")
    except JSON_ERRORS as exc:
        translation.skip(SKIPPED_FILES, name, f"does not parse, skipped whole ({why(exc)})")
    return None


def _usage(path: Path, translation: Translation) -> dict[str, int]:
    """``usage.json`` as altimate reads it: entries with a lesson id key and a count, others dropped."""
    if not path.is_file():
        return {}
    name = f"{path.parent.name}/{path.name}"
    try:
        value = json.loads(read_text(path))
    except (OSError, *JSON_ERRORS) as exc:
        translation.skip(SKIPPED_FILES, name, f"does not parse, skipped whole ({why(exc)})")
        return {}
    if not isinstance(value, dict):
        translation.skip(SKIPPED_FILES, name, "expected a JSON object {lesson id: count}, skipped whole")
        return {}
    return {k: int(v) for k, v in value.items() if LESSON_ID.fullmatch(k) and is_counter(v)}


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _entry_hash(store: str, entry: Any) -> tuple[str, str] | None:
    """``(lesson_id, hash)`` of a lesson entry, or None when it has no usable id or text."""
    if not isinstance(entry, dict):
        return None
    lesson_id, text = entry.get("id"), entry.get("text")
    if (
        not isinstance(lesson_id, str)
        or not lesson_id.strip()
        or not isinstance(text, str)
        or not normalize(text)
    ):
        return None
    return lesson_id, lesson_hash(store, SUBJECT, text)


def _lesson_record(
    store: str, entry: dict, digest: str, usage: dict[str, int], known: dict[str, KnownVersion]
) -> dict:
    record: dict[str, Any] = {
        "type": "lesson",
        "namespace": store,
        "subject": SUBJECT,
        "text": entry["text"],
        "hash": digest,
        "created_at": entry.get("created"),
        "lesson_id": entry["id"],
        "store": store,
        "origin": ORIGIN,
        "status": "live",
    }
    for counter in ("helpful", "harmful"):
        if _count(entry.get(counter)) is not None:
            record[counter] = entry[counter]
    applied = [v for v in (_count(entry.get("applied")), usage.get(entry["id"])) if v is not None]
    if applied:
        record["applied"] = max(applied)
    tags = entry.get("tags")
    if isinstance(tags, list) and all(isinstance(t, str) for t in tags):
        record["tags"] = tags
    stored = known.get(digest)
    if stored is not None and stored.kind == "consolidation":
        # altimate does not say which lessons are consolidations: a reviewer's approved consolidation,
        # written back by apply_decisions, stays one (with its members and origin) when re-imported.
        record.update(kind=stored.kind, consolidates=list(stored.consolidates))
        if stored.origin is not None:
            record["origin"] = stored.origin
    return record


def _hashed_rows(name: str, translation: Translation, *, approved, retired):
    """``(approved rows, retired rows, id -> hash)``: each entry of the store's two lesson files as
    ``(position, entry, lesson id, hash)``, an entry without a string id and text skipped. Every id's hash
    comes first because a retired lesson names its successor by id (``supersededBy``); approved is read
    last, so its version of an id wins."""
    approved_rows, retired_rows = [], []
    id_hash: dict[str, str] = {}
    for rows, entries, label in (
        (retired_rows, retired, "retired.json"),
        (approved_rows, approved, "approved.json"),
    ):
        for position, entry in enumerate(entries or []):
            ident = _entry_hash(name, entry)
            if ident is None:
                translation.skip(
                    SKIPPED_LESSONS,
                    f"{name}/{label}[{position}]",
                    "skipped: a lesson needs a string id and text",
                )
                continue
            rows.append((position, entry, *ident))
            id_hash[ident[0]] = ident[1]
    return approved_rows, retired_rows, id_hash


def _retired_records(
    name: str, translation: Translation, retired_rows, *, approved_ids, emitted, id_hash, usage, known_hashes
) -> dict[str, tuple[str, str | None]]:
    """The records of retired.json's lessons (superseded when their successor is known, else retracted),
    added to ``translation``; ``emitted`` gains their statuses. A removal still staged (the id is still
    approved) and a text also approved are left out with a line saying why. Returns each retired id's
    ``(status, superseded_by)``."""
    retired_status: dict[str, tuple[str, str | None]] = {}
    for position, entry, lesson_id, digest in retired_rows:
        origin = f"{name}/retired.json[{position}]"
        if lesson_id in approved_ids:
            # altimate writes retired.json at reflect time: while the id is still approved, the removal
            # is only staged (live after a promote; reconcileRetired drops the entry otherwise).
            translation.skip(
                STAGED, origin, f"{lesson_id} is still in approved.json: a staged removal, not imported"
            )
            continue
        if digest in emitted:
            translation.note(
                f"{origin}: {lesson_id} has the same text as a lesson in approved.json; kept live"
            )
            continue
        record = _lesson_record(name, entry, digest, usage, known_hashes)
        successor = (
            id_hash.get(entry.get("supersededBy")) if isinstance(entry.get("supersededBy"), str) else None
        )
        if successor and successor != digest:
            record.update(status="superseded", superseded_by=successor)
        else:
            record["status"] = "retracted"
        emitted[digest] = record["status"]
        retired_status.setdefault(lesson_id, (record["status"], record.get("superseded_by")))
        reason = entry.get("reason")
        if isinstance(reason, str) and reason.strip():
            translation.retired_reasons[digest] = reason.strip()
        translation.add(origin, record)

    return retired_status


def _translate_store(
    store: Path,
    translation: Translation,
    known: list[KnownVersion],
    exposures: dict,
    shown: dict,
    legacy: list[tuple[str, dict]],
) -> None:
    name = store.name
    approved = _lesson_file(store / "approved.json", translation)
    retired = _lesson_file(store / "retired.json", translation)
    candidates = _lesson_file(store / "candidate.json", translation)
    translation.count(CANDIDATES, len(candidates or []))
    usage = _usage(store / "usage.json", translation)

    approved_rows, retired_rows, id_hash = _hashed_rows(name, translation, approved=approved, retired=retired)

    team = team_lessons(store, translation, [row[2] for row in approved_rows])
    for position, _entry, lesson_id, _digest in approved_rows:
        if lesson_id in team.hidden:
            translation.skip(HIDDEN, f"{name}/approved.json[{position}]", HIDDEN_WHY.format(id=lesson_id))
    approved_rows = [row for row in approved_rows if row[2] not in team.hidden]
    team_rows = [
        (lesson["id"], lesson, lesson_hash(name, SUBJECT, lesson["text"])) for lesson in team.lessons
    ]
    known_hashes = {v.hash: v for v in known}
    emitted: dict[str, str] = {}  # hash -> status
    rows = [(f"{name}/approved.json[{p}]", e, d) for p, e, _i, d in approved_rows]
    rows += [
        (f"{name}/remote.json: {e['lesson_key']}", e, d) for _i, e, d in team_rows if normalize(e["text"])
    ]
    for origin, entry, digest in rows:
        if digest in emitted:
            continue
        emitted[digest] = "live"
        translation.live_hashes.add(digest)
        translation.add(origin, _lesson_record(name, entry, digest, usage, known_hashes))
    if team_rows:  # counted only when there are some: a store without sync reports as before
        translation.count(TEAM, len(team_rows))
    approved_ids = {lesson_id: digest for _p, _e, lesson_id, digest in approved_rows}
    approved_ids.update((i, d) for i, _e, d in team_rows)
    retired_status = _retired_records(
        name,
        translation,
        retired_rows,
        approved_ids=approved_ids,
        emitted=emitted,
        id_hash=id_hash,
        usage=usage,
        known_hashes=known_hashes,
    )

    if approved is not None:
        _earlier_versions(name, translation, known, emitted, approved_ids, retired_status)
    # What delivery shows now: the local lessons it does not hide, and the team lessons.
    delivered = (
        None
        if approved is None and not team.lessons
        else [
            *(e for e in approved or [] if e["id"] not in team.hidden),
            *team.lessons,
        ]
    )
    shown_exposures(store, translation, exposures, TextHistory(store, delivered), shown)
    signals = valid_signals(store / "signals.jsonl", translation)
    if name == DEFAULT_STORE:
        signals = migrated_signals(signals, legacy, translation)
    signal_corrections(signals, translation)


def _earlier_versions(
    store: str,
    translation: Translation,
    known: list[KnownVersion],
    emitted: dict[str, str],
    approved_ids: dict[str, str],
    retired_status: dict[str, tuple[str, str | None]],
) -> None:
    """Stored live versions no longer in the store: superseded by the new version of the same id.

    An edited lesson keeps its id and gets a new hash; its earlier version is no longer in
    approved.json, so it is marked ``superseded`` by the version that replaced it. When the id is
    now only in retired.json, the earlier version follows the retired one. A lesson id the store no
    longer has at all is left as it is and listed (the store may just be incomplete).
    """
    for version in sorted(known, key=lambda v: (v.lesson_id, v.created_at_ms, v.hash)):
        if version.status != "live" or version.hash in emitted or not version.lesson_id:
            continue
        origin = f"{store}: {version.lesson_id} ({hash8(version.hash)})"
        if version.lesson_id in approved_ids:
            status, successor = "superseded", approved_ids[version.lesson_id]
        elif version.lesson_id in retired_status:
            status, successor = retired_status[version.lesson_id]
        else:
            translation.skip(GONE, origin, "live in the dashboard but no longer in the store; left as it is")
            continue
        record: dict[str, Any] = {
            "type": "lesson",
            "namespace": version.namespace,
            "subject": version.subject,
            "text": version.text,
            "hash": version.hash,
            "created_at": version.created_at_ms,
            "lesson_id": version.lesson_id,
            "store": version.store,
            "status": status,
            "kind": version.kind,
            "tags": list(version.tags),
            "consolidates": list(version.consolidates),
        }
        if successor:
            record["superseded_by"] = successor
        for name in ("origin", "confidence", "helpful", "harmful", "applied"):
            if getattr(version, name) is not None:
                record[name] = getattr(version, name)
        if not record["consolidates"]:
            del record["consolidates"]
        translation.count(SUPERSEDED_VERSIONS if status == "superseded" else "earlier versions retracted")
        translation.add(f"{origin}: earlier version", record)
