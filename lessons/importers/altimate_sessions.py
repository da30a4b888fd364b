"""Sessions of an altimate-code learn store: exposures, snapshots and corrections. docs/importers.md.

Pure: reads files, never the database. ``shown.jsonl`` lines and ``.sessions/<sha256>.json`` snapshots
become ``exposure`` records (a snapshot's exact text wins over a line of the same session, lesson and
time); ``signals.jsonl`` lines become ``correction`` records. Used by ``altimate.translate_learn_dir``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from lessons.core.interchange import MAX_CORRECTION_TEXT
from lessons.core.text import TimestampError, lesson_hash, normalize, parse_timestamp, text_hash

from .altimate_lesson import snapshot_problem
from .common import JSON_ERRORS, SKIPPED_LINES, Translation, json_lines, json_problem, read_text

SUBJECT = "project"  # altimate renders a store's lessons for the whole project
ORIGIN = "llm"
SESSIONS = ".sessions"

# Counter names (printed as they are in the report).
SKIPPED_SNAPSHOTS = "skipped snapshots"
SKIPPED_FILES = "skipped lesson files"
SHORTENED = "correction texts shortened"
SNAPSHOT_VERSIONS = "earlier versions from snapshots"
HISTORY_VERSIONS = "earlier versions from history"
# Said after either counter above: those earlier versions an earlier import stored, so not sent again. A
# re-import's line count is the first import's minus these (the newcomer run's item 13).
ALREADY_STORED = "already stored"


def why(exc: BaseException) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "not valid UTF-8"
    if isinstance(exc, JSON_ERRORS):
        return json_problem(exc)
    return getattr(exc, "strerror", None) or str(exc)


def read_jsonl(path: Path, translation: Translation) -> list[tuple[str, dict]]:
    """The object lines of a ``.jsonl`` file as ``(origin, object)``; other lines are skipped and counted."""
    if not path.is_file():
        return []
    name = f"{path.parent.name}/{path.name}"
    try:
        text = read_text(path)
    except (OSError, UnicodeDecodeError) as exc:
        translation.skip(SKIPPED_FILES, name, f"cannot be read, skipped whole ({why(exc)})")
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


def ms_or_none(value: Any) -> int | None:
    try:
        return parse_timestamp(value)
    except TimestampError:
        return None


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def shown_exposures(
    store: Path, translation: Translation, exposures: dict, history: Any, shown: dict
) -> None:
    """``shown.jsonl`` lines as exposures, with the text the store's history says was live then.

    A text the history is sure of (a versions/ file, a promoted edit, approved.json after the last
    promote) is given as ``text``, and ``shown[key]`` keeps its lesson so an earlier text can be added
    as a version. Without history the current text is only a guess, given as ``text_hash`` (which
    ``pin_exposure_texts`` replaces by the text an earlier import stored). A snapshot may replace both.
    """
    for origin, line in read_jsonl(store / "shown.jsonl", translation):
        at = ms_or_none(line.get("at"))
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
        text = history.shown(line["id"], at)
        if text is not None and text.certain:
            record["text"] = text.text
            shown[key] = (store.name, text.lesson or {"id": line["id"], "text": text.text})
        elif text is not None:
            record["text_hash"] = text_hash(text.text)
        exposures[key] = (origin, record)


class SnapshotVersions:
    """The lesson versions translated so far, to add the earlier versions snapshots show.

    ``successor[(store, id)]``: the status and ``superseded_by`` an earlier version of that id takes:
    superseded by the approved version, else the same as the retired one.
    """

    def __init__(self, translation: Translation, stored: set[str]):
        self.hashes = {item.record["hash"] for item in translation.items if item.record["type"] == "lesson"}
        # Versions already stored are not emitted again: the store's files, not an old snapshot,
        # say what their counters and status are. They are counted, so two reports add up.
        self.stored = stored - self.hashes
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

    def add_version(
        self,
        translation: Translation,
        where: str,
        store: str,
        lesson: dict,
        *,
        counter: str = SNAPSHOT_VERSIONS,
    ) -> None:
        """An earlier text the snapshot shows becomes a (non-live) version of the same id.

        Recurrence matches a correction against every version a session was shown
        (docs/piles-and-recurrence.md, "The seven counts"); the text must be stored for that. Not done for an
        id the
        store no longer has (its exposures are then skipped as references to unknown lessons). A version
        an earlier import stored is counted under ``"<counter> already stored"`` instead of sent
        (docs/importers.md, "Importing again").
        """
        digest = lesson_hash(store, SUBJECT, lesson["text"])
        successor = self.successor.get((store, lesson["id"]))
        if digest in self.hashes or successor is None or ms_or_none(lesson.get("created")) is None:
            return
        self.hashes.add(digest)
        if digest in self.stored:
            translation.count(f"{counter} {ALREADY_STORED}")
            return
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
        translation.count(counter)
        translation.add(f"{where}: earlier version", record)


def snapshot_exposures(
    sessions: Path, translation: Translation, exposures: dict, versions: SnapshotVersions
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
        except (OSError, *JSON_ERRORS) as exc:
            translation.skip(SKIPPED_SNAPSHOTS, origin, f"skipped: does not parse ({why(exc)})")
            continue
        session = snapshot.get("session") if isinstance(snapshot, dict) else None
        if not _text(session) or not isinstance(snapshot.get("shown"), list):
            translation.skip(SKIPPED_SNAPSHOTS, origin, "skipped: expected an object with session and shown")
            continue
        # surrogatepass: a lone surrogate (from a "\ud800" escape) must not crash the import; the
        # validator refuses the session's records by name later.
        if hashlib.sha256(session.encode("utf-8", "surrogatepass")).hexdigest() != path.name[: -len(".json")]:
            translation.skip(
                SKIPPED_SNAPSHOTS, origin, f"skipped: sha256 of session {session!r} is not the file name"
            )
            continue
        problem = snapshot_problem(snapshot)
        if problem:
            translation.skip(
                SKIPPED_SNAPSHOTS, origin, f"skipped whole, as altimate's delivery skips it: {problem}"
            )
            continue
        for position, entry in enumerate(snapshot["shown"]):
            where = f"{origin}: shown[{position}]"
            lesson = entry.get("lesson") if isinstance(entry, dict) else None
            at = ms_or_none(entry.get("at")) if isinstance(entry, dict) else None
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
            if entry.get("source") != "remote":
                # a team lesson's text under a local id (a hidden local lesson) is no version of it
                versions.add_version(translation, where, entry["name"], lesson)
    return merged


SIGNAL_KINDS = ("user_correction", "tool_retry", "review", "ci")
SIGNAL_STATUSES = ("open", "consumed")
SIGNAL_STRINGS = ("id", "sessionID", "text", "reason", "at")
SIGNAL_OPTIONAL = ("messageID", "partID", "provenance", "consumedBy")
SIGNAL_SOURCES = ("bootstrap", "import-reviews")
REFUSED_SIGNALS = "signal lines altimate refuses"
LEGACY_MIGRATED = "legacy signals migrated"
LEGACY_KEPT = "legacy signals the store already has"


def signal_problem(line: dict) -> str | None:
    """Why altimate's ``signals.parse`` drops ``line``, or None when it keeps it (unknown keys are kept)."""
    for name in SIGNAL_STRINGS:
        if not isinstance(line.get(name), str):
            return f"{name}: expected a string"
    if line.get("kind") not in SIGNAL_KINDS:
        return f"kind: expected one of {', '.join(SIGNAL_KINDS)}"
    if line.get("status") not in SIGNAL_STATUSES:
        return 'status: expected "open" or "consumed"'
    for name in SIGNAL_OPTIONAL:
        if name in line and not isinstance(line[name], str):
            return f"{name}: expected a string"
    if "source" in line and line["source"] not in SIGNAL_SOURCES:
        return f"source: expected one of {', '.join(SIGNAL_SOURCES)}"
    if "resolved" in line and not isinstance(line["resolved"], bool):
        return "resolved: expected true or false"
    return None


