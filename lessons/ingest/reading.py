"""Streaming line sources for ingest: files, stdin, in-memory bytes. docs/interchange.md, "Framing".

A source can be opened more than once (ingest reads in passes), so standard input is spooled to a
temporary file first; nothing holds a whole input in memory.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

BOM = b"\xef\xbb\xbf"
# No record's line is longer (a lesson's text is at most 100,000 characters, 6 bytes each when escaped
# as \uXXXX): a longer line is refused without being read into memory whole (docs/interchange.md).
MAX_LINE_BYTES = 1 << 20
# The text ``iter_lines`` gives for such a line (compare with ``is``).
LINE_TOO_LONG = "\x00line too long"


@dataclass(frozen=True)
class Source:
    """A named input: ``open()`` returns a fresh binary stream each time; ``size`` is in bytes (or None)."""

    name: str
    open: Callable[[], BinaryIO]
    size: int | None = None
    path: str | None = None  # a file on disk, which another process may open and read a part of


def file_source(path: str) -> Source:
    """A source reading ``path``; raises ``OSError`` when it cannot be read."""
    with open(path, "rb"):
        pass
    return Source(name=path, open=lambda: open(path, "rb"), size=os.path.getsize(path), path=path)


def spooled_source(stream: BinaryIO, *, name: str = "<stdin>") -> Source:
    """Copy a one-shot stream (stdin, an upload) to a temporary file so it can be read in passes."""
    spool = tempfile.TemporaryFile()
    shutil.copyfileobj(stream, spool, length=1 << 20)
    size = spool.tell()

    def reopen() -> BinaryIO:
        spool.seek(0)
        return _Unclosable(spool)

    return Source(name=name, open=reopen, size=size)


def bytes_source(data: bytes, *, name: str = "<body>") -> Source:
    """A source over bytes already in memory (an HTTP body within the size limit, an importer's output)."""
    import io

    return Source(name=name, open=lambda: io.BytesIO(data), size=len(data))


def lines_source(lines: Iterable[str], *, name: str) -> Source:
    """A source from text lines (an importer's translated records), spooled to a temporary file."""
    spool = tempfile.TemporaryFile()
    for line in lines:
        spool.write(line.encode("utf-8"))
        spool.write(b"\n")
    size = spool.tell()

    def reopen() -> BinaryIO:
        spool.seek(0)
        return _Unclosable(spool)

    return Source(name=name, open=reopen, size=size)


class _Unclosable:
    """Lets a pass ``close()`` its stream while the spool stays open for the next pass."""

    def __init__(self, inner: BinaryIO):
        self._inner = inner

    def read(self, *args) -> bytes:
        return self._inner.read(*args)

    def readline(self, *args) -> bytes:
        return self._inner.readline(*args)

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


def iter_lines(source: Source) -> Iterator[tuple[int, str | None, int]]:
    """Yield ``(line_number, text, bytes_read)``; ``text`` is None for a line that is not valid UTF-8, and
    ``LINE_TOO_LONG`` for one longer than ``MAX_LINE_BYTES`` (never read whole into memory).

    Line numbers start at 1; ``\\n`` and ``\\r\\n`` ends are accepted; a leading BOM is ignored.
    """
    with source.open() as stream:
        yield from _lines(stream, first=1, stop=None)


def iter_lines_from(path: str, *, start: int, first: int) -> Iterator[tuple[int, str | None, int]]:
    """``iter_lines`` of the file ``path`` from byte ``start`` (the start of line number ``first``, > 1)
    to its end; ``bytes_read`` is the size of each line, as there."""
    with open(path, "rb") as stream:
        stream.seek(start)
        yield from _lines(stream, first=first, stop=None)


def iter_lines_until(source: Source, stop: int) -> Iterator[tuple[int, str | None, int]]:
    """``iter_lines`` of the lines of ``source`` that start before byte ``stop``."""
    with source.open() as stream:
        yield from _lines(stream, first=1, stop=stop)


def line_start_after(path: str, offset: int) -> tuple[int, int]:
    """``(start, number)``: the byte where the first line starting after ``offset`` begins, and its line
    number (one more than the line ends before it). ``start`` is the file's size when no line does."""
    with open(path, "rb") as stream:
        stream.seek(offset)
        stream.readline()
        start = stream.tell()
        stream.seek(0)
        ends, left = 0, start
        while left:
            block = stream.read(min(left, 1 << 24))
            ends += block.count(b"\n")
            left -= len(block)
    return start, ends + 1


def _lines(stream: BinaryIO, *, first: int, stop: int | None) -> Iterator[tuple[int, str | None, int]]:
    read = 0
    number = first
    while True:
        if stop is not None and read >= stop:
            return
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        size = len(raw)
        if size > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            # Longer than any record can be: skipped to its end a block at a time, never held whole.
            while raw and not raw.endswith(b"\n"):
                raw = stream.readline(MAX_LINE_BYTES)
                size += len(raw)
            read += size
            yield number, LINE_TOO_LONG, size
            number += 1
            continue
        read += size
        if number == first == 1 and raw.startswith(BOM):
            raw = raw[len(BOM) :]
        raw = raw.rstrip(b"\n").rstrip(b"\r")
        try:
            yield number, raw.decode("utf-8"), size
        except UnicodeDecodeError:
            yield number, None, size
        number += 1
