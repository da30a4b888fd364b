"""Translating an altimate-code learn store into interchange records. spec: importers.md, "altimate-code".

Pure: reads files, never the database. What the database already holds (earlier versions of the
store's lessons) is passed in as ``KnownVersion`` values by the runner (``run.py``).

Layout: ``.altimate-code/learn/<store>/{approved,retired,candidate,usage}.json``,
``<store>/{shown,signals}.jsonl`` and ``.sessions/<sha256 of session id>.json``.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lessons.core.interchange import MAX_TEXT
from lessons.core.text import TimestampError, lesson_hash, normalize, parse_timestamp, text_hash

from .common import SKIPPED_LINES, SourceError, Translation, json_lines, read_text

STORE_NAME = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
NOT_STORES = frozenset({"claims"})  # altimate's lock-claim folder matches the store pattern
SUBJECT = "project"  # altimate renders a store's lessons for the whole project
ORIGIN = "llm"
SESSIONS = ".sessions"

# Counter names (printed as they are in the report).
STORES = "stores"
CANDIDATES = "candidates"
SKIPPED_SNAPSHOTS = "skipped snapshots"
SKIPPED_SYMLINKS = "skipped symlinks"
SKIPPED_FILES = "skipped lesson files"
SKIPPED_LESSONS = "skipped lessons"
MERGED = "shown lines matched by a snapshot"
SUPERSEDED_VERSIONS = "earlier versions superseded"
GONE = "lessons no longer in the store"
SHORTENED = "correction texts shortened"
SNAPSHOT_VERSIONS = "earlier versions from snapshots"

ERROR_NOT_FOUND = "{path}: no such folder: give a project root or its .altimate-code/learn/ folder"
ERROR_NO_STORE = (
    "{path}: no learn store found: expected store folders such as team-playbook/ in .altimate-code/learn/"
)
ERROR_NO_APPROVED = "{path}: no store has an approved.json (stores found: {stores})"


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
    everything else that is malformed is skipped, counted and listed. spec: importers.md.
    """
    learn = find_learn_dir(path)
    translation = Translation()
    for name in (STORES, CANDIDATES, SKIPPED_LINES, SKIPPED_SNAPSHOTS, SKIPPED_SYMLINKS):
        translation.count(name, 0)  # always printed, in this order (importers.md)
    stores = store_folders(learn, translation)
    if not stores:
        raise SourceError(ERROR_NO_STORE.format(path=path))
    if not any((s / "approved.json").is_file() for s in stores):
        raise SourceError(ERROR_NO_APPROVED.format(path=path, stores=", ".join(s.name for s in stores)))
    translation.count(STORES, len(stores))
    known = list(known)
    known_by_store: dict[str, list[KnownVersion]] = {}
    for version in known:
        known_by_store.setdefault(version.store, []).append(version)
    exposures: dict[tuple, tuple[str, dict]] = {}
    for store in stores:
        _translate_store(store, translation, known_by_store.get(store.name, []), exposures)
    merged = _snapshot_exposures(
        learn / SESSIONS, translation, exposures, _Versions(translation, {v.hash for v in known})
    )
    translation.count(MERGED, merged)
    for key in sorted(exposures):
        origin, record = exposures[key]
        translation.add(origin, record)
    return translation


# --- lessons -----------------------------------------------------------------------------------


def _lesson_file(path: Path, translation: Translation) -> list | None:
    """A strict JSON array, or None when the file is missing or does not parse (reported, skipped whole)."""
    if not path.is_file():
        return None
    name = f"{path.parent.name}/{path.name}"
    try:
        value = json.loads(read_text(path))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        translation.skip(SKIPPED_FILES, name, f"does not parse, skipped whole ({_why(exc)})")
        return None
    if not isinstance(value, list):
        translation.skip(SKIPPED_FILES, name, "expected a JSON array, skipped whole")
        return None
    return value


