"""``release_freed_memory`` hands freed heap memory back (glibc), which keeps a 1,000,000-line ingest with its
96 MiB page cache under 300 MiB (lessons/ingest/memory.py)."""

from __future__ import annotations

import pytest

from lessons.ingest import memory


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
