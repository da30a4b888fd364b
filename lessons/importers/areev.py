"""Translating areev JSON output into interchange records. docs/importers.md, "areev: import_areev".

Pure: reads files, never the database. A file is a sequence of JSON values one after another (one
compact object per line, or pretty-printed objects as ``loop show`` prints them, or one array); a
file that is not such a sequence is read as JSON Lines, line by line. Each object is recognised by
its shape:

- a grain ``{hash, type|grain_type, fields: {subject, relation, object, namespace, created_at,
  confidence?, superseded_by?, consolidates?}}``: a ``lesson`` when ``relation == "lesson"``; with
  ``fields.consolidates`` a live grain is a ``consolidation`` and each of its members the translation
  holds becomes ``superseded`` by it (areev points a member's ``superseded_by`` at a
  ``mg:lesson_consolidated`` marker grain, which is no lesson);
- a ``loop.lesson_pile/1`` finding ``{analyzer, target_ref, data: {pile, verdicts, max_active},
  created_at_ms?}``: one ``verdict`` per member verdict, metric ``lesson_pile``;
- an outcome row ``{rec_hash, metric, baseline, current, verdict, horizon_ms, measured_at_ms}``:
  one ``verdict`` per lesson hash the map gives for ``rec_hash``;
- a consolidation recommendation as areev 1.13.2 returns it (``recommendation()``, ``loop show``):
  ``{analyzer: "loop.llm/1", action_kind: "consolidate", hash, status, origin: {kind, model},
  cal: "ADD fact {...}\nSUPERSEDE <hash> WITH fact {...}...", confidence, target_ref,
  triggered_by?, created_at_ms?}``: a ``draft`` with ``id`` = the recommendation hash, the text and
  the members from the CAL (the ``ADD`` line's ``object`` and ``consolidates``, which must name the
  same lessons as the ``SUPERSEDE`` lines), ``drafted_by`` ``llm:<origin.model>``. Gates: areev
  1.13.2 stores an LLM recommendation only after it passed GROUND and VERIFY (a failed gate leaves
  no record at all, only the run's funnel counts), so a stored one has passed both unless the object
  itself carries ``gates``. Only a ``pending`` recommendation is a draft: one the engine already
  decided is counted and skipped;
- a consolidation draft in the older composed shape ``{origin: "llm", id|rec_hash, target_ref,
  draft: {kind: "consolidation", text, supersedes}, gates, drafted_by, triggered_by?, confidence?,
  created_at_ms?}``: a ``draft``.

Times: a finding's verdicts are measured at its ``created_at_ms``, a draft is created at it. areev's
own ``recommendation()`` output has none, so the time is then derived from the recommendation's
members, never from the file: the newest ``created_at`` of the lessons it names (the pile, or the
lessons the draft supersedes), taken from the translation or from ``member_times`` (the database).
Importing the same finding from copies written at different times therefore adds no second verdict.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lessons.core.piles import NOT_APPLIED
from lessons.core.text import hash8, parse_timestamp

from .areev_engine import SQLITE_MAGIC
from .common import (
    JSON_ERRORS,
    SKIPPED_LINES,
    SourceError,
    Translation,
    is_hash,
    json_lines,
    json_problem,
    read_text,
)

PILE_ANALYZER = "loop.lesson_pile/1"
PILE_METRIC = "lesson_pile"
PASSED = frozenset({"pass", "passed", "ok", "true"})

# Counter names (printed as they are in the report).
LESSONS = "lessons"
NOT_LESSONS = "grains not lessons"
FINDINGS = "findings"
VERDICTS = "verdicts"
OUTCOME_ROWS = "outcome rows"
UNMAPPED = "unmapped outcome rows"
DRAFTS = "drafts"
DECIDED = "recommendations the engine already decided"
UNRECOGNISED = "unrecognised objects"

LLM_ANALYZER = "loop.llm/1"
CONSOLIDATE = "consolidate"
PENDING = "pending"
ADD_PREFIX = "ADD fact "
_BLANK = re.compile(r"[ \t\r\n]*")
SUPERSEDE_LINE = re.compile(r"^SUPERSEDE (?:sha256:)?([0-9a-f]{64}) WITH ")
NO_TIME = (
    "skipped: no created_at_ms, and none of the lessons it names is in the import or the database "
    "(its time is derived from them)"
)

ERROR_UNREADABLE = "{path}: cannot read: {why}"
MEMORY_FILE = "an areev memory file (SQLite), not areev JSON output; sync_areev reads memory files"
ERROR_MAP = (
    "{path}: expected a JSON object mapping each rec_hash to a list of lesson hashes "
    '({{"<rec_hash>": ["<64 hex>", ...]}}): {why}'
)


def load_map(path: Path) -> dict[str, list[str]]:
    """The ``--map`` file: ``{rec_hash: [lesson hash, ...]}`` (a single hash string is accepted too).

    Raises ``SourceError`` naming the file and what was expected.
    """
    try:
        value = json.loads(read_text(path))
    except OSError as exc:
        raise SourceError(ERROR_UNREADABLE.format(path=path, why=exc.strerror or exc)) from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SourceError(ERROR_MAP.format(path=path, why=f"not valid JSON ({exc})")) from None
    except JSON_ERRORS as exc:
        raise SourceError(ERROR_MAP.format(path=path, why=f"not valid JSON ({json_problem(exc)})")) from None
    if not isinstance(value, dict):
        raise SourceError(ERROR_MAP.format(path=path, why="not an object"))
    mapping: dict[str, list[str]] = {}
    for rec, hashes in value.items():
        hashes = [hashes] if isinstance(hashes, str) else hashes
        if not isinstance(hashes, list) or not all(is_hash(h) for h in hashes):
            raise SourceError(
                ERROR_MAP.format(path=path, why=f"{rec}: expected a list of 64-hex lesson hashes")
            )
        mapping[rec] = list(dict.fromkeys(hashes))
    return mapping


MemberTimes = Callable[[set[str]], dict[str, int]]


@dataclass
class Untimed:
    """Records that still need a time: ``field`` of each is the newest ``created_at`` of ``members``."""

    origin: str
    records: list[dict[str, Any]]
    field: str
    members: list[str]


def translate_files(
    paths: list[Path],
    *,
    mapping: dict[str, list[str]] | None = None,
    member_times: MemberTimes | None = None,
) -> Translation:
    """Translate areev output files into interchange records without ``host``.

    Raises ``SourceError`` for a file that cannot be read; malformed lines and objects are skipped,
    counted and listed. Outcome rows need ``mapping`` (``load_map``); the unmapped ones are counted.
    ``member_times(hashes)`` gives ``{hash: created_at ms}`` of stored lessons, for the findings and
    recommendations without a time whose members the files do not hold (see the module docstring).
    """
    translation = empty_translation()
    untimed: list[Untimed] = []
    for path in paths:
        try:
            text = read_text(path)
        except OSError as exc:
            raise SourceError(ERROR_UNREADABLE.format(path=path, why=exc.strerror or exc)) from None
        except UnicodeDecodeError:
            why = MEMORY_FILE if path.read_bytes()[:16] == SQLITE_MAGIC else "not valid UTF-8"
            raise SourceError(ERROR_UNREADABLE.format(path=path, why=why)) from None
        objects = _objects(path.name, text, translation)
        translate_objects(objects, translation=translation, mapping=mapping or {}, untimed=untimed)
    settle(translation, untimed=untimed, member_times=member_times)
    return translation


def empty_translation() -> Translation:
    """A translation with the importer's counters at 0, in the order the report prints them."""
    translation = Translation()
    for name in (LESSONS, NOT_LESSONS, FINDINGS, VERDICTS, OUTCOME_ROWS, UNMAPPED, DRAFTS, SKIPPED_LINES):
        translation.count(name, 0)
    return translation


