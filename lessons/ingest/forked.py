"""Run work in a forked child process and get the answers back through pipes.

For CPU-bound work on a second core: ``Forked`` runs one function (ingest's validation of the second half
of a large file), ``ForkedWorker`` answers one request after another (the recurrence refresh's
attribution of a host rebuilt whole, while this process reads the next chunk's rows). A child never
touches the database: it inherits this process's connection, so it leaves with ``os._exit`` (no
``atexit`` handler, no finalizer, no flush of this process's buffers), having written its answer.

Forking is for a process of its own with no other thread (``manage.py ingest``): a web or worker process
may run threads, which a fork does not take along. The callers decide (ingest's ``workers``).
"""

from __future__ import annotations

import contextlib
import marshal
import os
import pickle
import signal
import struct
from collections.abc import Callable
from typing import IO, Generic, TypeVar

T = TypeVar("T")
Q = TypeVar("Q")
A = TypeVar("A")


class ForkedFailed(Exception):
    """The child stopped without an answer (killed, out of memory) or raised; the message says which."""


def can_fork() -> bool:
    """Whether this platform forks (not Windows)."""
    return hasattr(os, "fork")


def _described(exc: BaseException) -> str:
    """``"Type: message"`` of ``exc``; the type alone when its message cannot be made."""
    try:
        return f"{type(exc).__name__}: {exc}"
    except Exception:  # noqa: BLE001 - an exception whose str() fails is still a failure to report
        return type(exc).__name__


