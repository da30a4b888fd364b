"""Unpacking an uploaded zip of a learn folder safely. docs/importers.md (altimate-code).

Pure file handling, no ORM. A zip is refused, with a message naming the entry, when it is too big,
has too many entries, or has an entry that could write outside the target folder (an absolute
path, a ``..`` part, a drive letter) or is a symlink. Sizes are checked on the bytes actually
written, not only on the sizes the zip declares.
"""

from __future__ import annotations

import re
import stat
import zipfile
import zlib
from pathlib import Path, PurePosixPath
from typing import BinaryIO

MAX_ZIP_BYTES = 20 * 1024 * 1024
MAX_UNZIPPED_BYTES = 100 * 1024 * 1024
MAX_ENTRIES = 2000
_DRIVE = re.compile(r"^[A-Za-z]:")
_IGNORED_TOP = frozenset({"__MACOSX"})

ZIP_TOO_LARGE = "The zip is larger than 20 MB."
ZIP_NOT_A_ZIP = "The file is not a zip archive."
ZIP_DAMAGED = "The zip is damaged and cannot be read: {why}"
ZIP_TOO_MANY = "The zip has {count} entries; at most 2000 are accepted."
ZIP_UNZIPPED_TOO_LARGE = "The zip unpacks to more than 100 MB."
ZIP_UNSAFE_PATH = 'Refused: the zip entry "{name}" points outside the folder (absolute path or "..").'
ZIP_SYMLINK = 'Refused: the zip entry "{name}" is a symbolic link.'
ZIP_ENCRYPTED = 'Refused: the zip entry "{name}" is encrypted.'
ZIP_UNWRITABLE = 'Refused: the zip entry "{name}" cannot be unpacked ({why}).'


class ZipRefused(Exception):
    """The upload is not accepted; the message says why (one of the ``ZIP_*`` texts)."""


def _safe_parts(name: str) -> tuple[str, ...] | None:
    """The path parts of an entry name, or None when it could leave the target folder."""
    unified = name.replace("\\", "/")
    if "\x00" in unified or unified.startswith("/") or _DRIVE.match(unified):
        return None
    parts = tuple(p for p in PurePosixPath(unified).parts if p not in ("", "."))
    if any(p == ".." for p in parts):
        return None
    return parts


def _is_symlink(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


def extract_zip(stream: BinaryIO, size: int, dest: Path) -> None:
    """Check and unpack the zip in ``stream`` (``size`` bytes) into the empty folder ``dest``.

    Raises ``ZipRefused``. Every entry is checked before anything is written.
    """
    if size > MAX_ZIP_BYTES:
        raise ZipRefused(ZIP_TOO_LARGE)
    try:
        archive = zipfile.ZipFile(stream)
    except (zipfile.BadZipFile, OSError):
        raise ZipRefused(ZIP_NOT_A_ZIP) from None
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_ENTRIES:
            raise ZipRefused(ZIP_TOO_MANY.format(count=len(infos)))
        planned = []
        for info in infos:
            parts = _safe_parts(info.filename)
            if parts is None:
                raise ZipRefused(ZIP_UNSAFE_PATH.format(name=info.filename))
            if _is_symlink(info):
                raise ZipRefused(ZIP_SYMLINK.format(name=info.filename))
            if info.flag_bits & 0x1:
                raise ZipRefused(ZIP_ENCRYPTED.format(name=info.filename))
            planned.append((info, parts))
        if sum(info.file_size for info in infos) > MAX_UNZIPPED_BYTES:
            raise ZipRefused(ZIP_UNZIPPED_TOO_LARGE)
        written = 0
        root = dest.resolve()
        for info, parts in planned:
            if not parts:
                continue
            target = root.joinpath(*parts)
            try:
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(info) as src, open(target, "wb") as out:
                    while chunk := src.read(1 << 16):
                        written += len(chunk)
                        if written > MAX_UNZIPPED_BYTES:  # a zip that lies about its sizes
                            raise ZipRefused(ZIP_UNZIPPED_TOO_LARGE)
                        out.write(chunk)
            except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError) as exc:
                raise ZipRefused(ZIP_DAMAGED.format(why=exc)) from None
            except OSError as exc:  # a file and a folder of one name, a name too long for the file system
                raise ZipRefused(ZIP_UNWRITABLE.format(name=info.filename, why=exc.strerror or exc)) from None


def learn_root(folder: Path) -> Path:
    """Where the learn folder is in an unpacked zip: the folder itself, or its single top folder.

    A zip may hold a project root (``.altimate-code/learn/...``), the learn folder's contents, or
    either one inside one top-level folder (as "compress folder" tools make them).
    """
    for _depth in range(3):
        if (folder / ".altimate-code" / "learn").is_dir() or any(folder.glob("*/approved.json")):
            return folder
        entries = [p for p in folder.iterdir() if p.name not in _IGNORED_TOP]
        if len(entries) != 1 or not entries[0].is_dir():
            return folder
        folder = entries[0]
    return folder
