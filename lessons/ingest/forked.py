"""Run a function in a forked child process and get its return value back, pickled through a pipe.

For CPU-bound work on a second core (ingest's validation of the second half of a large file). The child
never touches the database: it inherits this process's connection, so it leaves with ``os._exit`` (no
``atexit`` handler, no finalizer, no flush of this process's buffers), having written its answer.
"""

from __future__ import annotations

import os
import pickle
import signal
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


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


class Forked(Generic[T]):
    """``fn()`` running in a forked child from construction on; ``result()`` waits for its return value
    (raises ``ForkedFailed``), ``cancel()`` kills it. Exactly one of the two must be called."""

    def __init__(self, fn: Callable[[], T]):
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: whatever happens, it ends here, never returning into the caller's code
            code = 1
            try:
                os.close(read)
                try:
                    data, code = pickle.dumps((True, fn()), protocol=pickle.HIGHEST_PROTOCOL), 0
                except BaseException as exc:  # noqa: BLE001 - any failure goes back to the parent as text
                    data = pickle.dumps((False, _described(exc)))
                with os.fdopen(write, "wb") as out:
                    out.write(data)
            finally:
                os._exit(code)
        os.close(write)
        self._pid = pid
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