def translate_objects(
    objects: Iterable[tuple[str, Any]], *, translation: Translation, mapping: dict, untimed: list[Untimed]
) -> None:
    """Translate ``(origin, value)`` pairs into ``translation``; the engine reader feeds these too.

    Call ``settle`` once after the last batch: it times what has no time and links consolidations.
    """
    for origin, obj in objects:
        _translate_object(origin, obj, translation, mapping, untimed)


def _objects(name: str, text: str, translation: Translation):
    """``(origin, value)`` per object: JSON values one after another (an array yields its elements),
    else, when that fails on a file whose values each sat on one line, JSON Lines."""
    decoder = json.JSONDecoder()
    values: list[tuple[int, Any]] = []
    position, length, multiline = 0, len(text), False
    line, counted = 1, 0  # the line number at ``counted``, advanced as the reading goes (linear time)
    while True:
        position = _BLANK.match(text, position).end()
        if position >= length:
            break
        line, counted = line + text.count("\n", counted, position), position
        try:
            value, end = decoder.raw_decode(text, position)
        except JSON_ERRORS as exc:
            if not multiline:  # JSON Lines with a bad line: report it line by line
                yield from _json_lines(name, text, translation)
                return
            yield from _numbered(name, values)
            translation.skip(
                SKIPPED_LINES, f"{name}:{line}", f"skipped the rest of the file: {json_problem(exc)}"
            )
            return
        multiline = multiline or text.find("\n", position, end) != -1
        values.append((line, value))
        position = end
    yield from _numbered(name, values)


