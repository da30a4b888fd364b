"""The ingest spool gives back exactly the records it was given, of every type, in order and in chunks,
and can be read twice (a retried write phase reads it again). spec: interchange.md (the record types)."""

from __future__ import annotations

from lessons.core.interchange import parse_line
from lessons.ingest import state

H = "a" * 64
LINES = [
    '{"type": "host", "name": "h1", "max_active": 3, "budget_enabled": true, "description": "d"}',
    '{"type": "lesson", "host": "h1", "namespace": "", "subject": "s", "text": "Use `x`.", "created_at": 5,'
    ' "kind": "consolidation", "consolidates": ["' + H + '"], "confidence": 0.25, "helpful": 2,'
    ' "tags": ["t1", "t2"], "lesson_id": "L-1", "store": "st"}',
    '{"type": "verdict", "host": "h1", "lesson": "' + H + '", "verdict": "held", "metric": "m",'
    ' "baseline": 1.5, "current": -0.0, "horizon_ms": 9, "measured_at": "2026-01-02T03:04:05.678Z"}',
    '{"type": "verdict", "host": "h1", "store": "st", "lesson_id": "L-1", "verdict": "drifted", "measured_at": 1}',
    '{"type": "exposure", "host": "h1", "session": "s1", "store": "st", "lesson_id": "L-1", "shown_at": 7,'
    ' "text": "Use `x`  now.", "tier": ""}',
    '{"type": "exposure", "host": "h1", "session": "s1", "lesson": "' + H + '", "shown_at": 8}',
    '{"type": "correction", "host": "h1", "session": "s1", "kind": "user_correction", "text": "no, `x`",'
    ' "corrected_at": 9, "turn_started_at": 8, "id": "c1"}',
    '{"type": "draft", "host": "h1", "namespace": "n", "subject": "s", "text": "Merged.",'
    ' "supersedes": ["' + H + '"], "drafted_by": "model", "gates": {"ground": "pass", "verify": "fail"},'
    ' "created_at": 10, "confidence": 1.0}',
]


def test_every_record_type_comes_back_equal_and_of_its_type(monkeypatch):
    monkeypatch.setattr(state, "CHUNK", 3)
    records = [parse_line(line) for line in LINES]
    entries = [(0, number, number * 100, record) for number, record in enumerate(records, start=1)]
    spool = state.Spool()
    try:
        for entry in entries:
            spool.add(entry)
        for _attempt in range(2):
            chunks = list(spool.chunks())
            assert [len(chunk) for chunk in chunks] == [3, 3, 2]
            back = [entry for chunk in chunks for entry in chunk]
            assert back == entries
            assert [type(r) for *_rest, r in back] == [type(r) for r in records]
            assert [type(getattr(r, "lesson", None)) for *_rest, r in back] == [
                type(getattr(r, "lesson", None)) for r in records
            ]
    finally:
        spool.close()
    assert spool.count == len(LINES)
