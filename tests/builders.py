"""Builders of interchange records for every test: plain dicts in the shape interchange.md gives them.

Each builder takes keyword arguments and writes only the fields it is given (no hidden defaults for what a
test's assertions depend on: host, entity, text and time are always named by the caller). Times are what
the record carries: integer milliseconds since the epoch (``day_ms``) or an ISO string with ``Z`` (``at``).
Feed the records to the ``ingest`` fixture, or ``lesson_line`` for a raw JSON line.
"""

from __future__ import annotations

import json

from lessons.core.text import lesson_hash

DAY_MS = 86_400_000
JAN_1_MS = 1_767_225_600_000  # 2026-01-01T00:00:00.000Z
JAN_15_MS = 1_768_435_200_000  # 2026-01-15T00:00:00.000Z


def day_ms(day: int, *, start: int = JAN_1_MS) -> int:
    """Milliseconds at midnight UTC ``day`` days after ``start`` (itself milliseconds)."""
    return start + day * DAY_MS


def at(clock: str, *, day: str) -> str:
    """An ISO timestamp with Z for a wall-clock time on ``day`` (``"10:00"`` or ``"10:00:00.019"``)."""
    if clock.count(":") == 1:
        clock += ":00"
    if "." not in clock:
        clock += ".000"
    return f"{day}T{clock}Z"


def host(*, name: str, **fields) -> dict:
    """A ``host`` record; ``fields``: ``max_active``, ``budget_enabled``, ``description``."""
    return {"type": "host", "name": name, **fields}


def lesson(
    *,
    host: str,
    namespace: str,
    subject: str,
    text: str,
    created_at: int | str,
    origin: str | None = None,
    hashed: bool = False,
    **fields,
) -> dict:
    """A ``lesson`` record. ``origin`` is written when given; ``hashed`` adds the ``hash`` ingest would give
    (``lesson_hash`` of namespace, subject and text); ``fields`` follow (``status``, ``store``, ...)."""
    record = {
        "type": "lesson",
        "host": host,
        "namespace": namespace,
        "subject": subject,
        "text": text,
        "created_at": created_at,
    }
    if origin is not None:
        record["origin"] = origin
    if hashed:
        record["hash"] = lesson_hash(namespace, subject, text)
    return {**record, **fields}


def lesson_line(**fields) -> str:
    """``lesson(**fields)`` as one JSON line (no newline)."""
    return json.dumps(lesson(**fields))


def numbered_lesson(
    i: int, *, namespace: str, host: str = "acme", subject: str = "invoice_capture", text: str | None = None
) -> dict:
    """Lesson number ``i`` of a pile: created ``i`` days after 2026-01-15, origin ``llm``, with its hash;
    its text ``"Lesson number {i} about invoice capture field {i}."`` unless ``text`` is given."""
    return lesson(
        host=host,
        namespace=namespace,
        subject=subject,
        text=text or f"Lesson number {i} about invoice capture field {i}.",
        created_at=day_ms(i, start=JAN_15_MS),
        origin="llm",
        hashed=True,
    )


def exposure(*, host: str, session: str, shown_at: str, text: str | None = None, **ref) -> dict:
    """An ``exposure`` record; ``ref`` is ``lesson=HASH`` or ``store=..., lesson_id=...``; ``text`` (the text
    shown) is written when given."""
    record = {"type": "exposure", "host": host, "session": session, "shown_at": shown_at, **ref}
    if text is not None:
        record["text"] = text
    return record


def correction(
    *,
    host: str,
    session: str,
    id: str,  # noqa: A002 - the record's field name
    text: str,
    corrected_at: str,
    kind: str = "user_correction",
    turn_started_at: str | None = None,
) -> dict:
    """A ``correction`` record; ``turn_started_at`` None: the start of the corrected turn is unknown."""
    return {
        "type": "correction",
        "host": host,
        "session": session,
        "id": id,
        "kind": kind,
        "text": text,
        "corrected_at": corrected_at,
        "turn_started_at": turn_started_at,
    }