def _why(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at line {exc.lineno} column {exc.colno}"
    if isinstance(exc, UnicodeDecodeError):
        return "not valid UTF-8"
    return getattr(exc, "strerror", None) or str(exc)


def _usage(path: Path, translation: Translation) -> dict[str, int]:
    if not path.is_file():
        return {}
    name = f"{path.parent.name}/{path.name}"
    try:
        value = json.loads(read_text(path))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        translation.skip(SKIPPED_FILES, name, f"does not parse, skipped whole ({_why(exc)})")
        return {}
    if not isinstance(value, dict):
        translation.skip(SKIPPED_FILES, name, "expected a JSON object {lesson id: count}, skipped whole")
        return {}
    return {k: v for k, v in value.items() if _count(v) is not None}


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


def _lesson_record(store: str, entry: dict, digest: str, usage: dict[str, int]) -> dict:
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
    return record


def _translate_store(
    store: Path, translation: Translation, known: list[KnownVersion], exposures: dict
) -> None:
    name = store.name
    approved = _lesson_file(store / "approved.json", translation)
    retired = _lesson_file(store / "retired.json", translation)
    candidates = _lesson_file(store / "candidate.json", translation)
    translation.count(CANDIDATES, len(candidates or []))
    usage = _usage(store / "usage.json", translation)

    # Every id's hash first: a retired lesson names its successor by id (supersededBy).
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
            id_hash[ident[0]] = ident[1]  # approved is read last: its version wins

    emitted: dict[str, str] = {}  # hash -> status
    for position, entry, _lesson_id, digest in approved_rows:
        if digest in emitted:
            continue
        emitted[digest] = "live"
        translation.live_hashes.add(digest)
        translation.add(f"{name}/approved.json[{position}]", _lesson_record(name, entry, digest, usage))
    retired_status: dict[str, tuple[str, str | None]] = {}
    for position, entry, lesson_id, digest in retired_rows:
        origin = f"{name}/retired.json[{position}]"
        if digest in emitted:
            translation.note(
                f"{origin}: {lesson_id} has the same text as a lesson in approved.json; kept live"
            )
            continue
        record = _lesson_record(name, entry, digest, usage)
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

    if approved is not None:
        approved_ids = {lesson_id: digest for _p, _e, lesson_id, digest in approved_rows}
        _earlier_versions(name, translation, known, emitted, approved_ids, retired_status)
    current = {
        lesson_id: (entry["text"], _ms(entry.get("updated"))) for _p, entry, lesson_id, _d in approved_rows
    }
    _shown(store, translation, exposures, current)
    _signals(store, translation)


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
        if version.status != "live" or version.hash in emitted:
            continue
        origin = f"{store}: {version.lesson_id} ({version.hash[:12]})"
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


# --- exposures and corrections -----------------------------------------------------------------


def _jsonl(path: Path, translation: Translation) -> list[tuple[str, dict]]:
    """The object lines of a ``.jsonl`` file as ``(origin, object)``; other lines are skipped and counted."""
    if not path.is_file():
        return []
    name = f"{path.parent.name}/{path.name}"
    try:
        text = read_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        translation.skip(SKIPPED_FILES, name, f"cannot be read, skipped whole ({_why(exc)})")
        return []
    rows = []
    for number, value, error in json_lines(text):
        origin = f"{name}:{number}"
        if error is not None:
            translation.skip(SKIPPED_LINES, origin, f"skipped: {error}")
        elif not isinstance(value, dict):
            translation.skip(SKIPPED_LINES, origin, "skipped: expected a JSON object")
        else:
            rows.append((origin, value))
    return rows


def _ms(value: Any) -> int | None:
    try:
        return parse_timestamp(value)
    except TimestampError:
        return None


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _shown(
    store: Path, translation: Translation, exposures: dict, current: dict[str, tuple[str, int | None]]
) -> None:
    """``shown.jsonl`` lines as exposures without text (a snapshot may add the text later).

    When the lesson's current text was last updated at or before the line's ``at``, that text is
    what was shown, so its ``text_hash`` is given; otherwise ingest assumes the text at ``shown_at``.
    """
    for origin, line in _jsonl(store / "shown.jsonl", translation):
        at = _ms(line.get("at"))
        if not (_text(line.get("session")) and _text(line.get("id")) and at is not None):
            translation.skip(SKIPPED_LINES, origin, "skipped: expected session, id and at (ISO 8601 with Z)")
            continue
        key = (line["session"], at, store.name, line["id"])
        if key in exposures:
            continue  # "one per (session, id), duplicates possible"
        record = {
            "type": "exposure",
            "session": line["session"],
            "store": store.name,
            "lesson_id": line["id"],
            "shown_at": line["at"],
        }
        if isinstance(line.get("tier"), str):
            record["tier"] = line["tier"]
        text, updated = current.get(line["id"], (None, None))
        if text is not None and updated is not None and updated <= at:
            record["text_hash"] = text_hash(text)
        exposures[key] = (origin, record)


class _Versions:
    """The lesson versions translated so far, to add the earlier versions snapshots show.

    ``successor[(store, id)]``: the status and ``superseded_by`` an earlier version of that id takes:
    superseded by the approved version, else the same as the retired one.
    """

    def __init__(self, translation: Translation, stored: set[str]):
        # Versions already stored are not emitted again: the store's files, not an old snapshot,
        # say what their counters and status are.
        self.hashes = stored | {
            item.record["hash"] for item in translation.items if item.record["type"] == "lesson"
        }
        self.successor: dict[tuple[str, str], tuple[str, str | None]] = {}
        for item in translation.items:
            r = item.record
            if r["type"] != "lesson" or "lesson_id" not in r:
                continue
            key = (r["store"], r["lesson_id"])
            if r["status"] == "live":
                self.successor[key] = ("superseded", r["hash"])
            elif r.get("origin") == ORIGIN and key not in self.successor:
                self.successor[key] = (r["status"], r.get("superseded_by"))

    def add_shown(self, translation: Translation, where: str, store: str, lesson: dict) -> None:
        """An earlier text the snapshot shows becomes a (non-live) version of the same id.

        Recurrence matches a correction against every version a session was shown
        (recurrence.md, "earlier_version"); the text must be stored for that. Not done for an id the
        store no longer has (its exposures are then skipped as references to unknown lessons).
        """
        digest = lesson_hash(store, SUBJECT, lesson["text"])
        successor = self.successor.get((store, lesson["id"]))
        if digest in self.hashes or successor is None or _ms(lesson.get("created")) is None:
            return
        self.hashes.add(digest)
        status, superseded_by = successor
        record = {
            "type": "lesson",
            "namespace": store,
            "subject": SUBJECT,
            "text": lesson["text"],
            "hash": digest,
            "created_at": lesson["created"],
            "lesson_id": lesson["id"],
            "store": store,
            "origin": ORIGIN,
            "status": status,
        }
        if superseded_by:
            record["superseded_by"] = superseded_by
        translation.count(SNAPSHOT_VERSIONS)
        translation.add(f"{where}: earlier version", record)


def _snapshot_exposures(
    sessions: Path, translation: Translation, exposures: dict, versions: _Versions
) -> int:
    """Exposures with the exact text shown, from ``.sessions/<sha256(session)>.json``.

    A snapshot's entry replaces the ``shown.jsonl`` line with the same session, store, id and time
    (its text is what the session was shown); returns how many lines it replaced.
    """
    if not sessions.is_dir() or sessions.is_symlink():
        return 0
    merged = 0
    for path in sorted(sessions.iterdir(), key=lambda p: p.name):
        if not path.name.endswith(".json") or not path.is_file():
            continue
        origin = f"{SESSIONS}/{path.name}"
        try:
            snapshot = json.loads(read_text(path))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            translation.skip(SKIPPED_SNAPSHOTS, origin, f"skipped: does not parse ({_why(exc)})")
            continue
        session = snapshot.get("session") if isinstance(snapshot, dict) else None
        if not _text(session) or not isinstance(snapshot.get("shown"), list):
            translation.skip(SKIPPED_SNAPSHOTS, origin, "skipped: expected an object with session and shown")
            continue
        if hashlib.sha256(session.encode("utf-8")).hexdigest() != path.name[: -len(".json")]:
            translation.skip(
                SKIPPED_SNAPSHOTS, origin, f"skipped: sha256 of session {session!r} is not the file name"
            )
            continue
        for position, entry in enumerate(snapshot["shown"]):
            where = f"{origin}: shown[{position}]"
            lesson = entry.get("lesson") if isinstance(entry, dict) else None
            at = _ms(entry.get("at")) if isinstance(entry, dict) else None
            if not (
                isinstance(lesson, dict)
                and _text(lesson.get("id"))
                and _text(lesson.get("text"))
                and _text(entry.get("name"))
                and at is not None
            ):
                translation.skip(SKIPPED_LINES, where, "skipped: expected at, name and lesson {id, text}")
                continue
            key = (session, at, entry["name"], lesson["id"])
            if key in exposures and exposures[key][0].startswith(SESSIONS):
                continue
            merged += key in exposures
            record = {
                "type": "exposure",
                "session": session,
                "store": entry["name"],
                "lesson_id": lesson["id"],
                "shown_at": entry["at"],
                "text": lesson["text"],
            }
            if isinstance(entry.get("tier"), str):
                record["tier"] = entry["tier"]
            exposures[key] = (where, record)
            versions.add_shown(translation, where, entry["name"], lesson)
    return merged


def _signals(store: Path, translation: Translation) -> None:
    for origin, line in _jsonl(store / "signals.jsonl", translation):
        corrected = line.get("correctedAt") or line.get("at")
        if not (
            _text(line.get("sessionID"))
            and _text(line.get("kind"))
            and _text(line.get("text"))
            and _ms(corrected) is not None
        ):
            translation.skip(SKIPPED_LINES, origin, "skipped: expected sessionID, kind, text and at")
            continue
        text = normalize(line["text"])
        if len(text) > MAX_TEXT:
            # The interchange caps texts; the signal keeps its id, so a shortened text is still
            # the same signal.
            text = text[: MAX_TEXT - 1] + "…"
            translation.count(SHORTENED)
        record = {
            "type": "correction",
            "session": line["sessionID"],
            "kind": line["kind"],
            "text": text,
            "corrected_at": corrected,
            "turn_started_at": line.get("turnStartedAt") or None,
        }
        if _text(line.get("id")):
            record["id"] = line["id"]
        translation.add(origin, record)


def pin_exposure_texts(translation: Translation, stored: dict[tuple[str, str, str, int], str]) -> None:
    """Give an exposure without text the text hash already stored for it, so a re-import is a no-op.

    ``stored`` maps ``(session, store, lesson_id, shown_at_ms)`` to the stored exposure's
    ``text_hash``. Without it, a later version of an edited lesson could be assumed for an exposure
    that was first imported with the earlier text (exposure identity includes the text).
    """
    for item in translation.items:
        r = item.record
        if r["type"] != "exposure" or "text" in r:
            continue
        key = (r["session"], r["store"], r["lesson_id"], _ms(r["shown_at"]))
        if key in stored:
            r["text_hash"] = stored[key]
