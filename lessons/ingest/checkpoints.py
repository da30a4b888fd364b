"""Named points of an ingest, where tests run another connection at exactly that point instead of
sleeping (lessons/ingest/passes.py; tests/lessons/ingest/test_locking.py replaces ``reached``)."""

from __future__ import annotations


def reached(name: str) -> None:
    """A named point of the ingest, a no-op: ``"validated"`` (validation done, no transaction open yet),
    ``"lessons read"`` (a chunk's stored lessons read, nothing of the chunk written yet), ``"lessons
    written"`` (the lessons pass done, the references pass not started). Concurrency tests replace it to
    run another connection at exactly that point instead of sleeping."""
