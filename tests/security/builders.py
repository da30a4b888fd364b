"""The security tests' world, built from tests/builders.py: one host with a pile, a draft, a recurrence and
a decision.

``acme`` (budget 3, enabled) carries four live lessons on ``ops/deploy`` (a pile), one exposure and one
correction (so the lesson page draws its recurrence chart), and a pending draft ``d-1`` superseding the
first two, drafted by ``llm:test`` and triggered by ``user:trix``.
"""

from __future__ import annotations

from tests import builders
from tests.conftest import ingest_records as _ingest

HOST = "acme"
NS = "ops"
SUBJECT = "deploy"
T0 = 1768435200000  # 2026-01-15T00:00:00.000Z
DAY = 86_400_000
DRAFT_ID = "d-1"


def lesson(i: int, *, created_at: int | None = None, text: str | None = None) -> dict:
    """Lesson ``i`` of the pile (with its hash), created ``i`` days after 2026-01-15."""
    return builders.lesson(
        host=HOST,
        namespace=NS,
        subject=SUBJECT,
        text=text or f"Deploy rule {i}: check the canary field{i} before rollout.",
        created_at=T0 + i * DAY if created_at is None else created_at,
        hashed=True,
    )


def draft(*, supersedes: list[str], triggered_by: str | None = "user:trix", draft_id: str = DRAFT_ID) -> dict:
    return {
        "type": "draft",
        "host": HOST,
        "id": draft_id,
        "namespace": NS,
        "subject": SUBJECT,
        "text": "Check the canary before every rollout.",
        "supersedes": supersedes,
        "drafted_by": "llm:test",
        "triggered_by": triggered_by,
        "gates": {"ground": "pass", "verify": "pass"},
        "confidence": 0.5,
        "created_at": T0 + 50 * DAY,
    }


def pile_records(
    *, n: int = 4, triggered_by: str | None = "user:trix", draft_id: str = DRAFT_ID
) -> list[dict]:
    """The records of the module docstring (``n`` lessons)."""
    lessons = [lesson(i) for i in range(n)]
    first = lessons[0]
    return [
        {"type": "host", "name": HOST, "max_active": 3, "budget_enabled": True},
        *lessons,
        builders.exposure(host=HOST, session="s-1", shown_at="2026-02-01T10:00:00Z", lesson=first["hash"]),
        builders.correction(
            host=HOST,
            session="s-1",
            id="c-1",
            text="No, check the canary field0 first.",
            corrected_at="2026-02-01T10:05:00Z",
            turn_started_at="2026-02-01T10:04:00Z",
        ),
        draft(
            supersedes=[lessons[0]["hash"], lessons[1]["hash"]], triggered_by=triggered_by, draft_id=draft_id
        ),
    ]


def ingest_records(records: list[dict]):
    """Run ``records`` through the real ingest service; asserts the batch is valid; returns the report."""
    report = _ingest(records)
    assert report.ok, report.error_lines()
    return report


def build_pile() -> list[str]:
    """Ingest ``pile_records()``; returns the lesson hashes, oldest first."""
    records = pile_records()
    ingest_records(records)
    return [r["hash"] for r in records if r["type"] == "lesson"]


def retire(*, actor, hashes: list[str], reason: str = "Restated by another lesson."):
    """Retire lessons of the pile through the real service: one decision row each in the log."""
    from lessons.models import Host
    from review.services.decisions import lessons_retire

    return lessons_retire(host=Host.objects.get(name=HOST), hashes=hashes, actor=actor, reason=reason)
