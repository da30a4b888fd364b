"""Reading an areev memory file through the areev binding (``pip install areev==1.13.2``).

No ORM here: this module opens the file with ``areev.Areev``, reads it with the binding's public calls
and hands back ``(origin, object)`` pairs in the shapes ``lessons.importers.areev`` translates (grains,
``loop.lesson_pile/1`` findings, consolidation recommendations, outcome rows). docs/importers.md,
"areev"; the engine facts it relies on are the measured behaviour of areev 1.13.2:

- one handle per file per process, and an exclusive file lock across processes: a handle is opened,
  used and released (``Memory`` drops the only reference and collects it); a file a running agent
  host holds open cannot be read, and the error says so;
- ``changes_since(after_op_seq, limit)`` is the change feed: ascending rows ``{hash, ns, op, op_seq}``
  (op 1 added, 2 superseded, 3 forgotten); ``op_seq`` is memory-wide, so it is the sync's cursor;
- a lesson is a fact grain with relation ``lesson``; the loop counts it live when its
  ``superseded_by`` is absent or names a grain that no longer exists (a rolled-back consolidation's
  marker is forgotten, the member keeps pointing at it). The grains handed on follow that rule: a
  ``superseded_by`` naming a missing grain is dropped;
- recommendations come from ``recommendations({"status": "all"})`` and ``recommendation(hash)``;
  their creation time is the ``created_at`` of the recommendation's own grain in the loop's
  namespace, which ``recommendation()`` does not show.
"""

from __future__ import annotations

import gc
import json
import sqlite3
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lessons.core.text import hash8

BINDING = "areev==1.13.2"
ENGINE_MISSING = "the areev package is not installed: pip install -e '.[areev]' ({binding})"
NO_MEMORY = "{path}: no such areev memory file"
TRUNCATED = "{path}: truncated or unreadable areev memory file: {why}; not read"
WHY_EMPTY = "it is empty"
WHY_NO_HEADER = "it does not start with a SQLite header"
WHY_SHORT = "{size} bytes where its header names {pages} pages of {page_size}"
WHY_FIRST_PAGE = "it holds only its first page (no tables) and no -wal file with the rest"
# tables every areev memory has (1.13.2 makes them when it creates one)
AREEV_TABLES = ("grains", "meta", "oplog")
WHY_NOT_AREEV = "it is a SQLite database without areev's tables ({tables}): another application's?"
SQLITE_MAGIC = b"SQLite format 3\x00"
WAL_HEADER_BYTES = 32  # a -wal file holds frames only past its header
LOOP_NS = "areev-loop"  # where the loop keeps its config, recommendations and audit rows
SYSTEM_NS = frozenset({LOOP_NS, "agent:authz"})  # namespaces of the engine itself, never lessons
PILE_ANALYZER = "loop.lesson_pile/1"
LLM_ANALYZER = "loop.llm/1"
FEED_PAGE = 500
CAL_LIMIT = 1000  # the largest LIMIT areev's CAL accepts on a writable handle (CAL-E010 above it)


class EngineMissing(Exception):
    """The ``areev`` package cannot be imported; ``str(exc)`` is the one line to print."""


class EngineError(Exception):
    """The engine refused a call or the file cannot be opened; ``str(exc)`` is the engine's message."""


def binding():
    """The ``areev`` module; raises ``EngineMissing`` when it is not installed."""
    try:
        import areev
    except ImportError:
        raise EngineMissing(ENGINE_MISSING.format(binding=BINDING)) from None
    return areev


def check_memory(path: Path) -> None:
    """Raise ``EngineMissing`` without the binding, ``EngineError`` when ``path`` is no file or not a
    whole memory file (``memory_damage``)."""
    binding()
    if not Path(path).is_file():
        raise EngineError(NO_MEMORY.format(path=path))
    why = memory_damage(Path(path))
    if why:
        raise EngineError(TRUNCATED.format(path=path, why=why))


def memory_damage(path: Path) -> str | None:
    """Why the file at ``path`` cannot be a whole areev memory, judged from its bytes alone, or None.

    areev 1.13.2 keeps a memory in a SQLite file and its ``-wal`` file. It opens an empty file, or a file
    cut to its first page whose ``-wal`` is gone, as a new empty memory (and writes a schema into it even
    read-only), so a sync would report "nothing changed" and exit 0. Looked at before the binding opens
    the file: an empty file; no SQLite header; fewer bytes than the header's page count needs; or one
    page (a memory's tables need more) with no ``-wal`` frames holding the rest; or a SQLite database
    without areev's tables (``_foreign``).
    """
    size = path.stat().st_size
    if size == 0:
        return WHY_EMPTY
    with path.open("rb") as f:
        header = f.read(100)
    if len(header) < 100 or not header.startswith(SQLITE_MAGIC):
        return WHY_NO_HEADER
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    if pages and pages * page_size > size:
        return WHY_SHORT.format(size=size, pages=pages, page_size=page_size)
    wal = path.with_name(path.name + "-wal")
    wal_frames = wal.is_file() and wal.stat().st_size > WAL_HEADER_BYTES
    if pages <= 1 and not wal_frames:
        return WHY_FIRST_PAGE
    return _foreign(path)


