"""Small builders of interchange records for recurrence tests, and snapshots of the stored results."""

from __future__ import annotations

from lessons.core.text import lesson_hash

HOST = "desk"
NAMESPACE = "dbt"
SUBJECT = "staging"
DAY = "2026-10-05"


def at(clock: str, day: str = DAY) -> str:
    """An ISO timestamp with Z for a wall-clock time on ``day`` (``10:00`` or ``10:00:00.019``)."""
    if clock.count(":") == 1:
        clock += ":00"
    if "." not in clock:
        clock += ".000"
    return f"{day}T{clock}Z"


def host(name: str = HOST, **fields) -> dict:
    return {"type": "host", "name": name, **fields}


def lesson(text: str, *, host: str = HOST, created: str = "2026-10-01T00:00:00.000Z", **fields) -> dict:
    return {
        "type": "lesson",
        "host": host,
        "namespace": NAMESPACE,
        "subject": SUBJECT,
        "text": text,
        "created_at": created,
        **fields,
    }


def hash_of(text: str) -> str:
    """The content address ingest gives a lesson of this module's entity."""
    return lesson_hash(NAMESPACE, SUBJECT, text)


def shown(session: str, clock: str, *, host: str = HOST, text: str | None = None, **ref) -> dict:
    """An exposure; ``ref`` is ``lesson=HASH`` or ``store=..., lesson_id=...``."""
    record = {"type": "exposure", "host": host, "session": session, "shown_at": at(clock), **ref}
    if text is not None:
        record["text"] = text
    return record


def corrected(
    session: str,
    clock: str,
    text: str,
    *,
    turn: str | None = None,
    kind: str = "user_correction",
    host: str = HOST,
    id: str | None = None,
) -> dict:
    return {
        "type": "correction",
        "host": host,
        "session": session,
        "id": id or f"{session}-{clock}-{kind}",
        "kind": kind,
        "text": text,
        "corrected_at": at(clock),
        "turn_started_at": at(turn) if turn else None,
    }


def counts(**nonzero: int) -> dict[str, int]:
    """The seven counts, zeros except ``nonzero``."""
    base = dict.fromkeys(
        (
            "sessions_shown",
            "recurred",
            "recurred_sessions",
            "during",
            "unknown",
            "ambiguous",
            "earlier_version",
        ),
        0,
    )
    return {**base, **nonzero}


def stored_counts() -> dict[tuple[str, str], dict[str, int]]:
    """Every stored ``RecurrenceCount`` as ``{(host, lesson hash): counts}``."""
    from lessons.models import RecurrenceCount
    from lessons.serializers import recurrence_dict

    return {
        (row.lesson.host.name, row.lesson.hash): recurrence_dict(row)
        for row in RecurrenceCount.objects.select_related("lesson__host")
    }


def stored_attributions() -> list[tuple]:
    """Every stored attribution as ``(host, session, correction key, lesson hash or "", outcome)``, sorted."""
    from lessons.models import CorrectionAttribution

    return sorted(
        (a.host.name, a.session, a.correction.key, a.lesson.hash if a.lesson else "", a.outcome)
        for a in CorrectionAttribution.objects.select_related("host", "correction", "lesson")
    )


def snapshot() -> tuple:
    """What recurrence stores: counts and attributions (compare before and after a full recompute)."""
    return stored_counts(), stored_attributions()
