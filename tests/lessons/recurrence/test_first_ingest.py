"""A host's first ingest attributed in the worker while its rows are written stores exactly what the
rebuild that reads the rows back stores: the same attribution rows (ids and order included on SQLite),
the same recurrence counts, the same entity counts, the same report; and where that path does not apply
(a host with rows before, a shown text stored) or its worker fails, the rebuild does it all. spec:
lessons/recurrence/first_ingest.py; docs/piles-and-recurrence.md, "Attributing one correction".
"""

from __future__ import annotations

import json
import os
import random

import pytest
from django.db import transaction

import lessons.ingest.passes as passes
import lessons.ingest.state as spooled
import lessons.recurrence.refresh as refresh
from lessons.core.recurrence import COUNT_FIELDS
from lessons.ingest.forked import ForkedWorker
from lessons.ingest.passes import ingest_sources
from lessons.ingest.reading import file_source
from lessons.models import EntityCount, RecurrenceCount
from lessons.recurrence import first_ingest
from tests import builders
from tests.lessons.recurrence.test_attribution_worker import stored as attributions_stored
from tests.spies import counted_calls

DAY = "2026-03-02"


def batch(seed: int, host: str = "h1", sessions: int = 60, shown_text: bool = False) -> list[dict]:
    """Lessons of ``host`` (some keys with a newer version, some lessons without a lesson_id), then the
    exposures and corrections of ``sessions`` sessions, shuffled so that most sessions' records lie in
    several chunks: corrections on one lesson's topic, on two (ambiguous), on none, of another kind, before
    the lesson was shown, at the same millisecond as another of the session, repeated lines (one row).
    With ``shown_text``, one exposure carries a text no version has."""
    rng = random.Random(seed)
    lessons: list[dict] = []
    for i in range(12):
        text = f"Use `col_{i}` with care in staging models rule {i}."
        common = {"host": host, "namespace": "ns", "subject": f"s{i % 3}", "store": "st"}
        if i == 11:  # no lesson_id: its key is its hash
            lessons.append(builders.lesson(text=text, created_at=1000 + i, **common))
            continue
        lessons.append(builders.lesson(text=text, created_at=1000 + i, lesson_id=f"L{i}", **common))
        if i % 4 == 0:  # a newer version: exposures of the older text are of an earlier version
            newer = f"Keep `col_{i}` out of staging models, rule {i}."
            lessons.append(builders.lesson(text=newer, created_at=5000 + i, lesson_id=f"L{i}", **common))
    references: list[dict] = []
    for s in range(sessions):
        session = f"ses_{s}"
        for n in range(rng.randint(0, 6)):
            i = rng.randrange(11)
            shown = builders.at(f"10:{n:02d}", day=DAY)
            references.append(
                builders.exposure(host=host, session=session, shown_at=shown, store="st", lesson_id=f"L{i}")
            )
        for c in range(rng.randint(0, 3)):
            i, j = rng.randrange(11), rng.randrange(11)
            text = rng.choice(
                [f"Use `col_{i}` in staging.", f"`col_{i}` and `col_{j}` in staging models, care.", "No."]
            )
            minute = rng.randint(0, 3) if c < 2 else 1  # some at the same millisecond as another
            references.append(
                builders.correction(
                    host=host,
                    session=session,
                    id=f"c{s}-{c}",
                    text=text,
                    kind="user_correction" if rng.random() < 0.85 else "tool_error",
                    corrected_at=builders.at(f"10:{minute:02d}:30", day=DAY),
                    turn_started_at=builders.at(f"10:{rng.randint(0, 3):02d}", day=DAY) if c % 2 else None,
                )
            )
    references += rng.sample(references, 5)  # repeated lines: the second of each is unchanged
    rng.shuffle(references)
    if shown_text:
        references.append(
            builders.exposure(
                host=host,
                session="ses_0",
                shown_at=builders.at("10:00", day=DAY),
                store="st",
                lesson_id="L1",
                text="Use `col_1` carefully, as once shown.",
            )
        )
    return [builders.host(name=host), *lessons, *references]


def stored() -> tuple:
    """Every derived row: the attributions as ``test_attribution_worker.stored`` reads them (ids and order
    on SQLite), every count of every version, every entity count."""
    rows, _counts = attributions_stored()
    counts = sorted(RecurrenceCount.objects.values_list("lesson__hash", *COUNT_FIELDS))
    # Every column but the ids (a host's id moves on PostgreSQL, as the sequences do).
    columns = [f.attname for f in EntityCount._meta.concrete_fields if f.attname not in _NOT_COMPARED]
    entities = sorted(EntityCount.objects.values_list(*columns))
    return rows, counts, entities


_NOT_COMPARED = {"id", "host_id"}


def ingested(path, workers: int) -> tuple:
    with transaction.atomic():
        report = ingest_sources(sources=[file_source(str(path))], workers=workers)
        rows = stored()
        transaction.set_rollback(True)
    return report.as_dict(), rows


def written(tmp_path, records: list[dict]):
    path = tmp_path / "b.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture
