"""Whether the attempt running an import job is alive: a lock its process holds while the job runs.

A ``heartbeat_at`` older than ``--stale-after`` only says that no progress was written lately: a live
attempt inside a long step (a large transaction, a recount of a big host, a progress write skipped because
the database was busy) looks the same as a dead one, and ``db_worker --stale-after 5`` queued live jobs
again (issue 21, "also seen"). So the process running a job holds a lock that the operating system or the
database releases when the process dies, and ``jobs_recover`` queues a job again only when its heartbeat
is stale *and* nobody holds its lock:

- PostgreSQL: a session-level advisory lock ``(LOCK_SPACE, job id)`` on the job's progress connection
  (its own connection, open for the whole run); a dead process's session ends and the lock with it,
  whichever machine it ran on.
- SQLite (one machine): an exclusive ``flock`` on ``job-<id>.lock`` in ``lock_folder()`` beside the
  database file; the kernel drops it when the process dies.

A holder that cannot take its lock (the folder not writable, say) runs the job anyway: it is then judged
by its heartbeat alone, as before. docs/production.md, "The background worker".
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

from django.db import DatabaseError, connection, connections

try:
    import fcntl
except ImportError:  # not POSIX: SQLite jobs are judged by their heartbeat alone
    fcntl = None

logger = logging.getLogger(__name__)

LOCK_SPACE = 2113  # the first key of the two-key advisory lock: "import job" (the second is its id)


def lock_folder() -> Path:
    """SQLite: the folder of the jobs' lock files, beside the database file (so the web server and the
    worker see the same one even with private temporary folders), or in the temporary folder for a
    database in memory."""
    name = str(connections["default"].settings_dict["NAME"])
    if name and name != ":memory:" and not name.startswith("file:"):
        return Path(name).resolve().parent / "job-locks"
    return Path(tempfile.gettempdir()) / f"lpr-job-locks-{hashlib.sha256(name.encode()).hexdigest()[:16]}"


class AliveMark:
    """The lock a running attempt of job ``job_id`` holds; ``hold(conn)`` takes it (PostgreSQL: on
    ``conn``, which must stay open for the run), ``release()`` lets it go. Never raises."""

    def __init__(self, job_id: int):
        self.job_id = job_id
        self._file: int | None = None
        self._path: Path | None = None
        self._conn = None

    def hold(self, conn) -> bool:
        """Take the lock; True when held."""
        try:
            if conn.vendor == "postgresql":
                with conn.cursor() as cursor:
                    cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [LOCK_SPACE, self.job_id])
                    held = bool(cursor.fetchone()[0])
                self._conn = conn if held else None
                return held
            if fcntl is None:
                return False
            folder = lock_folder()
            folder.mkdir(mode=0o700, exist_ok=True)
            self._path = folder / f"job-{self.job_id}.lock"
            self._file = os.open(self._path, os.O_RDWR | os.O_CREAT, 0o600)
            fcntl.flock(self._file, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except (OSError, DatabaseError) as exc:
            logger.warning("import job %s: no liveness lock (%s); judged by its heartbeat", self.job_id, exc)
            return False

    def release(self) -> None:
        """Let the lock go now (PostgreSQL: unlocked on its connection, since a closed connection's
        session ends a moment later; SQLite: the lock file removed and closed)."""
        if self._conn is not None:
            try:
                with self._conn.cursor() as cursor:
                    cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [LOCK_SPACE, self.job_id])
            except DatabaseError as exc:  # the connection is gone: so is its session's lock
                logger.debug("import job %s: unlock: %s", self.job_id, exc)
            self._conn = None
        if self._file is not None:
            if self._path is not None:
                self._path.unlink(missing_ok=True)
            os.close(self._file)
            self._file = None


def job_alive(job_id: int) -> bool:
    """Whether some process holds job ``job_id``'s lock now (its attempt is running). Uses the default
    connection (PostgreSQL: takes the lock and gives it back at once when it is free)."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s, %s)", [LOCK_SPACE, job_id])
            if not cursor.fetchone()[0]:
                return True
            cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [LOCK_SPACE, job_id])
            return False
    if fcntl is None:
        return False
    try:
        fd = os.open(lock_folder() / f"job-{job_id}.lock", os.O_RDWR)
    except FileNotFoundError:
        return False  # never held, or released
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing drops the lock this check may have taken
    return False
