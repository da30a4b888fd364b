"""The recurrence tests' host, entity and day (records come from tests/builders.py), and snapshots of the
stored results."""

from __future__ import annotations

from lessons.core.text import lesson_hash
from tests.builders import at

HOST = "desk"
NAMESPACE = "dbt"
SUBJECT = "staging"
DAY = "2026-10-05"


# The lessons of these tests: ``lesson(host=HOST, **ENTITY, text=..., created_at=OCT_1)``.
ENTITY = {"namespace": NAMESPACE, "subject": SUBJECT}
OCT_1 = "2026-10-01T00:00:00.000Z"


def clock(time: str) -> str:
    """The ISO timestamp of a wall-clock time on this module's ``DAY`` (``10:00`` or ``10:00:00.019``)."""
    return at(time, day=DAY)


def correction_id(session: str, time: str, kind: str = "user_correction") -> str:
    """The id these tests give a correction of ``session`` at ``time`` (unique per session, time and kind)."""
    return f"{session}-{time}-{kind}"


def hash_of(text: str) -> str:
    """The content address ingest gives a lesson of this module's entity."""
    return lesson_hash(NAMESPACE, SUBJECT, text)


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
