"""A small pile with backticked anchors for the reviewer-written consolidation tests: host ``wh`` (budget 2,
enabled), three live lessons on ``dbt/staging``, the first held at the Verify gate."""

from __future__ import annotations

from tests.builders import JAN_15_MS, day_ms, lesson

HOST = "wh"
NS = "dbt"
SUBJECT = "staging"
TEXTS = (
    "Wrap timestamp columns in `to_utc` before joining staging models.",
    "Alias converted timestamp columns with an `at` suffix after `to_utc`.",
    "Keep `amount_cents` as integer cents in staging models.",
)
# One line per fact, as the editor prefills it: the first two restate one another (they share `to_utc` and
# "timestamp columns"), and the held one is that fact's keeper.
PREFILL = TEXTS[0] + "\n" + TEXTS[2]


def pile_records(*, texts=TEXTS, store: str | None = None) -> list[dict]:
    """The host, its lessons (oldest first, one day apart; ``store`` gives each an altimate id and store)
    and a ``held`` verdict on the first."""
    records: list[dict] = [{"type": "host", "name": HOST, "max_active": 2, "budget_enabled": True}]
    for i, text in enumerate(texts):
        extra = {"store": store, "lesson_id": f"L-{1000 + i:04x}"} if store else {}
        records.append(
            lesson(
                host=HOST,
                namespace=NS,
                subject=SUBJECT,
                text=text,
                created_at=day_ms(i, start=JAN_15_MS),
                hashed=True,
                **extra,
            )
        )
    records.append(
        {
            "type": "verdict",
            "host": HOST,
            "lesson": records[1]["hash"],
            "verdict": "held",
            "measured_at": "2026-02-01T00:00:00Z",
        }
    )
    return records


def hashes(records: list[dict]) -> list[str]:
    return [r["hash"] for r in records if r["type"] == "lesson"]
