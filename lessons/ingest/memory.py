"""Hand freed heap memory back to the system (glibc's ``malloc_trim``; a no-op elsewhere).

Why (issue 10, Build 4: ingest of 1,000,000 lines in at most 300 MiB): SQLite's page cache is 96 MiB while
an ingest's rows go in (``passes._sqlite_page_cache``). Its dirty pages stay until they are written to the
WAL, which happens page by page as the recurrence refresh reads with the cache back at its usual size.
The freed pages stay in this process's heap, and Python's own allocator does not reuse them, so without a
trim the refresh's memory came on top of the whole cache. ``release_freed_memory`` before each chunk of
the refresh gives them back (measured at 1,000,000 lines: a peak of 276-280 MiB with the 96 MiB cache, 351
without the trim; 290 with the 32 MiB cache before).

``collector_paused``: an ingest makes millions of short-lived tuples and lists (records, rows, the
refresh's exposures) and no reference cycles worth collecting (about a hundred objects at 100,000 lines,
none of them the ingest's own); reference counting frees them. Python's cyclic collector still ran every
few hundred allocations and, as the heap grew, walked all of it again: 10 of 95 profiled seconds at
1,000,000 lines.
"""

from __future__ import annotations

import contextlib
import contextvars
import ctypes
import ctypes.util
import functools
import gc
from collections.abc import Callable, Iterator

_RELEASING = contextvars.ContextVar("releasing", default=False)


@functools.cache
def _trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        return ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing to call
        return None


@contextlib.contextmanager
def releasing(on: bool = True) -> Iterator[None]:
    """Within the block (with ``on``), ``release_freed_memory`` does its work: ingest's refresh after a
    write phase with the large page cache. Elsewhere (a reviewer's decision refreshing a few sessions)
    nothing is worth the walk of the heap."""
    token = _RELEASING.set(on)
    try:
        yield
    finally:
        _RELEASING.reset(token)


def release_freed_memory() -> None:
    """Within ``releasing``, return the heap memory freed so far to the system where the C library can
    (glibc); else nothing. Costs a walk of the heap's free lists (milliseconds), so it is called per
    chunk of work, not per row."""
    trim = _trim() if _RELEASING.get() else None
    if trim is not None:
        trim(0)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Within the block Python's cyclic garbage collector does not run (``gc.disable``); after it, it runs
    again if it did before. Reference counting still frees every object that is in no cycle: for a block
    that makes no cycles (an ingest, module docstring) memory is the same, only the collector's walks are
    saved. Process-wide: another thread's cycles wait for the block's end (nested blocks leave it off
    until the outermost ends)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
