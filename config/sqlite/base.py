"""Django's SQLite backend, plus reading on a full disk (issue 21, fault 11).

A WAL database needs its ``-wal`` and ``-shm`` files to open. The last connection to close removes them,
so the next connection creates them, and on a full disk it cannot: the connection's startup ``PRAGMA
journal_mode=WAL`` fails with "disk I/O error" (SQLITE_IOERR_SHMSIZE), and every page, sign-in and command
failed with a 500 or a traceback. This backend opens such a database **read-only** instead:

- when the startup fails with an SQLite I/O or "full" error, the database's filesystem has less than
  ``LOW_SPACE_BYTES`` free, and the ``-wal`` file is absent or empty (so the database file alone holds every
  commit), the connection is opened again with ``immutable=1``, which reads the file without the WAL files;
- on that connection a write fails with ``DISK_FULL_READ_ONLY`` (SQLite's own "database or disk is full"
  words), which ``lessons.services.disk.disk_full`` recognizes: pages and the API answer 503 with
  ``Retry-After``, commands say ``DISK_FULL`` in one line;
- when the database cannot be read that way (the ``-wal`` holds commits not yet in the file), the startup
  fails with ``DISK_FULL_UNREADABLE``, also a disk-full error.

A connection lasts one request or command (``CONN_MAX_AGE`` 0 on SQLite), so the next one after space is
freed opens normally. ``immutable=1`` tells SQLite that no one writes the file while it is open: true
while the disk is full, since no writer can open the database either. docs/production.md, "Disk full".
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from urllib.parse import quote

from django.db.backends.sqlite3 import base
from django.db.backends.sqlite3.base import Database

LOW_SPACE_BYTES = 1024 * 1024
DISK_FULL_READ_ONLY = "database or disk is full: the database is open read-only until space is freed"
DISK_FULL_UNREADABLE = "database or disk is full: the database cannot be opened until space is freed"
_STARTUP_ERRORS = ("SQLITE_IOERR", "SQLITE_FULL", "SQLITE_CANTOPEN")


def low_on_space(path: str | Path) -> bool:
    """Whether the filesystem holding ``path`` (a file or folder) has less than ``LOW_SPACE_BYTES`` free
    (for an unprivileged writer); False when it cannot be told."""
    try:
        return shutil.disk_usage(Path(path).resolve().parent).free < LOW_SPACE_BYTES
    except OSError:
        return False


def _wal_is_empty(path: str) -> bool:
    try:
        return os.stat(f"{path}-wal").st_size == 0
    except FileNotFoundError:
        return True
    except OSError:
        return False


class DiskFullCursor(base.SQLiteCursorWrapper):
    """The cursor of a connection opened read-only on a full disk: a write says the disk is full."""

    def execute(self, query, params=None):
        try:
            return super().execute(query, params)
        except Database.OperationalError as exc:
            raise _full(exc) from exc

    def executemany(self, query, param_list):
        try:
            return super().executemany(query, param_list)
        except Database.OperationalError as exc:
            raise _full(exc) from exc


def _full(exc: Database.OperationalError) -> Database.OperationalError:
    if getattr(exc, "sqlite_errorname", "").startswith("SQLITE_READONLY"):
        return Database.OperationalError(DISK_FULL_READ_ONLY)
    return exc


class DatabaseWrapper(base.DatabaseWrapper):
    """SQLite as Django has it, opened read-only when the disk is full (module docstring).

    ``read_only_disk_full`` is True while the current connection is such a read-only one.
    """

    read_only_disk_full = False

    def get_new_connection(self, conn_params):
        self.read_only_disk_full = False
        try:
            return super().get_new_connection(conn_params)
        except Database.OperationalError as exc:
            path = str(conn_params["database"])
            name = getattr(exc, "sqlite_errorname", "")
            if path.startswith("file:") or self.is_in_memory_db() or not name.startswith(_STARTUP_ERRORS):
                raise
            if not low_on_space(path):
                raise
            if not _wal_is_empty(path):
                raise Database.OperationalError(DISK_FULL_UNREADABLE) from exc
            conn = Database.connect(**{**conn_params, "database": f"file:{quote(path)}?immutable=1"})
            base.register_functions(conn)
            conn.execute("PRAGMA foreign_keys = ON")
            self.read_only_disk_full = True
            return conn

    def create_cursor(self, name=None):
        if self.read_only_disk_full:
            return self.connection.cursor(factory=DiskFullCursor)
        return super().create_cursor(name)
