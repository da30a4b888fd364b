"""``lessons.ingest.forked.Forked``: a child that ends without a whole answer or a parent interrupted while
waiting. spec: lessons/ingest/passes.py, "Validation" (a child that fails leaves its part to this process).
"""

from __future__ import annotations

import os
import signal
import time

import pytest

from lessons.ingest.forked import Forked, ForkedFailed


def reaped(pid: int) -> bool:
    """Whether ``pid`` (a child of this process) has been waited for: no zombie left."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return False


def test_a_child_killed_while_writing_its_answer_is_a_failure_not_a_truncated_pickle():
    # 1 MiB does not fit the pipe (64 KiB): the child blocks writing until the parent reads, and is
    # killed there, so the parent reads the start of a pickle only.
    child = Forked(lambda: b"x" * (1 << 20))
    time.sleep(0.3)
    os.kill(child._pid, signal.SIGKILL)
    with pytest.raises(ForkedFailed, match="signal 9"):
        child.result()
    assert reaped(child._pid)


def test_an_interrupt_while_waiting_for_the_answer_kills_and_reaps_the_child():
    def interrupt(_signum, _frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    try:
        child = Forked(lambda: time.sleep(30))
        signal.setitimer(signal.ITIMER_REAL, 0.2)
        started = time.monotonic()
        with pytest.raises(KeyboardInterrupt):
            child.result()
        assert time.monotonic() - started < 5
        assert reaped(child._pid)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_an_answer_and_a_raising_child():
    assert Forked(lambda: {"a": [1, 2]}).result() == {"a": [1, 2]}

    def fails():
        raise ValueError("no")

    with pytest.raises(ForkedFailed, match="ValueError: no"):
        Forked(fails).result()
