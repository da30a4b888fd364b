"""An ingest validated in two processes writes what one process writes: the same rows (ids included), the
same report, on generated batches cut at every place, with the cut's partial chunk before the child's
chunks. spec: lessons/ingest/passes.py, "Validation"; interchange.md ("Identity and idempotence").
"""

from __future__ import annotations

import json

import pytest
from django.db import connection, transaction
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import lessons.ingest.passes as passes
from lessons.ingest import state
from lessons.ingest.passes import ingest_sources
from lessons.ingest.reading import file_source
from lessons.ingest.report import OUTCOMES
from lessons.models import Correction, Draft, Exposure, Lesson, Verdict
from tests import builders
from tests.lessons.ingest.test_slices import (
    everything_stored,
    ingest_records,
    lessons_with_statuses,
    reference_records,
)


def with_ids() -> tuple:
    """``everything_stored`` and the ids of the rows the ingest writes (on SQLite: a rolled-back
    PostgreSQL sequence keeps its values, so the second ingest's ids there are others anyway)."""

    def ids(model, *fields) -> list:
        if connection.vendor != "sqlite":
            return list(model.objects.order_by("pk").values_list(*fields))
        return list(model.objects.order_by("pk").values_list("pk", *fields))

    return (
        everything_stored(),
        ids(Lesson, "hash"),
        ids(Exposure, "key"),
        ids(Verdict, "key"),
        ids(Correction, "key"),
        ids(Draft, "ext_id"),
    )


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    stored=st.lists(lessons_with_statuses(), max_size=4),
    batch=st.lists(st.one_of(lessons_with_statuses(), reference_records()), min_size=1, max_size=16),
    skip_invalid=st.booleans(),
    dry_run=st.booleans(),
)
def test_two_processes_write_what_one_writes(
    db, monkeypatch, tmp_path_factory, stored, batch, skip_invalid, dry_run
):
    monkeypatch.setattr(state, "CHUNK", 3)
    monkeypatch.setattr(passes, "PARALLEL_BYTES", 0)
    path = tmp_path_factory.mktemp("b") / "batch.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in batch))
    note(f"stored={stored!r} batch={batch!r}")
    with transaction.atomic():
        ingest_records([builders.host(name="h1"), *stored], skip_invalid=True)
        with transaction.atomic():
            one = ingest_sources(
                sources=[file_source(str(path))], skip_invalid=skip_invalid, dry_run=dry_run, workers=1
            )
            expected = with_ids()
            transaction.set_rollback(True)
        two = ingest_sources(
            sources=[file_source(str(path))], skip_invalid=skip_invalid, dry_run=dry_run, workers=2
        )
        assert two.as_dict() == one.as_dict()
        assert with_ids() == expected
        transaction.set_rollback(True)


def test_a_repeat_across_the_cut_gets_the_ids_one_process_gives(db, monkeypatch, tmp_path):
    # One process spools the verdicts [V, V, W] as one chunk of 3 (the repeat dropped before the INSERT);
    # cut before the second V, they are the chunks [V] and [V, W]: the repeat is a stored identity there.
    # Before, SQLite's AUTOINCREMENT counted it skipped, so W got another id.
    monkeypatch.setattr(state, "CHUNK", 3)
    monkeypatch.setattr(passes, "PARALLEL_BYTES", 0)
    lesson = builders.lesson(host="h1", namespace="ns", subject="s", text="Rule.", created_at=1, hashed=True)
    verdict = {"type": "verdict", "host": "h1", "verdict": "held", "measured_at": 5, "lesson": lesson["hash"]}
    lines = [
        json.dumps(builders.host(name="h1")),
        json.dumps(lesson),
        json.dumps(verdict) + " " * 400,  # the middle falls in this line
        json.dumps(verdict),
        json.dumps({**verdict, "measured_at": 6}),
    ]
    path = tmp_path / "b.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    assert passes._split_at(file_source(str(path)))[1] == 4
    one, expected = ingested_in_one_process(path)
    two = ingest_sources(sources=[file_source(str(path))], workers=2)
    assert two.as_dict() == one.as_dict()
    assert one.as_dict()["counts"]["verdict"] == {**dict.fromkeys(OUTCOMES, 0), "created": 2, "unchanged": 1}
    assert with_ids() == expected


def ingested_in_one_process(path) -> tuple:
    """The report and stored rows (``with_ids``) of ingesting ``path`` with ``workers=1``, rolled back."""
    with transaction.atomic():
        report = ingest_sources(sources=[file_source(str(path))], workers=1)
        stored = with_ids()
        transaction.set_rollback(True)
    return report, stored


RULE_ZERO = {
    "type": "lesson",
    "host": "h1",
    "namespace": "ns",
    "subject": "s0",
    "text": "Rule zero.",
    "created_at": 1,
}
RULE_ONE = {**RULE_ZERO, "text": "Rule one."}


@pytest.mark.parametrize(
    "batch",
    [
        # A lesson with an id, then the same lesson without: counted otherwise in one chunk than in two.
        [{**RULE_ZERO, "store": "st", "lesson_id": "L-1"}, RULE_ZERO],
        # The same content on two hosts, then another lesson: the lessons' ids follow the chunks.
        [RULE_ONE, {**RULE_ONE, "host": "h2"}, RULE_ZERO],
    ],
    ids=["lesson-id-dropped", "same-content-two-hosts"],
)
def test_the_cut_is_no_chunk_boundary_of_the_write_phase(db, monkeypatch, tmp_path, batch):
    # The write phase's outcome can depend on which records share a chunk; before, the records of the
    # parent's part and the child's were never in one chunk, so cut between them the batch was written
    # and reported as one process does not.
    monkeypatch.setattr(passes, "PARALLEL_BYTES", 0)
    lines = [json.dumps(builders.host(name="h1")), *map(json.dumps, batch)]
    lines[1] += " " * 400  # the middle falls in the first lesson's line: the cut is before the second
    path = tmp_path / "b.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    assert passes._split_at(file_source(str(path)))[1] == 3
    one, expected = ingested_in_one_process(path)
    two = ingest_sources(sources=[file_source(str(path))], workers=2)
    assert two.as_dict() == one.as_dict()
    assert with_ids() == expected