def _fork(child: Callable[[], int]) -> int:
    """Fork; the child runs ``child()`` and ends with the code it returns (1 whatever fails): it never
    returns into the caller's code. Returns the child's pid."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            code = child()
        finally:
            os._exit(code)
    return pid


class Forked(Generic[T]):
    """``fn()`` running in a forked child from construction on; ``result()`` waits for its return value
    (raises ``ForkedFailed``), ``cancel()`` kills it. Exactly one of the two must be called."""

    def __init__(self, fn: Callable[[], T]):
        read, write = os.pipe()

        def child() -> int:
            os.close(read)
            try:
                data, code = pickle.dumps((True, fn()), protocol=pickle.HIGHEST_PROTOCOL), 0
            except BaseException as exc:  # noqa: BLE001 - any failure goes back to the parent as text
                data, code = pickle.dumps((False, _described(exc))), 1
            with os.fdopen(write, "wb") as out:
                out.write(data)
            return code

        self._pid = _fork(child)
        os.close(write)
        self._read = read

    def result(self) -> T:
        """The child's return value, once it has ended; raises ``ForkedFailed`` when it has none (it was
        killed, even part-way through writing its answer, or it raised). Interrupted while waiting
        (``KeyboardInterrupt``), it kills and waits for the child before the interrupt goes on."""
        try:
            with os.fdopen(self._read, "rb") as answer:
                data = answer.read()
        except BaseException:
            self._kill()
            raise
        _pid, status = os.waitpid(self._pid, 0)
        if os.WIFSIGNALED(status):
            raise ForkedFailed(f"the child process was killed by signal {os.WTERMSIG(status)}")
        if not data:
            raise ForkedFailed(f"the child process ended without an answer (wait status {status})")
        try:
            ok, value = pickle.loads(data)
        except Exception as exc:  # noqa: BLE001 - a cut or unreadable answer is no answer
            raise ForkedFailed(f"the child process's answer is unreadable ({type(exc).__name__})") from None
        if not ok:
            raise ForkedFailed(f"the child process failed: {value}")
        return value

    def cancel(self) -> None:
        """Kill the child and wait for it (this process is failing or interrupted)."""
        os.close(self._read)
        self._kill()

    def _kill(self) -> None:
        try:
            os.kill(self._pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.waitpid(self._pid, 0)


_FRAME = struct.Struct("<Q")  # the byte length of the marshal data that follows


def _write_frame(out: IO[bytes], value: object) -> None:
    data = marshal.dumps(value)
    out.write(_FRAME.pack(len(data)))
    out.write(data)
    out.flush()


def _read_frame(source: IO[bytes]) -> tuple[bool, object]:
    """``(True, value)`` of the next frame; ``(False, None)`` at the end of the pipe, even part-way through
    a frame (its writer was killed while writing). Raises whatever reading a whole frame raises."""
    head = source.read(_FRAME.size)
    if len(head) < _FRAME.size:
        return False, None
    (size,) = _FRAME.unpack(head)
    data = source.read(size)
    if len(data) < size:
        return False, None
    return True, marshal.loads(data)


class ForkedWorker(Generic[Q, A]):
    """``handle(request)`` for each request sent, in a child forked at construction: ``send(request)``,
    then ``receive()`` its answer before the next ``send`` (one request in flight: a second one could fill
    the pipe while the child fills the other with its answer, and both would wait for ever). Between the
    two this process does its own work. ``close()`` ends the child; it must be called once whatever
    happened (``with`` does).

    ``send`` and ``receive`` raise ``ForkedFailed`` when the child is gone or ``handle`` raised (the child
    then ends); the worker is closed by then, ``alive`` is False, and the caller does the work itself.
    ``handle`` keeps whatever it likes between requests (it lives in the child). Requests and answers are
    plain data, what ``marshal`` writes (None, bools, numbers, strings, bytes, and tuples, lists, sets and
    dicts of them: twice as fast as pickling the rows of a refresh chunk), through two pipes."""

    def __init__(self, handle: Callable[[Q], A]):
        requests_read, requests_write = os.pipe()
        answers_read, answers_write = os.pipe()

        def child() -> int:
            os.close(requests_write)
            os.close(answers_read)
            return _serve(handle, requests_read, answers_write)

        self._pid = _fork(child)
        os.close(requests_read)
        os.close(answers_write)
        self._requests = os.fdopen(requests_write, "wb")
        self._answers = os.fdopen(answers_read, "rb")
        self._waiting = False
        self.alive = True

    def __enter__(self) -> ForkedWorker[Q, A]:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def send(self, request: Q) -> None:
        """Give the child ``request`` (the answer to the last one received first)."""
        if self._waiting:
            raise RuntimeError("ForkedWorker.send: the last request's answer was not received")
        self._check_alive()
        try:
            _write_frame(self._requests, request)
        except BrokenPipeError:
            self._fail("the child process ended before taking the request")
        self._waiting = True

    def receive(self) -> A:
        """The answer to the request sent last, once the child has it. Interrupted while waiting
        (``KeyboardInterrupt``), it ends the child before the interrupt goes on."""
        if not self._waiting:
            raise RuntimeError("ForkedWorker.receive: no request was sent")
        self._check_alive()
        try:
            whole, answer = _read_frame(self._answers)
        except Exception as exc:  # noqa: BLE001 - an unreadable answer is no answer
            self._fail(f"the child process's answer is unreadable ({type(exc).__name__})")
        except BaseException:
            self.close()
            raise
        self._waiting = False
        if not whole:
            self._fail("the child process ended without an answer")
        ok, value = answer
        if not ok:
            self._fail(f"the child process failed: {value}")
        return value

    def close(self) -> None:
        """End the child and wait for it (it holds nothing to finish: killed, not asked)."""
        if not self.alive:
            return
        self.alive = False
        for pipe in (self._requests, self._answers):
            with contextlib.suppress(OSError):  # a request cut by the child's end: nothing to flush to
                pipe.close()
        with contextlib.suppress(ProcessLookupError, ChildProcessError):  # already ended, already reaped
            os.kill(self._pid, signal.SIGKILL)
            os.waitpid(self._pid, 0)

    def _check_alive(self) -> None:
        if not self.alive:
            raise ForkedFailed("the child process was closed")

    def _fail(self, message: str) -> None:
        self.close()
        raise ForkedFailed(message)


def _serve(handle: Callable[[Q], A], requests_fd: int, answers_fd: int) -> int:
    """The child's loop: answer each request until the parent closes its end (0), or ``handle`` raises (1)."""
    with os.fdopen(requests_fd, "rb") as requests, os.fdopen(answers_fd, "wb") as answers:
        while True:
            whole, request = _read_frame(requests)
            if not whole:
                return 0
            try:
                answer = (True, handle(request))
            except BaseException as exc:  # noqa: BLE001 - any failure goes back to the parent as text
                _write_frame(answers, (False, _described(exc)))
                return 1
            _write_frame(answers, answer)
