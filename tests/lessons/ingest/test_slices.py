"""Sliced writes (issue 13: SQLite background jobs commit their write phase in slices) and the check that
runs before them, reading only, so that a refused batch still writes nothing.
spec: interchange.md ("Identity and idempotence"); lessons/ingest/passes.py, "Slices".
"""

from __future__ import annotations

import json

import pytest
from django.db import connection, transaction
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

import lessons.ingest.passes as passes
from lessons.core.text import lesson_hash
from lessons.ingest import checkpoints, state
from lessons.ingest.passes import IngestIncomplete, _pass_validate
from lessons.ingest.precheck import precheck
from lessons.ingest.reading import bytes_source
from lessons.ingest.report import ImportReport
from lessons.ingest.state import IngestState
from lessons.models import (
    Correction,
    CorrectionAttribution,
    Draft,
    EntityCount,
    Exposure,
    Host,
    HostCount,
    Lesson,
    RecurrenceCount,
    Verdict,
)
from lessons.services.entity_counts import entity_counts_check
from tests import builders
from tests.conftest import CORPORA, ingest_records

NS = "ns"
SUBJECTS = ("s0", "s1")
TEXTS = ("Rule zero.", "Rule one.", "Rule two.")
IDS = (None, "L-1", "L-2")
# A lesson of host h1 on ns/s0 in store ``st`` (its lesson_id given where used).
ZERO = {"host": "h1", "namespace": NS, "subject": "s0", "text": "Rule zero.", "created_at": 1, "store": "st"}
sqlite_only = pytest.mark.skipif(connection.vendor != "sqlite", reason="only SQLite writes in slices")


def content_hash(subject: str, text: str) -> str:
    return lesson_hash(NS, subject, text)


def verdict_by_id(lesson_id: str, *, at: int, host: str = "h1") -> dict:
    """A ``held`` verdict naming its lesson by store ``st`` and ``lesson_id``, measured at ``at`` (ms)."""
    return {
        "type": "verdict",
        "host": host,
        "store": "st",
        "lesson_id": lesson_id,
        "verdict": "held",
        "measured_at": at,
    }


def precheck_errors(records: list[dict]) -> list[str]:
    """The errors of validation plus ``precheck`` for ``records`` (nothing written)."""
    body = "\n".join(json.dumps(r) for r in records).encode()
    state = IngestState(
        report=ImportReport(), default_host=None, sources=[bytes_source(body, name="batch.jsonl")]
    )
    try:
        _pass_validate(state, None)
        precheck(state)
    finally:
        state.lessons.close()
        state.references.close()
    return [str(e) for e in state.report.errors]


# --- generated batches: the check finds exactly the write phase's refusals ------------------------

hosts = st.sampled_from(("h1", "h2"))  # h1 is stored; h2 only when the batch creates it
subjects = st.sampled_from(SUBJECTS)
texts = st.sampled_from(TEXTS)
hashes = st.builds(content_hash, subjects, texts)


@st.composite
def lesson_records(draw) -> dict:
    subject, text = draw(subjects), draw(texts)
    record = builders.lesson(
        host=draw(hosts), namespace=NS, subject=subject, text=text, created_at=draw(st.integers(1, 9))
    )
    if draw(st.booleans()):  # a given hash, sometimes of other content
        record["hash"] = draw(hashes)
    lesson_id = draw(st.sampled_from(IDS))
    if lesson_id is not None:
        record.update(store="st", lesson_id=lesson_id)
    return record


@st.composite
def refs(draw) -> dict:
    if draw(st.booleans()):
        return {"lesson": draw(hashes)}
    return {"store": draw(st.sampled_from(("st", "other"))), "lesson_id": draw(st.sampled_from(IDS[1:]))}


@st.composite
def reference_records(draw) -> dict:
    host = draw(hosts)
    kind = draw(st.sampled_from(("verdict", "exposure", "correction", "draft")))
    if kind == "verdict":
        return {
            "type": "verdict",
            "host": host,
            "verdict": "held",
            "measured_at": draw(st.integers(1, 9)),
            **draw(refs()),
        }
    if kind == "exposure":
        return builders.exposure(
            host=host, session=draw(st.sampled_from("ab")), shown_at=draw(st.integers(1, 9)), **draw(refs())
        )
    if kind == "correction":
        return builders.correction(
            host=host,
            session="a",
            id=str(draw(st.integers(1, 3))),
            text="No.",
            corrected_at="2026-01-01T00:00:00Z",
        )
    return {
        "type": "draft",
        "host": host,
        "id": f"d{draw(st.integers(1, 3))}",
        "namespace": NS,
        "subject": draw(subjects),
        "text": "Merged.",
        "supersedes": draw(st.lists(hashes, min_size=1, max_size=2, unique=True)),
        "drafted_by": "llm:x",
        "gates": {"ground": "pass", "verify": "pass"},
        "created_at": 5,
    }


