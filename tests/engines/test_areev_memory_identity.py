"""A memory file replaced at the same path, or cut short, against the real areev binding (issue 21,
item 2 and "also seen"): the sync's cursor holds only for the memory it was read from, and a file that
cannot be a whole memory is refused in one line instead of reading as an empty memory.
spec: importers.md ("areev"); docs/engines/areev.md.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from lessons.importers.areev import ERROR_UNREADABLE, MEMORY_FILE
from lessons.importers.areev_engine import (
    TRUNCATED,
    WHY_EMPTY,
    WHY_FIRST_PAGE,
    WHY_NO_HEADER,
    WHY_NOT_AREEV,
)
from lessons.importers.areev_sync import CHANGES_LINE, REPLACED_LINE
from lessons.models import AreevCursor, Lesson
from tests.engines.conftest import (
    BASE_MS,
    DAY_MS,
    HOST,
    SUBJECT,
    TRIGGER,
    lesson_fields,
    needs_areev,
    open_memory,
    release,
)
from tests.fixtures.importers import run_command

pytestmark = pytest.mark.postgres


def build_memory(path: Path, texts: list[str]) -> list[str]:
    """A memory file at ``path`` holding one lesson per text (one op each); their hashes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open_memory(path, TRIGGER)
    hashes = [
        handle.add(
            "fact",
            json.dumps({**lesson_fields(0), "object": text, "created_at": BASE_MS + i * DAY_MS}),
        )
        for i, text in enumerate(texts)
    ]
    del handle
    release()
    return hashes


def memory_files(path: Path) -> list[Path]:
    return [p for p in (path, Path(f"{path}-wal"), Path(f"{path}.blobs")) if p.exists()]


def replace_memory(path: Path, new: Path) -> None:
    """Put the memory at ``new`` in the place of the one at ``path`` (as a host restoring a file would)."""
    for old in memory_files(path):
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    for part in memory_files(new):
        part.rename(path.parent / part.name.replace(new.name, path.name, 1))


def sync(path: Path, *extra: str):
    return run_command("sync_areev", str(path), "--host", HOST, *extra)


def texts(prefix: str, n: int) -> list[str]:
    return [f"{prefix} rule {i}: keep the invoice field {i} exactly as printed." for i in range(n)]


@pytest.fixture
def synced_twelve(db, tmp_path) -> Path:
    """A memory of 12 lessons (12 ops), synced once: the cursor is at op 12."""
    needs_areev()
    path = tmp_path / "memory.db"
    build_memory(path, texts("old", 12))
    code, out, err = sync(path)
    assert (code, out.splitlines()[-1], AreevCursor.objects.get().op_seq) == (
        0,
        CHANGES_LINE.format(after=0, changes=12),
        12,
    ), err
    return path


def test_a_memory_replaced_by_a_smaller_one_is_read_in_full_and_its_lesson_imported(synced_twelve, tmp_path):
    (new_hash,) = build_memory(tmp_path / "new" / "memory.db", ["Copy the Contract Number verbatim."])
    replace_memory(synced_twelve, tmp_path / "new" / "memory.db")

    code, out, err = sync(synced_twelve)

    assert code == 0, err
    assert out.splitlines()[-2:] == [REPLACED_LINE.format(after=12), CHANGES_LINE.format(after=0, changes=1)]
    assert Lesson.objects.get(hash=new_hash).status == Lesson.Status.LIVE
    # the old file's lessons are not held by the memory now at that path: the entity was read whole
    assert list(
        Lesson.objects.filter(subject=SUBJECT, status=Lesson.Status.LIVE).values_list("hash", flat=True)
    ) == [new_hash]
    assert (AreevCursor.objects.get().op_seq, AreevCursor.objects.count()) == (1, 1)


def test_a_memory_replaced_by_a_longer_one_is_read_from_its_first_op_not_from_op_12(synced_twelve, tmp_path):
    new_hashes = build_memory(tmp_path / "new" / "memory.db", texts("new", 13))
    replace_memory(synced_twelve, tmp_path / "new" / "memory.db")

    code, out, err = sync(synced_twelve)

    assert code == 0, err
    assert out.splitlines()[-2:] == [REPLACED_LINE.format(after=12), CHANGES_LINE.format(after=0, changes=13)]
    live = Lesson.objects.filter(subject=SUBJECT, status=Lesson.Status.LIVE)
    assert sorted(live.values_list("hash", flat=True)) == sorted(new_hashes)