def _numbered(name: str, values: list[tuple[int, Any]]):
    if len(values) == 1 and isinstance(values[0][1], list):
        yield from ((f"{name}[{i}]", v) for i, v in enumerate(values[0][1]))
    elif len(values) == 1:
        yield name, values[0][1]
    else:
        yield from ((f"{name}:{line}", v) for line, v in values)


def _json_lines(name: str, text: str, translation: Translation):
    for number, value, error in json_lines(text):
        if error is not None:
            translation.skip(SKIPPED_LINES, f"{name}:{number}", f"skipped: {error}")
        else:
            yield f"{name}:{number}", value


def _translate_object(
    origin: str, obj: Any, translation: Translation, mapping: dict, untimed: list[Untimed]
) -> None:
    if not isinstance(obj, dict):
        translation.skip(SKIPPED_LINES, origin, "skipped: expected a JSON object")
    elif obj.get("analyzer") == LLM_ANALYZER and obj.get("action_kind") == CONSOLIDATE:
        _recommendation(origin, obj, translation, untimed)
    elif "analyzer" in obj:
        _finding(origin, obj, translation, untimed)
    elif isinstance(obj.get("draft"), dict):
        _draft(origin, obj, translation, untimed)
    elif "rec_hash" in obj:
        _outcome(origin, obj, translation, mapping)
    elif isinstance(obj.get("fields"), dict):
        _grain(origin, obj, translation)
    else:
        translation.skip(UNRECOGNISED, origin, "skipped: not a grain, finding, outcome row or draft")


def settle(
    translation: Translation, *, untimed: list[Untimed], member_times: MemberTimes | None = None
) -> None:
    """After the last object: each live consolidation supersedes its members the translation holds,
    and each untimed record gets the newest ``created_at`` of its members (translation, then
    ``member_times``); records whose members nobody knows are dropped with a problem line."""
    lessons = {
        item.record["hash"]: item.record for item in translation.items if item.record["type"] == "lesson"
    }
    for record in list(lessons.values()):
        if record.get("kind") == "consolidation" and record.get("status", "live") == "live":
            for member in record.get("consolidates", ()):
                if member in lessons and member != record["hash"]:
                    lessons[member]["status"] = "superseded"
                    lessons[member]["superseded_by"] = record["hash"]
    if not untimed:
        return
    times = {h: parse_timestamp(r["created_at"]) for h, r in lessons.items()}
    missing = {h for u in untimed for h in u.members if h not in times}
    if missing and member_times is not None:
        times.update(member_times(missing))
    dropped: set[int] = set()
    for entry in untimed:
        known = [times[h] for h in entry.members if h in times]
        if not known:
            dropped.update(id(r) for r in entry.records)
            translation.note(f"{entry.origin}: {NO_TIME}")
            continue
        for record in entry.records:
            record[entry.field] = max(known)
    if dropped:
        translation.items = [item for item in translation.items if id(item.record) not in dropped]


def _grain(origin: str, obj: dict, translation: Translation) -> None:
    fields = obj["fields"]
    if fields.get("relation") != "lesson":
        translation.count(NOT_LESSONS)
        return
    digest = obj.get("hash")
    subject = fields.get("subject")
    namespace = fields.get("namespace", obj.get("namespace", ""))
    created = fields.get("created_at", obj.get("created_at_ms"))
    if not (
        is_hash(digest)
        and isinstance(subject, str)
        and isinstance(fields.get("object"), str)
        and isinstance(namespace, str)
        and created is not None
    ):
        translation.skip(
            SKIPPED_LINES,
            origin,
            "skipped: a lesson grain needs hash (64 hex), fields.subject, object, created_at",
        )
        return
    record: dict[str, Any] = {
        "type": "lesson",
        "hash": digest,
        "namespace": namespace,
        "subject": subject,
        "text": fields["object"],
        "created_at": created,
    }
    if fields.get("confidence") is not None:
        record["confidence"] = fields["confidence"]
    members = fields.get("consolidates")
    if isinstance(members, list) and members and all(is_hash(h) for h in members):
        record["kind"] = "consolidation"
        record["consolidates"] = list(dict.fromkeys(members))
    successor = fields.get("superseded_by")
    if successor:
        record["status"] = "superseded"
        if is_hash(successor):
            record["superseded_by"] = successor
    translation.count(LESSONS)
    translation.add(origin, record)


