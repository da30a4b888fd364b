"""Far dates never answer 500 (issue 13, fault 11): ``?to=9999-12-31``/``?from=0001-01-01`` on the log and both
exports, and a lesson dated in year 1 or 9999 (its recurrence timeline)."""

from __future__ import annotations

import pytest

from tests.security.builders import HOST, build_pile, ingest_records, lesson, retire


@pytest.fixture
def site(reviewer):
    hashes = build_pile()
    retire(actor=reviewer, hashes=[hashes[3]])
    return hashes


@pytest.mark.parametrize(
    "query", ["to=9999-12-31", "from=9999-12-31", "from=0001-01-01", "from=0001-01-01&to=9999-12-31"]
)
@pytest.mark.parametrize(
    "url", ["/decisions/", "/review/decisions/export.jsonl", "/review/decisions/export.csv"]
)
def test_far_dates_on_the_log_and_its_exports_never_500(client, reviewer, site, url, query):
    client.force_login(reviewer)
    response = client.get(f"{url}?{query}")
    assert response.status_code == 200


def test_to_the_last_day_keeps_every_decision(client, reviewer, site):
    client.force_login(reviewer)
    body = b"".join(client.get("/review/decisions/export.jsonl?to=9999-12-31").streaming_content)
    assert len(body.splitlines()) == 1


# Year 1 and year 9999 are valid interchange timestamps (milliseconds since the epoch, UTC).
YEAR_1 = -62135596800000  # 0001-01-01T00:00:00Z
YEAR_9999 = 253402214400000  # 9999-12-31T00:00:00Z


@pytest.mark.parametrize("created_at", [YEAR_1, YEAR_9999])
def test_a_lesson_dated_in_year_1_or_9999_renders_its_page(client, reviewer, created_at):
    hashes = build_pile()
    far = lesson(9, created_at=created_at)
    shown = {
        "type": "exposure",
        "host": HOST,
        "session": "s-9",
        "lesson": far["hash"],
        "shown_at": "2026-02-01T10:00:00Z",
    }
    ingest_records([far, shown])
    client.force_login(reviewer)
    for h in (far["hash"], hashes[0]):
        assert client.get(f"/lessons/{HOST}/{h}/").status_code == 200