def valid_signals(path: Path, translation: Translation) -> list[tuple[str, dict]]:
    """The lines of a ``signals.jsonl`` altimate's reader keeps; the others are skipped and counted."""
    rows = []
    for origin, line in read_jsonl(path, translation):
        problem = signal_problem(line)
        if problem:
            translation.skip(REFUSED_SIGNALS, origin, f"skipped as altimate skips it: {problem}")
            continue
        rows.append((origin, line))
    return rows


def _dedupe_key(line: dict) -> str:
    """altimate's signal dedupe key: session, where in it (tool part, message, else a text digest), kind."""
    if line["kind"] == "tool_retry" and line.get("partID"):
        where = f"part:{line['partID']}"
    elif line.get("messageID"):
        where = line["messageID"]
    else:
        where = "text:" + hashlib.sha256(line["text"].encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{line['sessionID']}\0{where}\0{line['kind']}"


def migrated_signals(
    rows: list[tuple[str, dict]], legacy: list[tuple[str, dict]], translation: Translation
) -> list[tuple[str, dict]]:
    """The default store's signals after altimate's migration of the legacy project-wide file.

    A legacy signal (``learn/signals.jsonl``, valid lines in file order) is appended unless its id or
    its dedupe key is already in the store: the store's copy wins, including a later consumption.
    """
    ids = {line["id"] for _o, line in rows}
    keys = {_dedupe_key(line) for _o, line in rows}
    merged = list(rows)
    for origin, line in legacy:
        if line["id"] in ids or _dedupe_key(line) in keys:
            translation.count(LEGACY_KEPT)
            continue
        ids.add(line["id"])
        keys.add(_dedupe_key(line))
        merged.append((origin, line))
        translation.count(LEGACY_MIGRATED)
    return merged


def signal_corrections(rows: list[tuple[str, dict]], translation: Translation) -> None:
    """``correction`` records from the signals altimate keeps (``rows``, from ``valid_signals``)."""
    for origin, line in rows:
        corrected = line.get("correctedAt") or line["at"]
        text = normalize(line["text"])
        if not text or ms_or_none(corrected) is None:
            translation.skip(SKIPPED_LINES, origin, "skipped: a correction needs text and an ISO 8601 at")
            continue
        if len(text) > MAX_CORRECTION_TEXT:
            # altimate's writer keeps 2000 characters, as the interchange does; a longer line was
            # written by hand. "..." not "…": NFKC would make the ellipsis three characters.
            text = text[: MAX_CORRECTION_TEXT - 3] + "..."
            translation.count(SHORTENED)
        record = {
            "type": "correction",
            "session": line["sessionID"],
            "kind": line["kind"],
            "text": text,
            "corrected_at": corrected,
            "turn_started_at": line.get("turnStartedAt") or None,
            "id": line["id"],
        }
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
        key = (r["session"], r["store"], r["lesson_id"], ms_or_none(r["shown_at"]))
        if key in stored:
            r["text_hash"] = stored[key]
