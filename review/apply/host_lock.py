"""One ``apply_decisions`` run per host at a time (issue 21, item 3; docs/engines/areev.md, "A second run").

Two runs that apply the same host's decisions at once each read the same decisions as not yet applied:
the second finds the first's changes in the engine, refuses them ("not a live lesson") and would
acknowledge them failed. So a run holds the host's ``ApplyLock`` row from before it reads the decisions
until its last acknowledgement. A second run waits for it (``wait_s`` seconds, saying so in one line
through ``on_wait``) and then reads what is still pending; past the wait it is refused with one line
(``ApplyBusy``).

A run that died leaves its row behind: on the same machine it is taken over as soon as its process is
gone; from elsewhere, once it has not been renewed for ``STALE_AFTER`` (a run renews after each
decision). A run whose lock was taken over stops before its next change (``HostLock.renew``).
"""

from __future__ import annotations

import os
import secrets
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from lessons.core.text import format_datetime
from review.models import ApplyLock

STALE_AFTER = timedelta(minutes=10)
POLL_SECONDS = 0.1
WAITING = "waiting: another apply_decisions run holds host {host} ({who}); this run goes on when it ends"
E_HELD = "another apply_decisions run holds host {host} ({who}); nothing applied; try again when it ends"
E_LOST = (
    "the apply lock of host {host} was taken over (this run was silent for over {minutes} minutes); "
    "stopped before the next decision"
)


class ApplyBusy(Exception):
    """Another run holds the host (past the wait), or took the lock over; ``str(exc)`` is one line."""


def _who(row: ApplyLock) -> str:
    return f"{row.engine}, pid {row.pid} on {row.machine}, since {format_datetime(row.acquired_at)}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _stale(row: ApplyLock, now: datetime) -> bool:
    if now - row.renewed_at > STALE_AFTER:
        return True
    return row.machine == socket.gethostname() and not _alive(row.pid)


@dataclass(frozen=True)
class HostLock:
    """A held host lock: ``host`` and this run's ``holder`` token."""

    host: str
    holder: str

    def renew(self) -> None:
        """Move ``renewed_at`` on; raises ``ApplyBusy`` (``E_LOST``) when another run took the lock over."""
        if not ApplyLock.objects.filter(host=self.host, holder=self.holder).update(renewed_at=timezone.now()):
            raise ApplyBusy(E_LOST.format(host=self.host, minutes=int(STALE_AFTER.total_seconds() // 60)))


def _try_take(host: str, engine: str, holder: str) -> tuple[bool, ApplyLock | None]:
    """Take the host's lock: ``(True, None)``, or ``(False, the row of the run that holds it)`` (``None``
    when that run let it go meanwhile)."""
    now = timezone.now()
    with transaction.atomic():
        row = ApplyLock.objects.select_for_update().filter(host=host).first()
        if row is not None:
            if not _stale(row, now):
                return False, row
            row.delete()
        fields = {"holder": holder, "engine": engine, "pid": os.getpid(), "machine": socket.gethostname()}
        try:
            with transaction.atomic():
                ApplyLock.objects.create(host=host, acquired_at=now, renewed_at=now, **fields)
        except IntegrityError:  # PostgreSQL: another run inserted it meanwhile
            return False, ApplyLock.objects.filter(host=host).first()
    return True, None


@contextmanager
def host_apply_lock(
    *, host: str, engine: str, wait_s: float, on_wait: Callable[[str], None] | None = None
) -> Iterator[HostLock]:
    """Hold host ``host``'s apply lock for the ``with`` block; ``engine`` (``areev``/``altimate``) is shown
    to a run that finds it held.

    Waits up to ``wait_s`` seconds for a run that holds it, calling ``on_wait`` once with ``WAITING``;
    then raises ``ApplyBusy`` (``E_HELD``). Released when the block ends, whatever happened in it.
    """
    holder = secrets.token_hex(16)
    deadline = time.monotonic() + wait_s
    said = False
    while True:
        taken, row = _try_take(host, engine, holder)
        if taken:
            break
        if row is None:
            continue
        if time.monotonic() >= deadline:
            raise ApplyBusy(E_HELD.format(host=host, who=_who(row)))
        if on_wait is not None and not said:
            on_wait(WAITING.format(host=host, who=_who(row)))
            said = True
        time.sleep(POLL_SECONDS)
    try:
        yield HostLock(host=host, holder=holder)
    finally:
        ApplyLock.objects.filter(host=host, holder=holder).delete()