def _foreign(path: Path) -> str | None:
    """``WHY_NOT_AREEV`` when the SQLite file at ``path`` lacks ``AREEV_TABLES`` (the binding would write
    its schema into another application's database, even read-only, and read it as an empty memory).
    Read through SQLite read-only; a file SQLite cannot open that way is left to the binding to judge."""
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            names = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    except sqlite3.Error:
        return None
    missing = [name for name in AREEV_TABLES if name not in names]
    return WHY_NOT_AREEV.format(tables=", ".join(AREEV_TABLES)) if missing else None


class Memory:
    """An open areev memory file, as a context manager: ``with Memory(path, actor=...) as mem``.

    ``actor`` is stamped by the engine on what this handle decides (``user:<name>``). On exit the one
    handle is released so that another ``Memory`` (another actor) can open the same file.
    Raises ``EngineMissing`` or ``EngineError`` (a missing file, a lock held by another process).
    """

    def __init__(self, path: Path, *, actor: str, read_only: bool = False):
        self.path = Path(path)
        self.actor = actor
        self.read_only = read_only
        self.handle: Any = None

    def __enter__(self) -> Memory:
        areev = binding()
        check_memory(self.path)
        try:
            self.handle = areev.Areev(
                str(self.path), actor=self.actor, telemetry="off", read_only=self.read_only
            )
        except ValueError as exc:
            raise EngineError(f"{self.path}: cannot open: {exc}") from None
        return self

    def __exit__(self, *exc_info) -> None:
        self.handle = None
        gc.collect()  # the binding releases the file only when the handle object is collected

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """Call the binding; JSON results are decoded. Raises ``EngineError`` with the engine's message."""
        try:
            result = getattr(self.handle, method)(*args, **kwargs)
        except ValueError as exc:
            raise EngineError(str(exc)) from None
        if isinstance(result, str) and result[:1] in ("[", "{"):
            return json.loads(result)
        return result

    def grains(self, where: str) -> list[dict[str, Any]]:
        """Every fact grain matching the CAL ``where`` clause, superseded versions included.

        Raises ``EngineError`` when more than ``CAL_LIMIT`` match (the rest would be silently cut).
        """
        result = self.call("cal", f"RECALL facts WHERE {where} LIMIT {CAL_LIMIT} WITH superseded")
        grains = result.get("grains", []) if isinstance(result, dict) else []
        if isinstance(result, dict) and result.get("total_available", 0) > len(grains):
            raise EngineError(f"{self.path}: more than {CAL_LIMIT} grains match {where}; not read")
        return grains

    def feed(self, after: int) -> list[dict[str, Any]]:
        """The change feed after ``after``, every page of it, ascending by ``op_seq``."""
        rows: list[dict[str, Any]] = []
        while True:
            page = self.call("changes_since", after, FEED_PAGE)
            rows.extend(page)
            if len(page) < FEED_PAGE:
                return rows
            after = page[-1]["op_seq"]


def op_mark(mem: Memory, op_seq: int) -> str:
    """The feed's op number ``op_seq`` as ``"<hlc>:<hash>"`` (its hybrid-logical-clock time and the
    grain's content address), or "" when the memory has no such op.

    areev 1.13.2 gives a memory no id of its own (no memory id in ``stats`` or anywhere in the binding),
    so the op a sync read last stands for the memory it read: a file replaced by another memory (or by
    an older copy) has another op at that number, or none.
    """
    if op_seq <= 0:
        return ""
    rows = mem.call("changes_since", op_seq - 1, 1)
    if not rows or rows[0]["op_seq"] != op_seq:
        return ""
    return f"{rows[0]['hlc']}:{rows[0]['hash']}"


def cal_value(value: str) -> str:
    """A CAL string literal (CAL strings are JSON strings)."""
    return json.dumps(value, ensure_ascii=False)


@dataclass
class MemoryRead:
    """What one sync read: the objects to translate, the outcome map, the cursor, the change count, and
    the entities ``(namespace, subject)`` whose lessons were read whole."""

    objects: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    entities: set[tuple[str, str]] = field(default_factory=set)
    mapping: dict[str, list[str]] = field(default_factory=dict)
    cursor: int = 0
    changes: int = 0


