"""The row writer stores a time as Django itself would (SQLite: the naive UTC text of ``str()``), and its
upsert overwrites only the named columns. spec: interchange.md ("Framing": epoch milliseconds, UTC)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import IntegrityError, connection, transaction
from django.test.utils import CaptureQueriesContext

from lessons.core.text import to_ms
from lessons.ingest import writer
from lessons.models import Correction, Host, Lesson, RecurrenceCount

MOMENTS_MS = [0, 1, 999, 1_000, 1_001, -1, -999, -1_000, -1_001, -62_135_596_800_000, 253_402_300_799_999]


@pytest.mark.django_db
def test_the_sqlite_time_text_is_djangos_even_past_the_seconds_cache(monkeypatch):
    if connection.vendor != "sqlite":
        pytest.skip("the text form is SQLite's")
    monkeypatch.setattr(writer, "SECONDS_CACHED", 3)  # evicted several times below
    adapt = writer._ms_adapter()
    naive_epoch = datetime(1970, 1, 1)
    got = [adapt(ms) for ms in [*MOMENTS_MS, *MOMENTS_MS]]
    assert got == [str(naive_epoch + timedelta(milliseconds=ms)) for ms in [*MOMENTS_MS, *MOMENTS_MS]]
    assert got[:4] == [
        "1970-01-01 00:00:00",
        "1970-01-01 00:00:00.001000",
        "1970-01-01 00:00:00.999000",
        "1970-01-01 00:00:01",
    ]
    assert got[5] == "1969-12-31 23:59:59.999000"
    assert adapt(None) is None


@pytest.mark.django_db
def test_rows_written_read_back_as_the_same_moments():
    host = Host.objects.create(name="h")
    table = writer.Table(
        model=Correction,
        fields=("host_id", "session", "key", "kind", "text", "text_hash", "corrected_at", "turn_started_at"),
    )
    rows = [
        (host.id, "s", f"k{n}", "user_correction", "t", "0" * 64, ms, None) for n, ms in enumerate(MOMENTS_MS)
    ]
    assert table.insert(rows) == len(MOMENTS_MS)
    stored = list(Correction.objects.order_by("id").values_list("corrected_at", flat=True))
    assert [to_ms(moment) for moment in stored] == MOMENTS_MS


@pytest.mark.django_db
@pytest.mark.counts_unchecked  # a lesson row made directly, to have a count row to overwrite: no write path
def test_an_upsert_overwrites_the_named_columns_of_a_stored_row():
    host = Host.objects.create(name="h")
    lesson = Lesson.objects.create(
        host=host,
        hash="a" * 64,
        namespace="n",
        subject="s",
        text="t",
        text_hash="b" * 64,
        created_at=datetime(2026, 1, 1, tzinfo=UTC),
    )
    RecurrenceCount.objects.create(lesson=lesson, sessions_shown=5, recurred=4, during=3)
    table = writer.Table(model=RecurrenceCount, fields=("lesson_id", "sessions_shown", "recurred"))
    table.insert([(lesson.id, 7, 1)], unique=("lesson_id",), update=("sessions_shown", "recurred"))
    assert list(RecurrenceCount.objects.values_list("lesson_id", "sessions_shown", "recurred", "during")) == [
        (lesson.id, 7, 1, 3)
    ]


@pytest.mark.django_db(transaction=True)
def test_a_row_breaking_a_constraint_raises_djangos_integrity_error_and_writes_nothing():
    # On PostgreSQL a plain insert is a COPY: its error must still be Django's, the statement logged.
    host = Host.objects.create(name="h")
    table = writer.Table(
        model=Correction, fields=("host_id", "session", "key", "kind", "text", "text_hash", "corrected_at")
    )
    rows = [(host.id, "s", key, "user_correction", "t", "0" * 64, 0) for key in ("k1", "k2", "k1")]
    with CaptureQueriesContext(connection) as queries, pytest.raises(IntegrityError):
        with transaction.atomic():
            table.insert(rows)
    assert Correction.objects.count() == 0
    assert [
        q["sql"].split(" ", 3)[:3] for q in queries.captured_queries if "lessons_correction" in q["sql"]
    ] == [["3", "times:", "COPY" if connection.vendor == "postgresql" else "INSERT"]]


def correction_rows(*, text_at: int) -> writer.RowKind:
    """Corrections of items ``(host id, key, text)``: session ``s``, text ``item[text_at]``."""
    return writer.RowKind(
        rtype="correction",
        table=writer.Table(
            model=Correction,
            fields=("host_id", "session", "key", "kind", "text", "text_hash", "corrected_at"),
        ),
        scope="host_id",
        build=lambda item: (item[0], "s", item[1], "user_correction", item[text_at], "0" * 64, 0),
    )


@pytest.mark.django_db
def test_insert_new_rows_writes_only_the_identities_not_stored_nor_repeated_and_counts_the_rest():
    # On SQLite the rows go in first (ON CONFLICT DO NOTHING) and the stored identities are read only when
    # some row was skipped; on PostgreSQL they are read first. The same rows and counts either way.
    from lessons.ingest.report import ImportReport

    host, other = Host.objects.create(name="h"), Host.objects.create(name="o")
    kind = correction_rows(text_at=2)

    def items(*pairs):
        return [(h.id, key, (h.id, key, text)) for h, key, text in pairs]

    report = ImportReport()
    first = writer.insert_new_rows(
        report=report, kind=kind, items=items((host, "k1", "a"), (host, "k2", "b"))
    )
    assert first == [(host.id, "k1", "a"), (host.id, "k2", "b")]
    assert (report.counts["correction"]["created"], report.counts["correction"]["unchanged"]) == (2, 0)
    # k1 stored, k3 twice in one call, k1 of another host new: two skipped, three written.
    second = writer.insert_new_rows(
        report=report,
        kind=kind,
        items=items(
            (host, "k1", "a2"), (host, "k3", "c"), (host, "k3", "c2"), (other, "k1", "d"), (host, "k4", "e")
        ),
    )
    assert second == [(host.id, "k3", "c"), (other.id, "k1", "d"), (host.id, "k4", "e")]
    assert (report.counts["correction"]["created"], report.counts["correction"]["unchanged"]) == (5, 2)
    assert sorted(Correction.objects.values_list("host__name", "key", "text")) == [
        ("h", "k1", "a"),
        ("h", "k2", "b"),
        ("h", "k3", "c"),
        ("h", "k4", "e"),
        ("o", "k1", "d"),
    ]
    # Every identity stored: nothing written, every row counted unchanged.
    assert (
        writer.insert_new_rows(report=report, kind=kind, items=items((host, "k2", "x"), (other, "k1", "y")))
        == []
    )
    assert (report.counts["correction"]["created"], report.counts["correction"]["unchanged"]) == (5, 4)
    assert Correction.objects.count() == 5


@pytest.mark.django_db
def test_a_skipped_identity_uses_up_no_id_so_the_rows_get_the_ids_of_a_write_of_the_new_rows_only():
    # SQLite's AUTOINCREMENT counts a row ON CONFLICT DO NOTHING skipped: before, a re-ingest moved every
    # later id on by the rows it skipped, and the ids a batch got depended on where its chunks began (a
    # repeat within one chunk was dropped before the INSERT, one across chunks used up an id), so an
    # ingest validated in two processes (another chunk boundary at the cut) stored other ids.
    from lessons.ingest.report import ImportReport

    host = Host.objects.create(name="h")
    kind = correction_rows(text_at=1)

    def write(*keys: str) -> list:
        return writer.insert_new_rows(
            report=ImportReport(), kind=kind, items=[(host.id, k, (host.id, k)) for k in keys]
        )

    write("k1", "k2")
    write("k1", "k2", "k1")  # every identity stored: nothing written
    write("k1", "k3", "k2", "k4")  # k3 and k4 new among stored ones
    write("k5")
    ids = list(Correction.objects.order_by("id").values_list("key", "id"))
    first = ids[0][1]
    assert ids == [("k1", first), ("k2", first + 1), ("k3", first + 2), ("k4", first + 3), ("k5", first + 4)]


@pytest.mark.django_db
def test_stored_identities_are_the_asked_pairs_stored_and_no_others():
    host, other = Host.objects.create(name="h"), Host.objects.create(name="o")
    kind = correction_rows(text_at=2)
    kind.table.insert(
        [kind.build((h.id, key, "t")) for h, key in [(host, "k1"), (other, "k2"), (host, "k3")]]
    )
    asked = {(host.id, "k1"), (host.id, "k2"), (other.id, "k1"), (other.id, "k2"), (host.id, "k9")}
    assert writer._stored_identities(kind, asked) == {(host.id, "k1"), (other.id, "k2")}
    # (host, k3) is stored but not asked; (host, k2) and (other, k1) pair an asked scope with an asked key.
    assert writer._stored_identities(kind, {(host.id, "k2"), (other.id, "k1")}) == set()
    assert writer._stored_identities(kind, set()) == set()
    first_id = Correction.objects.get(host=host, key="k1").id
    assert writer._stored_identities(kind, asked, up_to=first_id) == {(host.id, "k1")}