batches = st.lists(st.one_of(lesson_records(), reference_records()), min_size=1, max_size=14)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stored=st.lists(lesson_records(), max_size=5), batch=batches)
def test_the_check_finds_exactly_the_refusals_of_the_write_phase(db, monkeypatch, stored, batch):
    monkeypatch.setattr(state, "CHUNK", 3)  # several chunks: refusals against what earlier chunks wrote
    with transaction.atomic():
        ingest_records([builders.host(name="h1"), *stored], skip_invalid=True)
        written = ingest_records(batch, dry_run=True)  # the write phase itself, rolled back
        note(f"stored={stored!r}\nbatch={batch!r}")
        assert precheck_errors(batch) == [str(e) for e in written.errors]
        transaction.set_rollback(True)


def test_the_check_names_each_kind_of_refusal_with_its_line_and_field(ingest):
    ingest([builders.lesson(host="h1", namespace=NS, subject="s0", text="Rule zero.", created_at=1)])
    other = content_hash("s1", "Rule one.")
    batch = [
        builders.lesson(
            host="h1", namespace=NS, subject="s1", text="Rule one.", created_at=2, store="st", lesson_id="L-1"
        ),
        # line 2: the hash of the stored s0 lesson, given to other content
        {
            **builders.lesson(host="h1", namespace=NS, subject="s1", text="Rule two.", created_at=3),
            "hash": content_hash("s0", "Rule zero."),
        },
        verdict_by_id("L-1", at=5, host="h1"),
        verdict_by_id("L-9", at=5, host="h1"),
        builders.exposure(host="h2", session="a", shown_at=5, lesson=other),
        {
            "type": "draft",
            "host": "h1",
            "id": "d1",
            "namespace": NS,
            "subject": "s1",
            "text": "Merged.",
            "supersedes": [other, content_hash("s0", "Rule zero.")],
            "drafted_by": "llm:x",
            "gates": {"ground": "pass", "verify": "pass"},
            "created_at": 5,
        },
    ]
    stored = content_hash("s0", "Rule zero.")
    assert precheck_errors(batch) == [
        f"batch.jsonl:2: lesson.hash: hash {stored[:8]}… on host h1 already names a lesson on ns/s0 with "
        "other content; a hash names one namespace, subject and text",
        "batch.jsonl:4: verdict.lesson: no lesson st/L-9 on host h1 in this batch or the database",
        f"batch.jsonl:5: exposure.lesson: no lesson {other} on host h2 in this batch or the database",
        f"batch.jsonl:6: draft.supersedes[1]: lesson {stored[:8]} is on entity ns/s0, not the draft's ns/s1",
    ]
    assert Lesson.objects.count() == 1  # the check wrote nothing


# --- the sliced write -------------------------------------------------------------------------------


def bulk(n: int, *, sessions: int = 0) -> list[dict]:
    """A host and ``n`` lessons on 10 entities; with ``sessions``, each lesson shown in one of them and
    every session corrected once."""
    records: list[dict] = [builders.host(name="bulk", max_active=3, budget_enabled=True)]
    for i in range(n):
        records.append(builders.numbered_lesson(i, namespace="bulk.ns", host="bulk", subject=f"s{i % 10}"))
    for i in range(n if sessions else 0):
        records.append(
            builders.exposure(
                host="bulk",
                session=f"c{i % sessions}",
                shown_at="2026-03-01T10:00:00Z",
                lesson=records[i + 1]["hash"],
            )
        )
    for s in range(sessions):
        records.append(
            builders.correction(
                host="bulk",
                session=f"c{s}",
                id="1",
                text="Lesson number field wrong.",
                corrected_at="2026-03-01T10:05:00Z",
            )
        )
    return records


