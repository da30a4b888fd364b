"""Builders for the page tests: small interchange batches ingested through the real service."""

from __future__ import annotations

import pytest

from lessons.core.text import lesson_hash

DAY_MS = 86_400_000
T0_MS = 1_767_225_600_000  # 2026-01-01T00:00:00.000Z


def lesson_record(host: str, namespace: str, subject: str, text: str, day: int, **extra) -> dict:
    return {
        "type": "lesson",
        "host": host,
        "namespace": namespace,
        "subject": subject,
        "text": text,
        "created_at": T0_MS + day * DAY_MS,
        "origin": "llm",
        **extra,
    }


@pytest.fixture
def entity(ingest):
    """``entity(n, host=..., max_active=..., enabled=...)``: a host and ``n`` live lessons on one entity,
    each with two verdicts (and a ``lesson_id`` in store ``qa-store`` when ``lesson_ids``); returns the
    lessons' hashes oldest first.
    """

    def build(
        n: int,
        *,
        host: str = "qa-host",
        namespace: str = "qa",
        subject: str = "orders",
        max_active: int = 2,
        enabled: bool = True,
        texts: list[str] | None = None,
        lesson_ids: bool = False,
    ) -> list[str]:
        records: list[dict] = [
            {"type": "host", "name": host, "max_active": max_active, "budget_enabled": enabled}
        ]
        hashes = []
        for i in range(n):
            text = texts[i] if texts else f"Lesson number {i} about orders: check field {i} twice."
            ids = {"lesson_id": f"L-{i}", "store": "qa-store"} if lesson_ids else {}
            records.append(lesson_record(host, namespace, subject, text, i, **ids))
            h = lesson_hash(namespace, subject, text)
            hashes.append(h)
            for j, verdict in enumerate(("held", "regressed" if i % 2 else "held")):
                records.append(
                    {
                        "type": "verdict",
                        "host": host,
                        "lesson": h,
                        "verdict": verdict,
                        "metric": "accuracy",
                        "baseline": 0.5,
                        "current": 0.6,
                        "horizon_ms": (j + 1) * DAY_MS,
                        "measured_at": T0_MS + (i + j + 1) * DAY_MS,
                    }
                )
        report = ingest(records)
        assert report.ok, report.error_lines()
        return hashes

    return build