def _finding(origin: str, obj: dict, translation: Translation, untimed: list[Untimed]) -> None:
    if obj.get("analyzer") != PILE_ANALYZER:
        translation.skip(
            UNRECOGNISED, origin, f"skipped: a finding of {obj.get('analyzer')!r}, not {PILE_ANALYZER}"
        )
        return
    data = obj.get("data")
    if data is None and isinstance(obj.get("proposal"), dict):
        data = obj["proposal"].get("data")
    verdicts = data.get("verdicts") if isinstance(data, dict) else None
    if not isinstance(verdicts, dict):
        translation.skip(
            SKIPPED_LINES, origin, "skipped: a lesson_pile finding needs data.verdicts {hash: verdict}"
        )
        return
    measured = obj.get("created_at_ms")
    records: list[dict[str, Any]] = []
    translation.count(FINDINGS)
    for digest, verdict in sorted(verdicts.items()):
        if verdict == NOT_APPLIED or verdict is None:
            continue  # a member without a verdict: nothing was measured
        if not is_hash(digest) or not isinstance(verdict, str) or not verdict.strip():
            translation.skip(
                SKIPPED_LINES, f"{origin}: verdicts[{digest!r}]", "skipped: expected hash: verdict"
            )
            continue
        translation.count(VERDICTS)
        record = {"type": "verdict", "lesson": digest, "verdict": verdict, "metric": PILE_METRIC}
        record["measured_at"] = measured
        records.append(record)
        translation.add(f"{origin}: verdicts[{hash8(digest)}]", record)
    if measured is None and records:
        pile = data.get("pile") if isinstance(data.get("pile"), list) else list(verdicts)
        untimed.append(Untimed(origin, records, "measured_at", [h for h in pile if is_hash(h)]))


def _outcome(origin: str, obj: dict, translation: Translation, mapping: dict[str, list[str]]) -> None:
    translation.count(OUTCOME_ROWS)
    hashes = mapping.get(obj.get("rec_hash")) if isinstance(obj.get("rec_hash"), str) else None
    if not hashes:
        translation.skip(UNMAPPED, origin, f"skipped: rec_hash {obj.get('rec_hash')!r} is not in the map")
        return
    record: dict[str, Any] = {
        "type": "verdict",
        "verdict": obj.get("verdict"),
        "measured_at": obj.get("measured_at_ms"),
    }
    for name in ("metric", "baseline", "current", "horizon_ms"):
        if obj.get(name) is not None:
            record[name] = obj[name]
    for digest in hashes:
        translation.count(VERDICTS)
        translation.add(f"{origin}: {hash8(digest)}", {**record, "lesson": digest})


def _entity(target: Any) -> tuple[str, str] | None:
    """``entity:{namespace}/{subject}`` or ``entity:{subject}`` (docs/piles-and-recurrence.md, "Piles", rule
    7) as (namespace, subject).

    Split at the last ``/``: a namespace may contain one, a subject (a prompt's entity name) does not.
    """
    if not isinstance(target, str) or not target.startswith("entity:"):
        return None
    namespace, _sep, subject = target[len("entity:") :].rpartition("/")
    return (namespace, subject) if subject else None


def _gate(value: Any) -> str:
    """``pass`` or ``fail``: anything not clearly a pass is a fail (a draft must pass to be approved)."""
    if isinstance(value, dict):
        value = next((value[k] for k in ("result", "status", "verdict", "outcome") if k in value), None)
    if isinstance(value, bool):
        return "pass" if value else "fail"
    return "pass" if isinstance(value, str) and value.strip().lower() in PASSED else "fail"


def _draft(origin: str, obj: dict, translation: Translation, untimed: list[Untimed]) -> None:
    draft = obj["draft"]
    if draft.get("kind") != "consolidation":
        translation.skip(
            UNRECOGNISED, origin, f"skipped: a draft of kind {draft.get('kind')!r}, not consolidation"
        )
        return
    entity = (
        (obj.get("namespace", ""), obj["subject"])
        if isinstance(obj.get("subject"), str)
        else _entity(obj.get("target_ref"))
    )
    if entity is None:
        translation.skip(
            SKIPPED_LINES, origin, "skipped: a draft needs target_ref entity:{namespace}/{subject}"
        )
        return
    gates = obj.get("gates") if isinstance(obj.get("gates"), dict) else {}
    gates = {str(k).lower(): v for k, v in gates.items()}
    record: dict[str, Any] = {
        "type": "draft",
        "namespace": entity[0],
        "subject": entity[1],
        "text": draft.get("text"),
        "supersedes": draft.get("supersedes"),
        "drafted_by": obj.get("drafted_by") or draft.get("drafted_by") or obj.get("origin") or "llm",
        "gates": {"ground": _gate(gates.get("ground")), "verify": _gate(gates.get("verify"))},
    }
    ident = obj.get("id") or obj.get("rec_hash")
    if ident:
        record["id"] = ident
    if not isinstance(record["supersedes"], list):
        translation.skip(SKIPPED_LINES, origin, "skipped: draft.supersedes must be a list of lesson hashes")
        return
    _add_draft(origin, obj, record, translation, untimed)


