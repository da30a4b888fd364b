"""Fixtures of the page tests: small interchange batches ingested through the real service."""

from __future__ import annotations

import pytest

from lessons.core.text import lesson_hash
from tests.builders import DAY_MS, day_ms, lesson


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
            records.append(
                lesson(
                    host=host,
                    namespace=namespace,
                    subject=subject,
                    text=text,
                    created_at=day_ms(i),
                    origin="llm",
                    **ids,
                )
            )
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
                        "measured_at": day_ms(i + j + 1),
                    }
                )
        report = ingest(records)
        assert report.ok, report.error_lines()
        return hashes

    return build
