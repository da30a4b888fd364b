"""A second writer of an altimate learn store that keeps altimate's learn lock, as altimate's own writers do:
``python -m tests.engines.altimate_writer STORE_DIR LESSON_ID``.

It watches the store (inotify) and, as soon as another process has read ``approved.json``, takes the
learn lock (the folder ``<learn>/<sha1("learn-state")>.lock/`` made with mkdir, its ``meta.json`` and
``heartbeat``; while another holds it, it tries again, as altimate's Flock does), adds lesson
``LESSON_ID`` to ``approved.json`` in altimate's canonical JSON through a temporary file renamed into
place, and lets the lock go. That is the moment of issue 21, item 1: a lesson added between another
writer's read and its write. It prints ``ready`` once it watches, then one JSON line:
``{"added": LESSON_ID, "waited": true when the lock was held by another}`` (``added`` null when nobody
read the store within a minute).
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import secrets
import select
import socket
import struct
import sys
import time
from pathlib import Path

from lessons.importers.altimate_lesson import canonical

IN_CLOSE_NOWRITE = 0x10
LOCK_NAME = hashlib.sha1(b"learn-state").hexdigest() + ".lock"
WATCH_S = 60
AT = "2026-10-06T09:00:01.000Z"


def wait_for_a_read(store: Path) -> bool:
    """Block until a process closes ``store/approved.json`` after reading it; False after ``WATCH_S``."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_CLOEXEC)
    if fd < 0 or libc.inotify_add_watch(fd, str(store).encode(), IN_CLOSE_NOWRITE) < 0:
        raise OSError(ctypes.get_errno(), "inotify")
    print("ready", flush=True)
    deadline = time.monotonic() + WATCH_S
    try:
        while (left := deadline - time.monotonic()) > 0:
            if not select.select([fd], [], [], left)[0]:
                return False
            data = os.read(fd, 65536)
            while data:
                _wd, _mask, _cookie, size = struct.unpack_from("iIII", data)
                name = data[16 : 16 + size].split(b"\0", 1)[0]
                data = data[16 + size :]
                if name == b"approved.json":
                    return True
        return False
    finally:
        os.close(fd)


def add_under_the_lock(store: Path, lesson_id: str) -> bool:
    """Add the lesson under the learn lock; returns whether another held the lock first."""
    lock = store.parent / LOCK_NAME
    waited = False
    while True:
        try:
            lock.mkdir(mode=0o700)
            break
        except FileExistsError:
            waited = True
            time.sleep(0.005)
    meta = {"token": secrets.token_hex(16), "pid": os.getpid(), "hostname": socket.gethostname()}
    (lock / "meta.json").write_text(json.dumps(meta, indent=2))
    (lock / "heartbeat").touch()
    try:
        path = store / "approved.json"
        lessons = json.loads(path.read_text())
        text = "Name every staging model with the `stg_` prefix and its source."
        lessons.append(
            {
                "applied": 0,
                "created": AT,
                "harmful": 0,
                "helpful": 0,
                "id": lesson_id,
                "scope": "project",
                "tags": [],
                "text": text,
                "updated": AT,
            }
        )
        tmp = path.with_name(f"approved.json.{os.getpid()}.{secrets.token_hex(6)}.tmp")
        tmp.write_text(canonical(lessons))
        os.replace(tmp, path)
    finally:
        for name in ("meta.json", "heartbeat"):
            (lock / name).unlink()
        lock.rmdir()
    return waited


def main() -> None:
    store, lesson_id = Path(sys.argv[1]), sys.argv[2]
    if not wait_for_a_read(store):
        print(json.dumps({"added": None, "waited": False}))
        return
    print(json.dumps({"added": lesson_id, "waited": add_under_the_lock(store, lesson_id)}))


if __name__ == "__main__":
    main()
