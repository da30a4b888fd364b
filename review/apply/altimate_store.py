"""One altimate-code learn store, changed in memory and written back as altimate writes it.

Pure: files only, no ORM. ``StoreState.load`` reads ``approved.json``, ``retired.json`` and
``candidate.json`` with altimate's own strict schema (a store altimate would refuse is never written);
the ``retire``/``restore``/``consolidate``/``unconsolidate`` methods change the lists the way altimate's
reflect and rollback do; ``write`` publishes the change the way ``learn promote`` does: the replaced
``approved.json`` bytes archived as ``versions/v<N+1>.json``, every file in canonical JSON through a
temporary file renamed into place, and a ``promote`` line in ``history.jsonl``. Nothing is committed to
Git: the team reviews and commits the change.

The store is read and written under one hold of altimate's learn lock (``learn_lock``), as altimate's own
writers do, so a lesson altimate adds meanwhile waits for the write and is never overwritten by an older
read (issue 21, item 1). ``StoreState.moved_on`` checks, just before the write, that no file read changed
(a writer that ignores the lock) and that the lock is still this run's.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from lessons.core.text import hash8, lesson_hash
from lessons.importers.altimate_lesson import AltimateFileError, canonical, lesson_file, loads

SUBJECT = "project"  # the importer's subject for every altimate lesson
LOCK_NAME = hashlib.sha1(b"learn-state").hexdigest() + ".lock"  # altimate's Hash.fast("learn-state")
LOCK_STALE_S = 600  # altimate breaks a lock whose heartbeat is older than ten minutes
MAX_DELIVERED = 140  # curator.MAX_TEXT: delivery skips a longer new lesson
VERSION_FILE = re.compile(r"^v(\d+)\.json$")
ANY_ID = re.compile(r"\bL-[0-9a-f]{4,}\b")
_HIDDEN = re.compile(r"[\u0000-\u001f\u007f-\u009f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u2064\ufeff]")

E_LOCKED = "{learn}: altimate holds its learn lock ({lock}); try again when it is done"
E_NOT_APPROVED = "{id} is not in {store}/approved.json"
E_CHANGED = "{id} in {store}/approved.json has other text than the lesson decided on (edited since)"
E_TOO_LONG = "the text has {n} characters; altimate delivers at most {max}"
E_HIDDEN = "the text holds a line break or a hidden character, which altimate refuses"
E_UNWRITABLE = (
    "{file}: {field} holds a lone surrogate escape (\\ud800-\\udfff), which cannot be written back as "
    "UTF-8; nothing was written"
)
E_NOT_RETIRED = "{id} is neither in {store}/approved.json nor in {store}/retired.json"
E_MOVED_ON = (
    "{file} changed after this run read it, although the run held altimate's learn lock; nothing was "
    "written and no decision acknowledged; run the command again"
)
E_LOCK_LOST = (
    "altimate's learn lock ({lock}) is no longer this run's (taken over); nothing was written and no "
    "decision acknowledged; run the command again"
)
LOCK_POLL_S = 0.05  # how often a run waiting for altimate's learn lock tries again
READ_FILES = ("approved.json", "retired.json", "candidate.json", "history.jsonl")


class StoreRefused(ValueError):
    """The store cannot take this change; ``str(exc)`` is the message the acknowledgement carries."""


class StoreMovedOn(StoreRefused):
    """A file read changed before the write, or the learn lock was taken over: the whole run is refused."""


def _raw(path: Path) -> bytes | None:
    """The bytes of the regular file ``path``, ``None`` when there is none."""
    return path.read_bytes() if path.is_file() else None


def _parse(path: Path, raw: bytes | None, *, retired: bool = False) -> list[dict] | None:
    if raw is None:
        return None
    try:
        lessons = lesson_file(loads(raw), retired=retired)
    except (ValueError, RecursionError, AltimateFileError) as exc:
        raise StoreRefused(f"{path.parent.name}/{path.name}: altimate refuses this file ({exc})") from exc
    unwritable = _unwritable(lessons)
    if unwritable:
        raise StoreRefused(E_UNWRITABLE.format(file=f"{path.parent.name}/{path.name}", field=unwritable))
    return lessons


def _unwritable(lessons: list[dict]) -> str | None:
    """``[i].field`` of the first value of ``lessons`` that holds a lone surrogate (JSON's ``"\\ud800"``
    decodes to one; it has no UTF-8, so the file could not be written back), or ``None``."""
    for position, lesson in enumerate(lessons):
        for key, value in lesson.items():
            try:
                canonical({key: value}).encode()
            except UnicodeEncodeError:
                return f"[{position}].{key.encode('utf-8', 'backslashreplace').decode()}"
    return None


def _read(path: Path, *, retired: bool = False) -> list[dict] | None:
    try:
        raw = _raw(path)
    except OSError as exc:
        raise StoreRefused(f"{path.parent.name}/{path.name}: altimate refuses this file ({exc})") from exc
    return _parse(path, raw, retired=retired)


@dataclass
class StoreState:
    """The lesson files of one store as lists of lesson objects; ``changed`` once a method changed them."""

    path: Path
    approved: list[dict]
    retired: list[dict]
    candidate: list[dict] | None
    approved_raw: bytes | None
    changed: bool = False
    taken: set[str] = field(default_factory=set)
    decisions: list[int] = field(default_factory=list)  # seqs of the decisions that changed it
    seen: dict[str, bytes | None] = field(default_factory=dict)  # READ_FILES as read
    versions_seen: list[str] = field(default_factory=list)  # the names in versions/ as read

    @classmethod
    def load(cls, path: Path) -> StoreState:
        """Read the store folder ``path``; raises ``StoreRefused`` naming a file altimate would refuse.

        Call inside ``learn_lock``: what is read here is what ``write`` replaces.
        """
        try:
            seen = {name: _raw(path / name) for name in READ_FILES}
        except OSError as exc:
            raise StoreRefused(f"{path.name}: altimate refuses this store ({exc})") from exc
        state = cls(
            path=path,
            approved=_parse(path / "approved.json", seen["approved.json"]) or [],
            retired=_parse(path / "retired.json", seen["retired.json"], retired=True) or [],
            candidate=_parse(path / "candidate.json", seen["candidate.json"]),
            approved_raw=seen["approved.json"],
            seen=seen,
        )
        state.taken = {x["id"] for x in state.approved + state.retired + (state.candidate or [])}
        versions = state._versions()
        for version in versions:
            state.taken.update(x["id"] for x in _read(version) or [])
        history = seen["history.jsonl"] or b""  # ids of reflections and removals: a reused id would mix
        state.taken.update(ANY_ID.findall(history.decode("utf-8", errors="replace")))  # two lessons' history
        state.versions_seen = [p.name for p in versions]
        return state

    def moved_on(self) -> str | None:
        """The first file (store-relative) that is no longer as ``load`` read it, or ``None``."""
        for name in READ_FILES:
            if _raw(self.path / name) != self.seen[name]:
                return f"{self.name}/{name}"
        if [p.name for p in self._versions()] != self.versions_seen:
            return f"{self.name}/versions/"
        return None

    @property
    def name(self) -> str:
        return self.path.name

    def _versions(self) -> list[Path]:
        folder = self.path / "versions"
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.iterdir() if VERSION_FILE.match(p.name))

    def find(self, lesson_id: str) -> dict | None:
        return next((x for x in self.approved if x["id"] == lesson_id), None)

    def find_retired(self, lesson_id: str) -> dict | None:
        return next((x for x in self.retired if x["id"] == lesson_id), None)

    def by_hash(self, digest: str) -> dict | None:
        """The approved lesson whose text has ``digest`` as its importer hash (store, ``project``, text)."""
        return next((x for x in self.approved if lesson_hash(self.name, SUBJECT, x["text"]) == digest), None)

    def approved_with(self, *, lesson_id: str, digest: str) -> dict:
        """The approved lesson ``lesson_id``, checked to still hold the text ``digest`` names."""
        lesson = self.find(lesson_id)
        if lesson is None:
            raise StoreRefused(E_NOT_APPROVED.format(id=lesson_id, store=self.name))
        if lesson_hash(self.name, SUBJECT, lesson["text"]) != digest:
            raise StoreRefused(E_CHANGED.format(id=lesson_id, store=self.name))
        return lesson

    def mint_id(self, digest: str) -> str:
        """A new lesson id no lesson of the store has (approved, retired, staged or archived).

        ``L-`` + the first hex digits of the consolidation's hash, four or more: the same decision always
        gets the same id, and the id says which dashboard lesson it is.
        """
        for width in range(4, len(digest) + 1):
            candidate = f"L-{digest[:width]}"
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate
        raise StoreRefused(f"no free lesson id for {hash8(digest)}")  # 61 ids taken by one hash's prefixes

    # --- changes --------------------------------------------------------------------------------

    def _retire_record(self, lesson: dict, reason: str, superseded_by: str | None = None) -> None:
        """Upsert ``lesson`` into retired.json as altimate's saveCandidate does: one entry per id."""
        record = {**lesson, "reason": reason}
        record.pop("supersededBy", None)
        if superseded_by:
            record["supersededBy"] = superseded_by
        for position, entry in enumerate(self.retired):
            if entry["id"] == lesson["id"]:
                self.retired[position] = record
                break
        else:
            self.retired.append(record)

    def _unretire(self, lesson_id: str) -> dict:
        """Drop ``lesson_id`` from retired.json (altimate's reconcileRetired); returns it as a lesson."""
        entry = self.find_retired(lesson_id)
        self.retired = [x for x in self.retired if x["id"] != lesson_id]
        return {k: v for k, v in entry.items() if k not in ("reason", "supersededBy")}

    def retire(self, *, lesson_id: str, digest: str, reason: str) -> None:
        lesson = self.approved_with(lesson_id=lesson_id, digest=digest)
        self.approved = [x for x in self.approved if x["id"] != lesson_id]
        if self.candidate is not None:  # a staged set keeps the change, or promote would undo it
            self.candidate = [x for x in self.candidate if x["id"] != lesson_id]
        self._retire_record(lesson, reason)
        self.changed = True

    def restore(self, *, lesson_id: str) -> None:
        if self.find_retired(lesson_id) is None:
            raise StoreRefused(E_NOT_RETIRED.format(id=lesson_id, store=self.name))
        lesson = self._unretire(lesson_id)
        self.approved.append(lesson)
        if self.candidate is not None and not any(x["id"] == lesson_id for x in self.candidate):
            self.candidate.append(lesson)
        self.changed = True

    def consolidate(self, *, members: list[tuple[str, str]], text: str, digest: str, at: str) -> str:
        """Add the consolidation lesson (text, hash ``digest``) in place of ``members`` ``[(id, hash)]``.

        It takes the first member's position (as altimate's supersede does); each member is retired
        with ``reason`` "superseded by <new id>" and ``supersededBy``. ``at``: ISO time for
        ``created``/``updated``. Returns the new id; raises ``StoreRefused``.
        """
        if len(text) > MAX_DELIVERED:
            raise StoreRefused(E_TOO_LONG.format(n=len(text), max=MAX_DELIVERED))
        if _HIDDEN.search(text):
            raise StoreRefused(E_HIDDEN)
        found = [self.approved_with(lesson_id=i, digest=h) for i, h in members]
        new_id = self.mint_id(digest)
        lesson = {
            "applied": 0,
            "created": at,
            "harmful": 0,
            "helpful": 0,
            "id": new_id,
            "scope": "project",
            "tags": [],
            "text": text,
            "updated": at,
        }
        ids = {x["id"] for x in found}
        self.approved = _replace(self.approved, ids, [lesson])
        if self.candidate is not None:
            self.candidate = _replace(self.candidate, ids, [lesson])
        for member in found:
            self._retire_record(member, f"superseded by {new_id}", superseded_by=new_id)
        self.changed = True
        return new_id

    def unconsolidate(self, *, lesson: dict, member_ids: list[str], reason: str) -> None:
        """Undo a consolidation: ``lesson`` retired with ``reason``, members back in its place."""
        restored = [
            self._unretire(i)
            for i in member_ids
            if (entry := self.find_retired(i)) is not None and entry.get("supersededBy") == lesson["id"]
        ]
        self.approved = _replace(self.approved, {lesson["id"]}, restored)
        if self.candidate is not None:
            self.candidate = _replace(self.candidate, {lesson["id"]}, restored)
        self._retire_record(lesson, reason)
        self.changed = True

    # --- writing --------------------------------------------------------------------------------

    def write(self, *, now: str) -> list[str]:
        """Publish the change as altimate's promote does; returns the files written (store-relative).

        Call inside the ``learn_lock`` hold the store was loaded in, after ``moved_on`` found nothing.
        ``now``: ISO time of the history line, which names the decisions.
        """
        written = []
        history = self.path / "history.jsonl"
        line: dict = {"ts": now, "action": "promote"}
        if self.approved_raw is not None:
            numbers = [int(VERSION_FILE.match(p.name).group(1)) for p in self._versions()]
            version = max(numbers, default=0) + 1
            (self.path / "versions").mkdir(exist_ok=True)
            write_atomic(self.path / "versions" / f"v{version}.json", self.approved_raw)
            written.append(f"versions/v{version}.json")
            line["version"] = version
        line["source"] = "lesson-pile-review"
        line["decisions"] = self.decisions
        files = [("approved.json", self.approved), ("retired.json", self.retired)]
        if self.candidate is not None:
            files.append(("candidate.json", self.candidate))
        for name, lessons in files:
            data = canonical(lessons).encode()
            path = self.path / name
            if not path.is_file() or path.read_bytes() != data:
                write_atomic(path, data)
                written.append(name)
        old = history.read_bytes() if history.is_file() else b""
        if old and not old.endswith(b"\n"):
            old += b"\n"
        write_atomic(
            history, old + (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        )
        written.append("history.jsonl")
        return written


def _replace(lessons: list[dict], ids: set[str], new: list[dict]) -> list[dict]:
    """``lessons`` without ``ids``, ``new`` at the first removed position (at the end when none was there)."""
    out, placed = [], False
    for lesson in lessons:
        if lesson["id"] in ids:
            if not placed:
                out.extend(new)
                placed = True
            continue
        out.append(lesson)
    if not placed:
        out.extend(x for x in new if x["id"] not in {y["id"] for y in out})
    return out


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` as altimate's writeAtomic: ``<file>.<pid>.<random>.tmp``, then rename."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(6)}.tmp")
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


class LearnLock:
    """A held learn lock: ``token`` is in its ``meta.json`` while it is this run's."""

    def __init__(self, lock: Path, token: str):
        self.lock = lock
        self.token = token

    def still_held(self) -> bool:
        try:
            return json.loads((self.lock / "meta.json").read_text()).get("token") == self.token
        except (OSError, ValueError):
            return False


@contextmanager
def learn_lock(learn: Path, *, wait_s: float = 0) -> Iterator[LearnLock]:
    """Hold altimate's learn lock (the folder ``<learn>/<sha1("learn-state")>.lock/``) for the block.

    A lock whose heartbeat is fresh means altimate is writing: tried again every ``LOCK_POLL_S`` for up to
    ``wait_s`` seconds (altimate's own writers wait for each other the same way), then ``StoreRefused``.
    A stale one (heartbeat older than ten minutes, altimate's own rule) is taken over.
    """
    lock = learn / LOCK_NAME
    deadline = time.monotonic() + wait_s
    while True:
        try:
            lock.mkdir(mode=0o700)
            break
        except FileExistsError:
            beat = lock / "heartbeat"
            try:
                age = time.time() - (beat.stat().st_mtime if beat.exists() else lock.stat().st_mtime)
            except FileNotFoundError:  # released between the two looks: try again at once
                continue
            if age >= LOCK_STALE_S:
                break
            if time.monotonic() >= deadline:
                raise StoreRefused(E_LOCKED.format(learn=learn, lock=LOCK_NAME)) from None
            time.sleep(LOCK_POLL_S)
    token = secrets.token_hex(16)
    (lock / "heartbeat").touch()
    meta = {"token": token, "pid": os.getpid(), "hostname": socket.gethostname(), "createdAt": _iso_now()}
    (lock / "meta.json").write_text(json.dumps(meta, indent=2))
    held = LearnLock(lock, token)
    try:
        yield held
    finally:
        if held.still_held():  # a lock taken over is the new owner's to release
            for name in ("heartbeat", "meta.json"):
                (lock / name).unlink(missing_ok=True)
            lock.rmdir()


def _iso_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
