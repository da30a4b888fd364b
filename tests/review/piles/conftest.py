"""A small pile with a pending draft: host acme (budget 2), four live lessons on qa/orders, draft d-1
superseding the first two. ``ORDERS`` is its pile page."""

from __future__ import annotations

import pytest

from lessons.core.text import lesson_hash
from tests.pages.conftest import T0_MS, lesson_record

ORDERS = "/pile/?host=acme&namespace=qa&subject=orders"
TEXTS = [f"Copy order field {i} exactly as printed, digit {i} kept." for i in range(4)]
HASHES = [lesson_hash("qa", "orders", t) for t in TEXTS]


@pytest.fixture
def drafted(ingest):
    records = [{"type": "host", "name": "acme", "max_active": 2, "budget_enabled": True}]
    records += [lesson_record("acme", "qa", "orders", t, i) for i, t in enumerate(TEXTS)]
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
            "created_at": T0_MS + 50 * 86_400_000,
        }
    )
    report = ingest(records)
    assert report.ok, report.error_lines()
