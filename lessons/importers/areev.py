"""Translating areev JSON output into interchange records. spec: importers.md, "areev".

Pure: reads files, never the database. Every file is a JSON document (an object or an array) or
JSON Lines; each object is recognised by its shape:

- a grain ``{hash, type|grain_type, fields: {subject, relation, object, namespace, created_at,
  confidence?, superseded_by?}}``: a ``lesson`` when ``relation == "lesson"``;
- a ``loop.lesson_pile/1`` finding ``{analyzer, target_ref, data: {pile, verdicts, max_active},
  created_at_ms?}``: one ``verdict`` per member verdict, metric ``lesson_pile``;
- an outcome row ``{rec_hash, metric, baseline, current, verdict, horizon_ms, measured_at_ms}``:
  one ``verdict`` per lesson hash the map gives for ``rec_hash``;
- a consolidation draft ``{origin: "llm", id|rec_hash, target_ref, draft: {kind: "consolidation",
  text, supersedes}, gates, drafted_by, triggered_by?, confidence?, created_at_ms}``: a ``draft``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lessons.core.piles import NOT_APPLIED

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
UNRECOGNISED = "unrecognised objects"

ERROR_UNREADABLE = "{path}: cannot read: {why}"
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


def translate_files(paths: list[Path], *, mapping: dict[str, list[str]] | None = None) -> Translation:
    """Translate areev output files into interchange records without ``host``.

    Raises ``SourceError`` for a file that cannot be read; malformed lines and objects are skipped,
    counted and listed. Outcome rows need ``mapping`` (``load_map``); the unmapped ones are counted.
    """
    translation = Translation()
    for name in (LESSONS, NOT_LESSONS, FINDINGS, VERDICTS, OUTCOME_ROWS, UNMAPPED, DRAFTS, SKIPPED_LINES):
        translation.count(name, 0)
    for path in paths:
        try:
            text = read_text(path)
            mtime_ms = int(path.stat().st_mtime * 1000)
        except OSError as exc:
            raise SourceError(ERROR_UNREADABLE.format(path=path, why=exc.strerror or exc)) from None
        except UnicodeDecodeError:
            raise SourceError(ERROR_UNREADABLE.format(path=path, why="not valid UTF-8")) from None
        for origin, obj in _objects(path.name, text, translation):
            _translate_object(origin, obj, translation, mapping or {}, mtime_ms)
    return translation


def _objects(name: str, text: str, translation: Translation):
    """``(origin, value)`` per object: a whole JSON document (object or array), else JSON Lines."""
    try:
        document = json.loads(text)
    except JSON_ERRORS:  # not one document: read it as JSON Lines, line by line
        document = None
    else:
        if isinstance(document, list):
            yield from ((f"{name}[{i}]", v) for i, v in enumerate(document))
            return
        if isinstance(document, dict):
            yield name, document
            return
    for number, value, error in json_lines(text):
        if error is not None:
            translation.skip(SKIPPED_LINES, f"{name}:{number}", f"skipped: {error}")
        else:
            yield f"{name}:{number}", value


def _translate_object(origin: str, obj: Any, translation: Translation, mapping: dict, mtime_ms: int) -> None:
    if not isinstance(obj, dict):
        translation.skip(SKIPPED_LINES, origin, "skipped: expected a JSON object")
    elif "analyzer" in obj:
        _finding(origin, obj, translation, mtime_ms)
    elif isinstance(obj.get("draft"), dict):
        _draft(origin, obj, translation, mtime_ms)
    elif "rec_hash" in obj:
        _outcome(origin, obj, translation, mapping)
    elif isinstance(obj.get("fields"), dict):
        _grain(origin, obj, translation)
    else:
        translation.skip(UNRECOGNISED, origin, "skipped: not a grain, finding, outcome row or draft")


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
    successor = fields.get("superseded_by")
    if successor:
        record["status"] = "superseded"
        if is_hash(successor):
            record["superseded_by"] = successor
    translation.count(LESSONS)
    translation.add(origin, record)


def _finding(origin: str, obj: dict, translation: Translation, mtime_ms: int) -> None:
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
    measured = obj.get("created_at_ms", mtime_ms)
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
        translation.add(
            f"{origin}: verdicts[{digest[:12]}]",
            {
                "type": "verdict",
                "lesson": digest,
                "verdict": verdict,
                "metric": PILE_METRIC,
                "measured_at": measured,
            },
        )


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
        translation.add(f"{origin}: {digest[:12]}", {**record, "lesson": digest})


def _entity(target: Any) -> tuple[str, str] | None:
    """``entity:{namespace}/{subject}`` or ``entity:{subject}`` (piles.md, rule 7) as (namespace, subject).

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


def _draft(origin: str, obj: dict, translation: Translation, mtime_ms: int) -> None:
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
        "created_at": obj.get("created_at_ms", mtime_ms),
    }
    ident = obj.get("id") or obj.get("rec_hash")
    if ident:
        record["id"] = ident
    for name in ("triggered_by", "confidence"):
        if obj.get(name) is not None:
            record[name] = obj[name]
    if not isinstance(record["supersedes"], list):
        translation.skip(SKIPPED_LINES, origin, "skipped: draft.supersedes must be a list of lesson hashes")
        return
    translation.count(DRAFTS)
    translation.add(origin, record)
