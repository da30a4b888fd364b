"""``release_freed_memory`` hands freed heap memory back (glibc), which keeps a 1,000,000-line ingest with its
96 MiB page cache under 300 MiB; ``collector_paused`` keeps the cyclic collector off while an ingest runs
(lessons/ingest/memory.py)."""

from __future__ import annotations

import gc

import pytest

from lessons.ingest import checkpoints, memory
from tests import builders


def resident_kib() -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise AssertionError("no VmRSS")


def test_freed_blocks_in_the_middle_of_the_heap_go_back_to_the_system():
    if memory._trim() is None:
        pytest.skip("not glibc: release_freed_memory does nothing here")
    # 4,000-byte blocks come from malloc's heap (SQLite's pages are such blocks). Every 64th stays alive, so
    # the freed ones lie between live blocks, where free() alone keeps them.
    blocks = [bytearray(4000) for _ in range(40_000)]  # about 160 MB
    kept = blocks[::64]
    del blocks
    memory.release_freed_memory()  # outside ``releasing``: nothing
    before = resident_kib()
    with memory.releasing():
        memory.release_freed_memory()
    after = resident_kib()
    assert len(kept) == 625
    assert before - after > 100_000  # KiB: most of the 155 MB freed


def test_the_collector_is_off_within_collector_paused_and_on_again_after():
    assert gc.isenabled()
    with memory.collector_paused():
        inside = gc.isenabled()
    assert (inside, gc.isenabled()) == (False, True)


def test_a_collector_that_was_off_stays_off_after_collector_paused():
    gc.disable()
    try:
        with memory.collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_collector_is_on_again_after_a_block_that_raised():
    with pytest.raises(ValueError), memory.collector_paused():
        raise ValueError("stop")
    assert gc.isenabled()


def test_ingest_runs_with_the_collector_paused_and_turns_it_on_after(ingest, monkeypatch):
    seen = []
    monkeypatch.setattr(checkpoints, "reached", lambda point: seen.append((point, gc.isenabled())))
    report = ingest([builders.lesson(host="h", namespace="ns", subject="s", text="A rule.", created_at=1000)])
    assert report.written
    assert seen == [("validated", False), ("lessons read", False), ("lessons written", False)]
    assert gc.isenabled()
