"""A small pile with a pending draft: host acme (budget 2), four live lessons on qa/orders, draft d-1
superseding the first two. ``ORDERS`` is its pile page."""

from __future__ import annotations

import pytest

from lessons.core.text import lesson_hash
from tests.builders import JAN_1_MS, day_ms, lesson

ORDERS = "/pile/?host=acme&namespace=qa&subject=orders"
TEXTS = [f"Copy order field {i} exactly as printed, digit {i} kept." for i in range(4)]
HASHES = [lesson_hash("qa", "orders", t) for t in TEXTS]


@pytest.fixture
def drafted(ingest):
    records = [{"type": "host", "name": "acme", "max_active": 2, "budget_enabled": True}]
    records += [
        lesson(host="acme", namespace="qa", subject="orders", text=t, created_at=day_ms(i), origin="llm")
        for i, t in enumerate(TEXTS)
    ]
    records.append(
        {
            "type": "draft",
            "host": "acme",
            "id": "d-1",
            "namespace": "qa",
            "subject": "orders",
            "text": "Copy order fields 0 and 1 exactly as printed.",
            "supersedes": HASHES[:2],
            "drafted_by": "llm:x",
            "gates": {"ground": "pass", "verify": "pass"},
            "created_at": day_ms(50, start=JAN_1_MS),
        }
    )
    report = ingest(records)
    assert report.ok, report.error_lines()