def test_the_same_memory_grown_is_still_read_only_after_its_cursor(synced_twelve):
    handle = open_memory(synced_twelve, TRIGGER)
    handle.add("fact", json.dumps({**lesson_fields(1), "object": "Write Flight dates as YYYY-MM-DD."}))
    del handle
    release()

    code, out, _err = sync(synced_twelve)

    assert (code, out.splitlines()[-1]) == (0, CHANGES_LINE.format(after=12, changes=1))
    assert REPLACED_LINE.format(after=12) not in out


def test_a_dry_run_on_a_replaced_memory_says_so_and_keeps_the_old_cursor(synced_twelve, tmp_path):
    build_memory(tmp_path / "new" / "memory.db", ["Copy the Contract Number verbatim."])
    replace_memory(synced_twelve, tmp_path / "new" / "memory.db")

    code, out, _err = sync(synced_twelve, "--dry-run")

    assert (code, out.splitlines()[-2:]) == (
        0,
        [REPLACED_LINE.format(after=12), CHANGES_LINE.format(after=0, changes=1)],
    )
    assert AreevCursor.objects.get().op_seq == 12


# --- a file that is not a whole memory ----------------------------------------------------------


def first_page_only(path: Path) -> str:
    """The memory file cut to its first page, its -wal file gone (areev keeps the rest there)."""
    path.write_bytes(path.read_bytes()[:4096])
    Path(f"{path}-wal").unlink()
    return WHY_FIRST_PAGE


def emptied(path: Path) -> str:
    path.write_bytes(b"")
    Path(f"{path}-wal").unlink()
    return WHY_EMPTY


def not_sqlite(path: Path) -> str:
    path.write_text('{"hash": "not a memory"}\n')
    return WHY_NO_HEADER


def another_application(path: Path) -> str:
    """A SQLite database of another application where the memory was (the binding would write its
    schema into it and read it as an empty memory)."""
    path.unlink()
    Path(f"{path}-wal").unlink(missing_ok=True)
    with closing(sqlite3.connect(path)) as other:
        other.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total TEXT)")
        other.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
        other.commit()
    return WHY_NOT_AREEV.format(tables="grains, meta, oplog")


COMMANDS = {
    "sync_areev": lambda path: ("sync_areev", str(path), "--host", HOST),
    "apply_decisions": lambda path: ("apply_decisions", "--areev", str(path), "--host", HOST),
    "apply_decisions --dry-run": lambda path: (
        "apply_decisions",
        "--areev",
        str(path),
        "--host",
        HOST,
        "--dry-run",
    ),
}


@pytest.mark.parametrize("damage", [first_page_only, emptied, not_sqlite, another_application])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_memory_file_that_is_not_whole_is_refused_in_one_line_and_left_as_it_is(
    db, tmp_path, damage, command
):
    needs_areev()
    path = tmp_path / "memory.db"
    build_memory(path, texts("old", 3))
    why = damage(path)
    before = {p.name: p.read_bytes() for p in memory_files(path) if p.is_file()}

    code, out, err = run_command(*COMMANDS[command](path))

    assert (code, out, err) == (1, "", TRUNCATED.format(path=path, why=why))
    assert {p.name: p.read_bytes() for p in memory_files(path) if p.is_file()} == before
    assert (Lesson.objects.count(), AreevCursor.objects.count()) == (0, 0)


def test_import_areev_given_a_memory_file_says_it_reads_json_output(db, tmp_path):
    needs_areev()
    path = tmp_path / "memory.db"
    build_memory(path, texts("old", 1))
    first_page_only(path)

    code, _out, err = run_command("import_areev", str(path), "--host", HOST)

    assert (code, err) == (1, ERROR_UNREADABLE.format(path=path, why=MEMORY_FILE))