def stored_rows() -> tuple:
    """Everything a batch writes, without ids and times of writing."""
    return (
        sorted(Lesson.objects.values_list("hash", "status", "namespace", "subject", "latest_verdict")),
        sorted(Exposure.objects.values_list("session", "lesson_key", "key")),
        sorted(Correction.objects.values_list("session", "ext_id", "key")),
        sorted(Verdict.objects.values_list("key", "verdict")),
        sorted(
            EntityCount.objects.values_list(
                "namespace", "subject", "live", "total", "overage", "recurring", "held", "pending_drafts"
            )
        ),
    )


@pytest.fixture
def slices(monkeypatch, settings):
    """Every chunk its own slice (the smallest chunk, no time threshold, no pause); returns the names of
    the checkpoints passed."""
    settings.INGEST_SLICE_MS = 0
    monkeypatch.setattr(state, "CHUNK", 4)
    monkeypatch.setattr(passes, "SLICE_PAUSE_SECONDS", 0)
    passed: list[str] = []
    monkeypatch.setattr(checkpoints, "reached", passed.append)
    return passed


@sqlite_only
def test_a_sliced_write_stores_what_one_transaction_stores(ingest, slices):
    records = bulk(10, sessions=3)
    with transaction.atomic():
        whole = ingest_records(records)
        expected = stored_rows()
        transaction.set_rollback(True)
    slices.clear()
    sliced = ingest_records(records, sliced=True)
    # 10 lessons and 13 references in chunks of 4 (3 + 4 chunks), then the 10 entities' counts (1 step)
    commits = [name for name in slices if name in ("slice committed", "rows written")]
    assert commits == ["slice committed"] * 7 + ["rows written", "slice committed"]
    assert stored_rows() == expected
    assert sliced.as_dict() == whole.as_dict()
    assert entity_counts_check() == []


@sqlite_only
def test_a_refused_batch_writes_nothing_when_sliced_and_reports_what_one_transaction_would(ingest, slices):
    ingest([builders.host(name="bulk"), builders.numbered_lesson(0, namespace="bulk.ns", host="bulk")])
    records = bulk(8)
    records[5]["hash"] = records[1]["hash"] = lesson_hash(
        "bulk.ns", "invoice_capture", "Lesson number 0 about invoice capture field 0."
    )
    before = stored_rows()
    one = ingest_records(records, dry_run=True)
    sliced = ingest_records(records, sliced=True)
    assert "slice committed" not in slices
    assert (sliced.written, stored_rows()) == (False, before)
    assert [str(e) for e in sliced.errors] == [str(e) for e in one.errors]
    assert [e.line for e in sliced.errors] == [2, 6]


@sqlite_only
def test_a_failure_after_a_slice_keeps_a_consistent_part_and_running_again_completes_it(
    ingest, slices, monkeypatch
):
    records = bulk(10, sessions=3)
    with transaction.atomic():
        ingest_records(records)
        expected = stored_rows()
        transaction.set_rollback(True)

    def disk_full_at_the_third_slice(name: str) -> None:
        slices.append(name)
        if slices.count("slice committed") == 3:
            raise OSError("No space left on device")

    monkeypatch.setattr(checkpoints, "reached", disk_full_at_the_third_slice)
    with pytest.raises(IngestIncomplete) as stopped:
        ingest_records(records, sliced=True)
    assert (stopped.value.slices, type(stopped.value.__cause__)) == (3, OSError)
    assert Lesson.objects.filter(host__name="bulk").count() == 10  # the lesson pass's 3 slices: 4 + 4 + 2
    assert Exposure.objects.count() == 0
    # the rows' recurrence is committed with them; their entity counts were to follow the rows
    lagging = {line.split(":")[0] for line in entity_counts_check()}
    assert sorted(lagging) == [*(f"host bulk entity bulk.ns/s{i}" for i in range(10)), "host bulk totals"]
    monkeypatch.setattr(checkpoints, "reached", slices.append)
    again = ingest_records(records, sliced=True)
    assert stored_rows() == expected
    assert again.counts["lesson"]["unchanged"] == 10 and again.counts["exposure"]["created"] == 10
    assert entity_counts_check() == []


def test_sliced_is_one_transaction_on_postgresql_and_for_a_dry_run(ingest, slices):
    report = ingest_records(bulk(6), sliced=True, dry_run=True)
    assert (report.written, Lesson.objects.count(), "slice committed" in slices) == (False, 0, False)
    report = ingest_records(bulk(6), sliced=True)
    assert report.written and Lesson.objects.count() == 6
    assert ("slice committed" in slices) is (connection.vendor == "sqlite")


