"""Ingest benchmark: time and peak memory of ``manage.py ingest`` on a generated file, and its floors.

Usage: .venv/bin/python bench/ingest_bench.py [LINES ...] [--db postgres://USER@HOST:PORT/NAME] [--no-floor]
(default: 250000 500000 1000000; a size may be written 100k or 1m)
Each run uses a fresh database (SQLite: a file in a temporary folder; ``--db``: that PostgreSQL database,
dropped and created again, and NAME_floor_input and NAME_floor_all beside it) and a generated interchange
file (1 host, 1 lesson per 20 lines, the rest exposures and corrections, 10 lines a session).
Reports wall time, CPU time and the peak resident memory of the ingest process, so doubling the input shows
how both grow; then the **floors** of the same run (issue 25), each in a process of its own: ``json.loads``
of every line of the same file plus rows the ingest stored, read back from its database, written raw into
a fresh migrated database (every column, ids included; one ``executemany`` per table on SQLite with the
app's pragmas, WAL and synchronous NORMAL; one ``COPY`` per table on PostgreSQL; one transaction,
committed). **floor**: the rows the input's lines become (hosts, lessons, exposures, corrections);
**all**: every row the ingest wrote, the derived ones too (attributions, recurrence and entity counts, the
queued regroup job). Neither has validation, identities, resolution or attribution: no ingest can go
below them. The ratios are the ingest's wall seconds over each. docs/benchmarks.md, "Ingest".
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def generate(path: Path, lines: int) -> None:
    with path.open("w") as out:
        out.write(
            json.dumps({"type": "host", "name": "bench", "max_active": 8, "budget_enabled": True}) + "\n"
        )
        lessons = max(1, lines // 20)
        for i in range(lessons):
            out.write(
                json.dumps(
                    {
                        "type": "lesson",
                        "host": "bench",
                        "namespace": "ns",
                        "subject": f"s{i % 500}",
                        "text": f"Use `col_{i}` with care in staging models rule {i}.",
                        "created_at": 1_700_000_000_000 + i,
                        "lesson_id": f"L-{i:05x}",
                        "store": "team-playbook",
                    }
                )
                + "\n"
            )
        for j in range(lines - lessons - 1):
            session = f"ses_{j // 10}"
            if j % 5 == 4:
                out.write(
                    json.dumps(
                        {
                            "type": "correction",
                            "host": "bench",
                            "session": session,
                            "id": f"c{j}",
                            "kind": "user_correction",
                            "text": f"Use `col_{j % lessons}` in staging.",
                            "corrected_at": 1_800_000_000_000 + j,
                            "turn_started_at": 1_800_000_000_000 + j - 500,
                        }
                    )
                    + "\n"
                )
            else:
                out.write(
                    json.dumps(
                        {
                            "type": "exposure",
                            "host": "bench",
                            "session": session,
                            "store": "team-playbook",
                            "lesson_id": f"L-{(j * 7) % lessons:05x}",
                            "shown_at": 1_800_000_000_000 + j - 1000,
                        }
                    )
                    + "\n"
                )


FLOOR_TABLES = ("lessons_host", "lessons_lesson", "lessons_exposure", "lessons_correction")


@dataclass
class Figures:
    """One run's figures: the ingest's wall and CPU seconds and peak MiB (the largest of its processes), the
    worker's wall seconds (``--worker``), and the two floors' (module docstring; None without them): the
    parse's wall seconds, the raw insert's of the input's rows (``insert``) and of every row the ingest
    wrote (``insert_all``), and the CPU seconds of both floor processes together."""

    seconds: float
    cpu: float
    peak: float
    grouped: float | None = None
    parse: float | None = None
    insert: float | None = None
    insert_all: float | None = None
    floor_cpu: float | None = None

    @property
    def floor(self) -> float | None:
        return None if self.parse is None else self.parse + self.insert

    @property
    def floor_all(self) -> float | None:
        return None if self.parse is None else self.parse + self.insert_all


def run(lines: int, worker: bool = False, db: str | None = None, floor: bool = True) -> Figures:
    """Ingest ``lines`` generated lines into a fresh database (SQLite in a temporary folder, or the
    PostgreSQL database ``db``, created again), then with ``floor`` measure the two floors of the same rows
    (module docstring), each in a process of its own. With ``worker`` also the wall seconds of
    ``manage.py db_worker --batch`` afterwards: the background regroup of the piles the ingest left not
    grouped yet (docs/piles-and-recurrence.md "Facts"). ``CalledProcessError`` when a command fails."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "input.jsonl"
        generate(data, lines)
        url = db or f"sqlite:///{tmp}/bench.sqlite3"
        floors = {
            mode: f"{url}_floor_{mode}" if db else f"sqlite:///{tmp}/floor_{mode}.sqlite3"
            for mode in ("input", "all")
        }
        # DEBUG off: with DEBUG on, Django keeps the last 9000 SQL statements, which would be measured too.
        env = {**os.environ, "DEBUG": "0", "SECRET_KEY": "bench", "DATABASE_URL": url}
        urls = (url, *floors.values()) if floor else (url,)
        for each in urls:
            if db:
                _recreate_postgres(each)
            migrate = {**env, "DATABASE_URL": each}
            subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=migrate, check=True)
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        before, cpu_before = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
        elapsed = _timed_manage(env, "ingest", str(data))
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = usage.ru_utime + usage.ru_stime - cpu_before
        figures = Figures(elapsed, cpu, max(usage.ru_maxrss, before) / 1024)
        if worker:
            figures.grouped = _timed_manage(env, "db_worker", "--batch", "--no-startup-delay", "--no-reload")
        if floor:
            cpu_before = usage.ru_utime + usage.ru_stime
            found = {}
            for mode, target in floors.items():
                out = subprocess.run(
                    [sys.executable, __file__, "--floor-of", str(data), url, target, mode],
                    cwd=ROOT,
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                found[mode] = [float(x) for x in out.split()]
            usage = resource.getrusage(resource.RUSAGE_CHILDREN)
            figures.parse = min(found["input"][0], found["all"][0])
            figures.insert, figures.insert_all = found["input"][1], found["all"][1]
            figures.floor_cpu = usage.ru_utime + usage.ru_stime - cpu_before
        if db:
            for each in urls:
                _drop_postgres(each)
        return figures


def _postgres_admin(url: str):
    """A psycopg connection (autocommit) to the server of ``url``'s database, on its ``postgres`` database,
    and the database's name."""
    import psycopg

    base, name = url.rsplit("/", 1)
    return psycopg.connect(f"{base}/postgres", autocommit=True), name


def _recreate_postgres(url: str) -> None:
    admin, name = _postgres_admin(url)
    with admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')


def _drop_postgres(url: str) -> None:
    admin, name = _postgres_admin(url)
    with admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def floor_of(data: str, source: str, target: str, mode: str = "input") -> tuple[float, float]:
    """The floor (module docstring): the rows read from the ingested database ``source`` first (not timed),
    then timed: ``json.loads`` of every line of ``data``, and the rows written raw into the fresh migrated
    database ``target`` in one transaction, committed. ``mode`` ``"input"``: the tables of ``FLOOR_TABLES``
    (what the input's lines become); ``"all"``: every table the ingest filled (``_written_tables``: the
    derived rows too, attributions, counts, the queued job; SQLite's full-text index is filled by its
    triggers, as in the ingest). Returns (parse seconds, insert seconds)."""
    if source.startswith("sqlite:"):
        import sqlite3

        target_path = target.removeprefix("sqlite:///")
        with sqlite3.connect(source.removeprefix("sqlite:///")) as conn:
            tables = FLOOR_TABLES if mode == "input" else _written_tables(conn, sqlite3.connect(target_path))
            rows = {t: conn.execute(f'SELECT * FROM "{t}"').fetchall() for t in tables}
        parse = _parse_all(data)
        start = time.perf_counter()
        conn = sqlite3.connect(target_path, isolation_level=None)
        # As the app's connections: its host name CHECK calls REGEXP (Django registers it), foreign keys on.
        conn.create_function("REGEXP", 2, lambda pattern, text: re.search(pattern, text) is not None)
        conn.execute("PRAGMA foreign_keys = ON")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("BEGIN")
        for table, values in rows.items():
            if values:
                marks = ", ".join("?" * len(values[0]))
                conn.executemany(f'INSERT INTO "{table}" VALUES ({marks})', values)
        conn.execute("COMMIT")
        conn.close()
        return parse, time.perf_counter() - start
    import psycopg

    dumps: dict[str, bytes] = {}
    with psycopg.connect(source) as conn, conn.cursor() as cursor:
        tables = FLOOR_TABLES if mode == "input" else _written_tables(conn, psycopg.connect(target))
        for table in tables:
            with cursor.copy(f'COPY "{table}" TO STDOUT') as copy:
                dumps[table] = b"".join(bytes(block) for block in copy)
    parse = _parse_all(data)
    start = time.perf_counter()
    with psycopg.connect(target) as conn, conn.cursor() as cursor:  # one transaction, committed at the end
        for table, dump in dumps.items():
            with cursor.copy(f'COPY "{table}" FROM STDIN') as copy:
                copy.write(dump)
    return parse, time.perf_counter() - start


def _written_tables(source, target) -> list[str]:
    """The tables with rows in ``source`` (the ingested database) that are empty in ``target`` (the fresh
    migrated one): what the ingest wrote. SQLite's own tables and the full-text tables (filled by triggers)
    are left out."""
    if hasattr(target, "create_function"):  # sqlite3
        names = [
            name
            for (name,) in source.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not name.startswith("sqlite_") and "_fts" not in name
        ]
    else:
        names = [
            name
            for (name,) in source.execute(
                "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
            )
        ]
    with contextlib.closing(target):
        return [
            name
            for name in names
            if source.execute(f'SELECT EXISTS (SELECT 1 FROM "{name}")').fetchone()[0]
            and not target.execute(f'SELECT EXISTS (SELECT 1 FROM "{name}")').fetchone()[0]
        ]


def _parse_all(data: str) -> float:
    """Seconds to read ``data`` and ``json.loads`` each of its lines."""
    start = time.perf_counter()
    loads = json.loads
    with open(data, encoding="utf-8") as lines:
        for line in lines:
            loads(line)
    return time.perf_counter() - start


def _timed_manage(env: dict[str, str], *args: str) -> float:
    """Run ``manage.py *args`` in ``env`` with its output dropped; the wall-clock seconds it took.
    ``CalledProcessError`` when it fails."""
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def parse_size(text: str) -> int:
    """``"100k"`` -> 100000, ``"1m"`` -> 1000000, ``"2500"`` -> 2500."""
    text = text.strip().lower()
    factor = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(text[:-1] if factor > 1 else text) * factor


def main() -> None:
    if sys.argv[1:2] == ["--floor-of"]:  # the floor's own process (run)
        print(*floor_of(*sys.argv[2:6]))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "sizes",
        nargs="*",
        type=parse_size,
        metavar="LINES",
        help="lines per run: 2500, 100k, 1m (default 250k 500k 1m)",
    )
    parser.add_argument(
        "--worker",
        action="store_true",
        help="then time the background worker grouping the piles the ingest left (db_worker --batch)",
    )
    parser.add_argument(
        "--db",
        metavar="URL",
        help="a PostgreSQL database URL (dropped and created again, NAME_floor_* too); default a SQLite file",
    )
    parser.add_argument("--no-floor", action="store_true", help="the ingest alone, without its floors")
    args = parser.parse_args()
    sizes = args.sizes or [250_000, 500_000, 1_000_000]
    # The machine is shared: the 1-minute load average at each run's start and end goes with its figure.
    # CPU seconds (user + system of the ingest process) depend far less on the load than wall time.
    worker = f" {'worker s':>9}" if args.worker else ""
    floor = (
        ""
        if args.no_floor
        else f" {'parse s':>8} {'floor s':>8} {'ratio':>6} {'all s':>7} {'ratio':>6} {'floor CPU':>9}"
    )
    print(f"{'lines':>10} {'seconds':>9} {'CPU s':>7} {'peak MiB':>9} {'load':>10}{worker}{floor}")
    for lines in sizes:
        load = os.getloadavg()[0]
        f = run(lines, worker=args.worker, db=args.db, floor=not args.no_floor)
        end = os.getloadavg()[0]
        after = f" {f.grouped:>9.1f}" if f.grouped is not None else ""
        if f.floor is not None:
            after += f" {f.parse:>8.1f} {f.floor:>8.1f} {f.seconds / f.floor:>5.2f}x"
            after += f" {f.floor_all:>7.1f} {f.seconds / f.floor_all:>5.2f}x {f.floor_cpu:>9.1f}"
        ingest = f"{f.seconds:>9.1f} {f.cpu:>7.1f} {f.peak:>9.1f}"
        print(f"{lines:>10} {ingest} {load:>4.1f}-{end:<4.1f}{after}", flush=True)


if __name__ == "__main__":
    main()