def read_memory(
    mem: Memory,
    *,
    after: int,
    stored_entities: Callable[[set[str]], set[tuple[str, str]]],
    triggered_by: str | None = None,
) -> MemoryRead:
    """Read what changed after feed position ``after`` (0: everything).

    Lessons: every entity a changed grain belongs to is read whole (all relations, so the present set
    decides which ``superseded_by`` still names a grain); a forgotten grain no longer resolves, so its
    entity comes from ``stored_entities(hashes)`` (the lessons the database holds). Recommendations and
    outcome rows are read whole whenever the loop's namespace changed. ``triggered_by`` is recorded on
    each consolidation recommendation (areev does not say who triggered the run).
    """
    rows = mem.feed(after)
    read = MemoryRead(cursor=rows[-1]["op_seq"] if rows else after, changes=len(rows))
    if not rows:
        return read
    name = mem.path.name
    lesson_rows = [r for r in rows if r["ns"] not in SYSTEM_NS]
    entities: set[tuple[str, str]] = set()
    unresolved: set[str] = set()
    for ns in sorted({r["ns"] for r in lesson_rows}):
        hashes = {r["hash"] for r in lesson_rows if r["ns"] == ns}
        if after == 0:
            grains = mem.grains(f"namespace = {cal_value(ns)}")
            found = {g["hash"] for g in grains}
        else:
            grains = [
                g
                for h in sorted(hashes)
                for g in mem.grains(f"namespace = {cal_value(ns)} AND hash = {cal_value(h)}")
            ]
            found = {g["hash"] for g in grains}
        entities.update(
            (ns, g["fields"]["subject"]) for g in grains if isinstance(g["fields"].get("subject"), str)
        )
        unresolved |= hashes - found
    if unresolved:
        entities |= stored_entities(unresolved)
    read.entities = entities
    for ns, subject in sorted(entities):
        grains = mem.grains(f"namespace = {cal_value(ns)} AND subject = {cal_value(subject)}")
        read.objects.extend(_lesson_objects(name, grains))
    if after == 0 or any(r["ns"] == LOOP_NS for r in rows):
        _read_loop(mem, read, triggered_by=triggered_by)
    return read


def _lesson_objects(name: str, grains: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The lesson grains of one entity, with ``superseded_by`` dropped when it names a missing grain."""
    present = {g["hash"] for g in grains}
    out = []
    for g in grains:
        fields = dict(g.get("fields") or {})
        if fields.get("relation") != "lesson":
            continue
        if fields.get("superseded_by") not in present:
            fields.pop("superseded_by", None)  # live as the loop sees it (areev 1.13.2 rollback)
        out.append(
            (f"{name}: grain {hash8(g['hash'])}", {"hash": g["hash"], "type": "fact", "fields": fields})
        )
    return out


def _created_ms(mem: Memory, rec_hash: str) -> int | None:
    grains = mem.grains(f"namespace = {cal_value(LOOP_NS)} AND hash = {cal_value(rec_hash)}")
    created = grains[0]["fields"].get("created_at") if grains else None
    return created if isinstance(created, int) else None


def _read_loop(mem: Memory, read: MemoryRead, *, triggered_by: str | None) -> None:
    """Pile findings and consolidation recommendations (every status), and the outcome rows."""
    name = mem.path.name
    recs: dict[str, dict[str, Any]] = {}
    for row in mem.call("recommendations", json.dumps({"status": "all"})):
        if row.get("analyzer") not in (PILE_ANALYZER, LLM_ANALYZER):
            continue
        rec = mem.call("recommendation", row["hash"])
        if rec.get("analyzer") == LLM_ANALYZER and rec.get("action_kind") != "consolidate":
            continue
        created = _created_ms(mem, rec["hash"])
        if created is not None and "created_at_ms" not in rec:
            rec["created_at_ms"] = created
        if rec.get("analyzer") == LLM_ANALYZER and triggered_by:
            rec["triggered_by"] = triggered_by
        recs[rec["hash"]] = rec
        read.objects.append((f"{name}: recommendation {hash8(rec['hash'])}", rec))
    for number, row in enumerate(mem.call("loop_outcomes")):
        created = _created_lesson(mem, recs.get(row.get("rec_hash")))
        if created:
            read.mapping[row["rec_hash"]] = [created]
        read.objects.append((f"{name}: outcome {number}", row))


def _created_lesson(mem: Memory, rec: dict[str, Any] | None) -> str | None:
    """The lesson an applied consolidation created: the grain its ``ADD`` line wrote (same text, same
    members) on its entity. None for other recommendations or when it is gone."""
    if not rec or not isinstance(rec.get("cal"), str) or not rec["cal"].startswith("ADD fact "):
        return None
    try:
        add = json.loads(rec["cal"].split("\n", 1)[0][len("ADD fact ") :])
    except ValueError:
        return None
    if not isinstance(add, dict) or not isinstance(add.get("subject"), str):
        return None
    where = f"namespace = {cal_value(add.get('namespace', ''))} AND subject = {cal_value(add['subject'])}"
    for g in mem.grains(where):
        fields = g.get("fields") or {}
        if fields.get("relation") == "lesson" and fields.get("object") == add.get("object"):
            if sorted(fields.get("consolidates") or []) == sorted(add.get("consolidates") or []):
                return g["hash"]
    return None