def test_a_host_made_by_the_batch_is_found_by_the_check(ingest):
    assert Host.objects.count() == 0
    batch = [
        builders.lesson(
            host="new",
            namespace=NS,
            subject="s0",
            text="Rule zero.",
            created_at=1,
            store="st",
            lesson_id="L-1",
        ),
        verdict_by_id("L-1", at=5, host="new"),
        {
            "type": "verdict",
            "host": "new",
            "lesson": content_hash("s0", "Rule zero."),
            "verdict": "held",
            "measured_at": 6,
        },
    ]
    assert precheck_errors(batch) == []


def test_a_lesson_the_batch_gives_another_id_is_found_by_its_new_id_only(ingest):
    zero = ZERO
    ingest([builders.lesson(**zero, lesson_id="L-1")])
    batch = [
        builders.lesson(**zero, lesson_id="L-2"),
        verdict_by_id("L-1", at=5, host="h1"),
        verdict_by_id("L-2", at=6, host="h1"),
    ]
    expected = ["batch.jsonl:2: verdict.lesson: no lesson st/L-1 on host h1 in this batch or the database"]
    assert [str(e) for e in ingest_records(batch, dry_run=True).errors] == expected
    assert precheck_errors(batch) == expected


def test_a_lesson_whose_later_record_drops_its_id_is_not_found_by_it(ingest, monkeypatch):
    # Found by the generated batches: the check still knew the id from the lesson's first record.
    monkeypatch.setattr(state, "CHUNK", 1)
    one = {
        "host": "h1",
        "namespace": NS,
        "subject": "s1",
        "text": "Rule one.",
        "created_at": 1,
        "hashed": True,
    }
    batch = [
        builders.lesson(**one, store="st", lesson_id="L-2"),
        builders.lesson(**one),
        verdict_by_id("L-2", at=1),
    ]
    expected = ["batch.jsonl:3: verdict.lesson: no lesson st/L-2 on host h1 in this batch or the database"]
    assert [str(e) for e in ingest_records(batch, dry_run=True).errors] == expected
    assert precheck_errors(batch) == expected


@sqlite_only
def test_a_lesson_given_other_ids_by_a_later_chunk_is_found_by_those_only(ingest, slices):
    """The same lesson in two chunks with two ids: the write phase keeps the later ids, so a verdict naming
    the earlier is refused by the check too, and nothing of the batch is written."""
    zero = ZERO
    fillers = [
        builders.lesson(host="h1", namespace=NS, subject="s1", text=f"Filler {i}.", created_at=1)
        for i in range(3)
    ]
    batch = [
        builders.lesson(**zero, lesson_id="L-1"),
        *fillers,  # the first chunk of 4 ends here
        builders.lesson(**zero, lesson_id="L-2"),
        verdict_by_id("L-1", at=5),
    ]
    expected = ["batch.jsonl:6: verdict.lesson: no lesson st/L-1 on host h1 in this batch or the database"]
    assert [str(e) for e in ingest_records(batch, dry_run=True).errors] == expected
    assert precheck_errors(batch) == expected
    sliced = ingest_records(batch, sliced=True)
    assert ([str(e) for e in sliced.errors], sliced.written) == (expected, False)
    assert (Host.objects.count(), Lesson.objects.count(), "slice committed" in slices) == (0, 0, False)


@sqlite_only
def test_a_batch_of_corrections_stopped_before_its_counts_completes_them_when_run_again(
    ingest, slices, monkeypatch
):
    """Corrections whose sessions were shown lessons of earlier batches: the entities they make recurring
    are named by no lesson of the batch; a run after a stop between the rows and the counts refreshes
    them all the same (their sessions are attributed again)."""
    records = [json.loads(line) for line in (CORPORA / "warehouse-sql.jsonl").read_text().splitlines()]
    ingest([r for r in records if r["type"] != "correction"])
    corrections = [r for r in records if r["type"] == "correction"]

    def stopped_before_the_counts(name: str) -> None:
        if name == "rows written":
            raise OSError("No space left on device")

    monkeypatch.setattr(checkpoints, "reached", stopped_before_the_counts)
    with pytest.raises(IngestIncomplete):
        ingest_records(corrections, sliced=True)
    lagging = ["host warehouse-sql entity analytics/revenue_models: recurring is 0, recounted 1"]
    assert entity_counts_check() == lagging
    monkeypatch.setattr(checkpoints, "reached", slices.append)
    again = ingest_records(corrections, sliced=True)
    assert again.counts["correction"] == {
        "created": 0,
        "unchanged": 3,
        "updated": 0,
        "held": 0,
        "rejected": 0,
    }
    assert entity_counts_check() == []