def small_batches(monkeypatch):
    """Any batch gets the worker and, where it applies, the first-ingest path; every host is rebuilt whole;
    chunks of 7 reference records, so that sessions end in many chunks; a file validated in two processes.
    Returns the list the spy fills: one item per call of ``read_signals`` (the rebuild reading back)."""
    monkeypatch.setattr(passes, "WORKER_RECORDS", 0)
    monkeypatch.setattr(passes, "FIRST_INGEST_RECORDS", 0)
    monkeypatch.setattr(passes, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(spooled, "CHUNK", 7)
    monkeypatch.setattr(refresh, "REBUILD_FLOOR", 1)
    monkeypatch.setattr(refresh, "WORKER_CHUNK", 5)
    return counted_calls(monkeypatch, refresh, "read_signals")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_first_ingest_attributed_while_written_stores_what_the_rebuild_stores(
    db, tmp_path, small_batches, seed
):
    path = written(tmp_path, batch(seed))
    general = ingested(path, workers=1)
    assert len(general[1][0]) > 40 and small_batches  # attributed, by reading the rows back
    assert any(row[2:5] for row in general[1][1])  # some version with counts
    del small_batches[:]
    assert ingested(path, workers=2) == general
    assert small_batches == []  # nothing read back: the worker attributed it all


def test_a_session_whose_records_are_in_both_halves_of_a_file_validated_in_two(db, tmp_path, small_batches):
    records = batch(4)
    # Every session's first record in the first half of the file, its last in the second.
    references = [r for r in records if r["type"] in ("exposure", "correction")]
    others = [r for r in records if r["type"] not in ("exposure", "correction")]
    firsts, rest, seen = [], [], set()
    for r in references:
        (rest if r["session"] in seen else firsts).append(r)
        seen.add(r["session"])
    path = written(tmp_path, [*others, *firsts, *rest])
    general = ingested(path, workers=1)
    del small_batches[:]
    assert ingested(path, workers=2) == general
    assert small_batches == []


def test_a_host_with_rows_before_is_attributed_by_the_rebuild(db, tmp_path, small_batches):
    records = batch(5)
    first = [r for r in records if r["type"] in ("host", "lesson") or r.get("session") == "ses_1"]
    with transaction.atomic():
        ingest_sources(sources=[file_source(str(written(tmp_path, first)))], workers=1)
        path = written(tmp_path, records)
        general = ingested(path, workers=1)
        del small_batches[:]
        assert ingested(path, workers=2) == general
        assert small_batches  # read back: the host had an exposure and corrections before
        transaction.set_rollback(True)


def test_a_stored_shown_text_leaves_the_host_to_the_rebuild(db, tmp_path, small_batches):
    path = written(tmp_path, batch(6, shown_text=True))
    general = ingested(path, workers=1)
    del small_batches[:]
    assert ingested(path, workers=2) == general
    assert small_batches


def test_two_hosts_one_first_ingest_one_rebuilt_with_the_same_worker(db, tmp_path, small_batches):
    records = batch(7, "h1") + batch(8, "h2")
    path = written(tmp_path, records)
    general = ingested(path, workers=1)
    del small_batches[:]
    assert ingested(path, workers=2) == general
    assert small_batches  # the second host: rebuilt by reading back, in the same worker


def test_a_worker_that_fails_part_way_leaves_the_host_to_the_rebuild(
    db, tmp_path, small_batches, monkeypatch
):
    path = written(tmp_path, batch(9))
    general = ingested(path, workers=1)
    parent = os.getpid()
    handle = first_ingest.FirstIngestWorker.__call__
    fed = []

    def fails_at_the_fifth_feed(self, request):
        if os.getpid() != parent and request[0] == "first-feed":
            fed.append(1)  # the child's own list
            if len(fed) == 5:
                raise MemoryError
        return handle(self, request)

    monkeypatch.setattr(first_ingest.FirstIngestWorker, "__call__", fails_at_the_fifth_feed)
    stores = counted_calls(monkeypatch, first_ingest.FirstIngest, "stored")
    del small_batches[:]
    assert ingested(path, workers=2) == general
    assert small_batches and not stores  # the rebuild read it all back; nothing was taken from the worker


def test_a_worker_killed_while_its_rows_are_stored_leaves_no_row_of_it(
    db, tmp_path, small_batches, monkeypatch
):
    path = written(tmp_path, batch(10))
    general = ingested(path, workers=1)
    receive = ForkedWorker.receive
    answers = []

    def killed_after_the_first_rows(self):
        answer = receive(self)
        if isinstance(answer, list) and answer and len(answer[0]) == 5:  # a batch of attribution rows
            answers.append(answer)
            self.close()
        return answer

    monkeypatch.setattr(first_ingest, "ROWS_BATCH", 10)
    monkeypatch.setattr(ForkedWorker, "receive", killed_after_the_first_rows)
    del small_batches[:]
    assert ingested(path, workers=2) == general
    assert len(answers) == 1 and small_batches  # ten rows stored, deleted again, the rebuild did it all
