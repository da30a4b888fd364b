"""A large batch's exposures and corrections indexed once they are in (``writer.indexes_built_after``,
SQLite): the same rows and ids as row by row, the indexes made again as they were, and left to the rollback
when the batch is refused or fails. spec: lessons/ingest/writer.py; interchange.md ("A batch is atomic").
"""

from __future__ import annotations

import json

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

import lessons.ingest.passes as passes
from lessons.ingest.passes import ingest_sources
from lessons.ingest.reading import file_source
from lessons.models import Correction, Exposure
from tests import builders
from tests.lessons.ingest.test_slices import everything_stored
from tests.lessons.ingest.test_validate_in_two_writes import with_ids
from tests.lessons.recurrence.test_attribution_worker import batch

sqlite_only = pytest.mark.skipif(connection.vendor != "sqlite", reason="only SQLite drops indexes in a batch")


def indexes() -> list[tuple[str, str]]:
    """The exposures' and corrections' indexes as SQLite keeps them: (name, CREATE text)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN (%s, %s) ORDER BY name",
            [Exposure._meta.db_table, Correction._meta.db_table],
        )
        return cursor.fetchall()


def ingest(tmp_path, records, **options):
    """Ingest ``records`` from a file; returns the report and the SQL statements it ran."""
    path = tmp_path / "batch.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    with CaptureQueriesContext(connection) as queries:
        report = ingest_sources(sources=[file_source(str(path))], **options)
    return report, [q["sql"] for q in queries]


def drops(statements: list[str]) -> list[str]:
    return [sql for sql in statements if sql.startswith("DROP INDEX")]


@pytest.mark.parametrize("seed", [1, 2])
def test_a_batch_indexed_after_its_rows_stores_what_row_by_row_stores(db, tmp_path, monkeypatch, seed):
    with transaction.atomic():
        one, statements = ingest(tmp_path, batch(seed))
        assert drops(statements) == []
        expected = (everything_stored(), with_ids())
        transaction.set_rollback(True)
    monkeypatch.setattr(passes, "INDEX_AFTER_ROWS", 0)
    after, statements = ingest(tmp_path, batch(seed))
    assert after.as_dict() == one.as_dict()
    assert (everything_stored(), with_ids()) == expected
    if connection.vendor == "sqlite":
        expected_drops = [
            'DROP INDEX "exposure_lesson_key"',
            'DROP INDEX "exposure_session"',
            'DROP INDEX "correction_newest"',
            'DROP INDEX "correction_session"',
        ]
        assert drops(statements) == expected_drops


@sqlite_only
def test_the_indexes_are_made_again_as_they_were(db, tmp_path, monkeypatch):
    before = indexes()
    monkeypatch.setattr(passes, "INDEX_AFTER_ROWS", 0)
    report, statements = ingest(tmp_path, batch(3))
    assert report.written and len(drops(statements)) == 4
    assert indexes() == before
    assert [name for name, _sql in before] == [
        "correction_newest",
        "correction_session",
        "exposure_lesson_key",
        "exposure_session",
        "sqlite_autoindex_lessons_correction_1",
        "sqlite_autoindex_lessons_exposure_1",
    ]


@sqlite_only
def test_a_batch_refused_in_the_write_phase_keeps_the_indexes_and_writes_nothing(db, tmp_path, monkeypatch):
    before = indexes()
    monkeypatch.setattr(passes, "INDEX_AFTER_ROWS", 0)
    nowhere = builders.exposure(
        host="h1", session="s9", shown_at="2026-03-02T10:00:00Z", store="st", lesson_id="none"
    )
    report, statements = ingest(tmp_path, [*batch(3), nowhere])
    assert not report.written and report.error_count == 1
    assert len(drops(statements)) == 4  # dropped in the write phase, which found the error
    assert indexes() == before
    assert (Exposure.objects.count(), Correction.objects.count()) == (0, 0)


@sqlite_only
def test_a_write_phase_that_fails_leaves_the_indexes_to_the_rollback(db, tmp_path, monkeypatch):
    before = indexes()
    monkeypatch.setattr(passes, "INDEX_AFTER_ROWS", 0)
    references = passes._pass_references

    def fails_after_the_rows(*args, **kwargs):
        references(*args, **kwargs)
        raise RuntimeError("disk full")

    monkeypatch.setattr(passes, "_pass_references", fails_after_the_rows)
    with pytest.raises(RuntimeError, match="disk full"):
        ingest(tmp_path, batch(3))
    assert indexes() == before
    assert (Exposure.objects.count(), Correction.objects.count()) == (0, 0)


@sqlite_only
def test_a_table_the_batch_would_not_double_keeps_its_indexes(db, tmp_path, monkeypatch):
    ingest(tmp_path, batch(3))
    stored = Exposure.objects.count()
    monkeypatch.setattr(passes, "INDEX_AFTER_ROWS", 0)
    later = [
        builders.exposure(
            host="h1", session=f"later{n}", shown_at="2026-03-03T10:00:00Z", store="st", lesson_id="L1"
        )
        for n in range(stored - 1)
    ]
    report, statements = ingest(tmp_path, later)
    assert report.written and report.counts["exposure"]["created"] == stored - 1
    # Corrections: none in the batch, more than none stored either, but fewer than its 'stored - 1' records.
    assert drops(statements) == ['DROP INDEX "correction_newest"', 'DROP INDEX "correction_session"']


@sqlite_only
def test_a_dry_run_drops_nothing(db, tmp_path, monkeypatch):
    monkeypatch.setattr(passes, "INDEX_AFTER_ROWS", 0)
    report, statements = ingest(tmp_path, batch(3), dry_run=True)
    assert report.dry_run and drops(statements) == []
