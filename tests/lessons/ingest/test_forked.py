"""``lessons.ingest.forked.Forked`` and ``ForkedWorker``: a child that ends without a whole answer or a parent
interrupted while waiting. spec: lessons/ingest/passes.py, "Validation" (a child that fails leaves its part to
this process); lessons/recurrence/attributing.py (so does a worker).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from lessons.ingest.forked import Forked, ForkedFailed, ForkedWorker
from tests.scenarios import BASE_DIR


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


CHILD_ESCAPES = """
import os
from lessons.ingest.forked import Forked, ForkedFailed, ForkedWorker
from tests.scenarios import BASE_DIR

class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no text")

def fails():
    raise Unprintable()

parent = os.getpid()
try:
    child = Forked(fails)
except BaseException:
    print("the child came back into the caller" if os.getpid() != parent else "the parent raised", flush=True)
    os._exit(3)
try:
    child.result()
except ForkedFailed as exc:
    print(exc, flush=True)
"""


def test_a_child_whose_failure_cannot_be_described_still_ends_in_forked_and_reports_it():
    # Before: the failure's str() raised in the child's handler, outside any ``os._exit``, so the child
    # returned from Forked() into its caller's code (in ingest: up through the command, flushing this
    # process's buffers and closing its database connection at exit).
    done = subprocess.run(
        [sys.executable, "-c", CHILD_ESCAPES], cwd=BASE_DIR, capture_output=True, text=True, timeout=30
    )
    assert (done.returncode, done.stdout) == (0, "the child process failed: Unprintable\n")


class Doubler:
    """A handler that keeps state between requests (the worker's own): the requests seen so far."""

    def __init__(self):
        self.seen = 0

    def __call__(self, request: int) -> tuple[int, int]:
        self.seen += 1
        if request < 0:
            raise ValueError(f"negative: {request}")
        return request * 2, self.seen


def test_a_worker_answers_each_request_in_turn_keeping_its_state_and_ends_when_closed():
    with ForkedWorker(Doubler()) as worker:
        answers = []
        for request in (3, 5, 1 << 20):
            worker.send(request)
            answers.append(worker.receive())
        pid = worker._pid
    assert answers == [(6, 1), (10, 2), (1 << 21, 3)]
    assert not worker.alive
    assert reaped(pid)


def test_a_large_answer_passes_the_pipe_while_the_parent_sends_nothing():
    with ForkedWorker(lambda n: b"x" * n) as worker:
        worker.send(1 << 20)  # 1 MiB: sixteen times the pipe
        assert len(worker.receive()) == 1 << 20


def test_a_raising_handler_is_a_failure_and_the_worker_is_closed():
    worker = ForkedWorker(Doubler())
    worker.send(-1)
    with pytest.raises(ForkedFailed, match="ValueError: negative: -1"):
        worker.receive()
    assert not worker.alive
    assert reaped(worker._pid)
    with pytest.raises(ForkedFailed, match="closed"):
        worker.send(2)


def test_a_worker_killed_while_answering_is_a_failure_not_a_cut_answer():
    worker = ForkedWorker(lambda n: b"x" * n)
    worker.send(1 << 20)
    time.sleep(0.3)  # the child is blocked writing an answer 16 times the pipe
    os.kill(worker._pid, signal.SIGKILL)
    with pytest.raises(ForkedFailed, match="ended without an answer"):
        worker.receive()
    assert reaped(worker._pid)


def test_a_request_to_a_worker_that_is_gone_is_a_failure():
    worker = ForkedWorker(Doubler())
    os.kill(worker._pid, signal.SIGKILL)
    os.waitpid(worker._pid, 0)
    with pytest.raises(ForkedFailed):
        worker.send(1 << 20)  # a pickle larger than the pipe: the write finds no reader
        worker.receive()
    assert not worker.alive


def test_a_second_request_before_the_first_answer_is_refused():
    # Both sides could wait for ever: this process writing a request, the child writing its answer.
    with ForkedWorker(Doubler()) as worker:
        worker.send(1)
        with pytest.raises(RuntimeError, match="not received"):
            worker.send(2)
        assert worker.receive() == (2, 1)
