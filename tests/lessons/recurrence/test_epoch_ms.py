"""``EpochMs`` (times read as epoch milliseconds in SQL) equals ``to_ms`` of the stored datetime.

The recurrence refresh and ingest's resolver read every time this way; a wrong millisecond would change
which version is current and every attribution after it. spec: docs/piles-and-recurrence.md (times in milliseconds).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from lessons.core.text import from_ms, to_ms
from lessons.models import Correction, Host
from lessons.recurrence.versions import EpochMs

MOMENTS_MS = [
    0,  # the epoch itself
    1,
    999,
    1_000,  # a whole second: Django stores no fraction
    1_800_000_000_000,
    1_800_000_000_123,
    -1,  # before the epoch: floor, as to_ms
    -1_500,
    -62_135_596_800_000,  # 0001-01-01T00:00:00Z
    253_402_300_799_999,  # 9999-12-31T23:59:59.999Z
]


@pytest.mark.django_db
def test_epoch_ms_matches_to_ms_for_every_stored_moment():
    host = Host.objects.create(name="h")
    for n, ms in enumerate(MOMENTS_MS):
        Correction.objects.create(
            host=host,
            session=f"s{n}",
            key=f"k{n}",
            kind="user_correction",
            text="t",
            text_hash="0" * 64,
            corrected_at=from_ms(ms),
            turn_started_at=None if n % 2 else from_ms(ms),
        )
    rows = Correction.objects.order_by("id").values_list(
        "corrected_at", EpochMs("corrected_at"), EpochMs("turn_started_at")
    )
    got = [(ms, turn) for _dt, ms, turn in rows]
    assert got == [(ms, None if n % 2 else ms) for n, ms in enumerate(MOMENTS_MS)]
    assert [to_ms(dt) for dt, _ms, _turn in rows] == MOMENTS_MS


@pytest.mark.django_db
def test_epoch_ms_floors_microseconds_like_to_ms():
    host = Host.objects.create(name="h")
    moment = datetime(2027, 3, 4, 5, 6, 7, 890_999, tzinfo=UTC)
    Correction.objects.create(
        host=host,
        session="s",
        key="k",
        kind="user_correction",
        text="t",
        text_hash="0" * 64,
        corrected_at=moment,
    )
    assert list(Correction.objects.values_list(EpochMs("corrected_at"), flat=True)) == [to_ms(moment)]
    assert to_ms(moment) == 1_804_136_767_890