def _add_draft(
    origin: str, obj: dict, record: dict[str, Any], translation: Translation, untimed: list[Untimed]
) -> None:
    """Add a draft record with the optional fields ``obj`` gives; untimed when it has no ``created_at_ms``."""
    for name in ("triggered_by", "confidence"):
        if obj.get(name) is not None:
            record[name] = obj[name]
    record["created_at"] = obj.get("created_at_ms")
    if record["created_at"] is None:
        untimed.append(
            Untimed(origin, [record], "created_at", [h for h in record["supersedes"] if is_hash(h)])
        )
    translation.count(DRAFTS)
    translation.add(origin, record)


def _cal_draft(cal: Any) -> tuple[dict, list[str]] | str:
    """``(ADD fields, SUPERSEDE targets)`` of a consolidation's CAL text, or why it cannot be read."""
    if not isinstance(cal, str):
        return "a consolidation recommendation needs its cal text"
    lines = [line.strip() for line in cal.split("\n") if line.strip()]
    if not lines or not lines[0].startswith(ADD_PREFIX):
        return "its cal text does not start with an ADD fact line"
    try:
        fields = json.loads(lines[0][len(ADD_PREFIX) :])
    except JSON_ERRORS as exc:
        return f"its ADD fact line is not valid JSON ({json_problem(exc)})"
    targets = []
    for line in lines[1:]:
        match = SUPERSEDE_LINE.match(line)
        if match is None:
            return f"its cal line {line[:40]!r} is neither ADD nor SUPERSEDE <hash> WITH"
        targets.append(match.group(1))
    if not isinstance(fields, dict) or not isinstance(fields.get("object"), str):
        return "its ADD fact line has no object text"
    return fields, targets


def _recommendation(origin: str, obj: dict, translation: Translation, untimed: list[Untimed]) -> None:
    """A ``loop.llm/1`` consolidation recommendation (areev 1.13.2) as a ``draft`` (module docstring)."""
    status = obj.get("status", PENDING)
    if status != PENDING:
        translation.skip(
            DECIDED, origin, f"skipped: recommendation {obj.get('hash')!r} is {status} in the engine"
        )
        return
    parsed = _cal_draft(obj.get("cal"))
    if isinstance(parsed, str):
        translation.skip(SKIPPED_LINES, origin, f"skipped: {parsed}")
        return
    fields, targets = parsed
    consolidates = fields.get("consolidates")
    if not isinstance(consolidates, list) or sorted(consolidates) != sorted(targets) or not targets:
        translation.skip(
            SKIPPED_LINES,
            origin,
            "skipped: the ADD line's consolidates and the SUPERSEDE lines must name the same lessons",
        )
        return
    entity = (
        (fields.get("namespace", ""), fields["subject"])
        if isinstance(fields.get("subject"), str)
        else _entity(obj.get("target_ref"))
    )
    if not is_hash(obj.get("hash")) or entity is None:
        translation.skip(
            SKIPPED_LINES,
            origin,
            "skipped: a recommendation needs its hash and its entity (subject or target_ref)",
        )
        return
    source = obj.get("origin") if isinstance(obj.get("origin"), dict) else {}
    model = source.get("model")
    gates = obj.get("gates") if isinstance(obj.get("gates"), dict) else None
    record: dict[str, Any] = {
        "type": "draft",
        "id": obj["hash"],
        "namespace": entity[0],
        "subject": entity[1],
        "text": fields["object"],
        "supersedes": list(dict.fromkeys(consolidates)),
        "drafted_by": f"llm:{model}" if model else f"{source.get('kind') or 'llm'}:{obj['analyzer']}",
        # Stored by 1.13.2 only after both gates passed (see the module docstring).
        "gates": (
            {"ground": _gate(gates.get("ground")), "verify": _gate(gates.get("verify"))}
            if gates is not None
            else {"ground": "pass", "verify": "pass"}
        ),
    }
    _add_draft(origin, obj, record, translation, untimed)