@sqlite_only
def test_a_new_version_on_another_entity_stopped_before_its_counts_completes_them_when_run_again(
    ingest, slices, monkeypatch
):
    """A new version of L-0a07 on another entity becomes its key's current version, so the corrected
    sessions' attribution to L-0a07 becomes ``earlier_version`` and revenue_models has no recurring member
    left. That entity is named by no lesson of the batch; a run after a stop between the rows and the
    counts refreshes it all the same (the entities of every version of the batch's keys)."""
    records = [json.loads(line) for line in (CORPORA / "warehouse-sql.jsonl").read_text().splitlines()]
    ingest(records)
    assert EntityCount.objects.get(subject="revenue_models").recurring == 1
    version = builders.lesson(
        host="warehouse-sql",
        namespace="analytics",
        subject="cohorts",
        text="Cohorts start on the first paid order.",
        created_at="2026-03-01T00:00:00Z",
        store="team-playbook",
        lesson_id="L-0a07",
    )

    def stopped_before_the_counts(name: str) -> None:
        if name == "rows written":
            raise OSError("No space left on device")

    monkeypatch.setattr(checkpoints, "reached", stopped_before_the_counts)
    with pytest.raises(IngestIncomplete):
        ingest_records([version], sliced=True)
    monkeypatch.setattr(checkpoints, "reached", slices.append)
    again = ingest_records([version], sliced=True)
    assert again.counts["lesson"] == {"created": 0, "unchanged": 1, "updated": 0, "held": 0, "rejected": 0}
    assert entity_counts_check() == []
    assert EntityCount.objects.get(subject="revenue_models").recurring == 0


@st.composite
def lessons_with_statuses(draw) -> dict:
    record = draw(lesson_records())
    if draw(st.booleans()):
        record["status"] = draw(st.sampled_from(("live", "retracted", "superseded")))
    return record


def everything_stored() -> tuple:
    """``stored_rows`` and what recurrence and the counts derive, each row as text (None sorts too)."""

    def rows(model, *fields) -> list[str]:
        return sorted(map(repr, model.objects.values_list(*fields)))

    return (
        rows(Lesson, "host__name", "hash", "status", "latest_verdict", "store", "lesson_id", "superseded_by"),
        rows(Exposure, "session", "lesson_key", "key", "lesson__hash"),
        rows(Correction, "session", "ext_id", "key"),
        rows(Verdict, "key", "verdict", "lesson__hash"),
        rows(Draft, "ext_id", "namespace", "subject", "status", "supersedes"),
        rows(CorrectionAttribution, "session", "outcome", "lesson__hash"),
        rows(RecurrenceCount, "lesson__hash", "sessions_shown", "recurred", "ambiguous", "earlier_version"),
        rows(
            EntityCount, "host_name", "namespace", "subject", "live", "total", "recurring", "held", "groups"
        ),
        rows(HostCount, "host__name", "live_lessons", "entity_count", "pile_count"),
    )


@sqlite_only
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    stored=st.lists(lessons_with_statuses(), max_size=5),
    batch=st.lists(st.one_of(lessons_with_statuses(), reference_records()), min_size=1, max_size=14),
    skip_invalid=st.booleans(),
)
def test_a_sliced_write_stores_and_reports_what_one_transaction_does_on_generated_batches(
    db, monkeypatch, slices, stored, batch, skip_invalid
):
    monkeypatch.setattr(state, "CHUNK", 3)  # every chunk of 3 its own slice (the slices fixture: 4)
    with transaction.atomic():
        ingest_records([builders.host(name="h1"), *stored], skip_invalid=True)
        with transaction.atomic():
            whole = ingest_records(batch, skip_invalid=skip_invalid)
            expected = everything_stored()
            transaction.set_rollback(True)
        sliced = ingest_records(batch, skip_invalid=skip_invalid, sliced=True)
        assert everything_stored() == expected
        if whole.written:
            assert sliced.as_dict() == whole.as_dict()
        else:  # refused by the check: its errors only (the write phase also counted what it rolled back)
            assert (sliced.written, sliced.errors) == (False, whole.errors)
        assert entity_counts_check() == []
        transaction.set_rollback(True)
