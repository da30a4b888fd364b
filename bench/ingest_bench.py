"""Ingest benchmark: time and peak memory of ``manage.py ingest`` on a generated file.

Usage: .venv/bin/python bench/ingest_bench.py [LINES ...]
(default: 250000 500000 1000000; a size may be written 100k or 1m)
Each run uses a fresh SQLite database in a temporary folder and a generated interchange file
(1 host, 1 lesson per 20 lines, the rest exposures and corrections, 10 lines a session).
Reports wall time, CPU time and the peak resident memory of the ingest process, so doubling the input shows
how both grow.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
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


def run(lines: int, worker: bool = False) -> tuple[float, float, float, float | None]:
    """Ingest ``lines`` generated lines into a fresh SQLite file: (wall seconds, CPU seconds, peak MiB,
    and with ``worker`` the wall seconds of ``manage.py db_worker --batch`` afterwards: the background
    regroup of the piles the ingest left not grouped yet, docs/piles-and-recurrence.md "Facts")."""
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "input.jsonl"
        generate(data, lines)
        # DEBUG off: with DEBUG on, Django keeps the last 9000 SQL statements, which would be measured too.
        env = {
            **os.environ,
            "DEBUG": "0",
            "SECRET_KEY": "bench",
            "DATABASE_URL": f"sqlite:///{tmp}/bench.sqlite3",
        }
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        before, cpu_before = usage.ru_maxrss, usage.ru_utime + usage.ru_stime
        elapsed = _timed_manage(env, "ingest", str(data))
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = usage.ru_utime + usage.ru_stime - cpu_before
        grouped = None
        if worker:
            grouped = _timed_manage(env, "db_worker", "--batch", "--no-startup-delay", "--no-reload")
        return elapsed, cpu, max(usage.ru_maxrss, before) / 1024, grouped


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
    args = parser.parse_args()
    sizes = args.sizes or [250_000, 500_000, 1_000_000]
    # The machine is shared: the 1-minute load average at each run's start and end goes with its figure.
    # CPU seconds (user + system of the ingest process) depend far less on the load than wall time.
    worker = f" {'worker s':>9}" if args.worker else ""
    print(f"{'lines':>10} {'seconds':>9} {'CPU s':>7} {'peak MiB':>9} {'load':>10}{worker}")
    for lines in sizes:
        load = os.getloadavg()[0]
        elapsed, cpu, peak, grouped = run(lines, worker=args.worker)
        end = os.getloadavg()[0]
        after = f" {grouped:>9.1f}" if grouped is not None else ""
        figures = f"{lines:>10} {elapsed:>9.1f} {cpu:>7.1f} {peak:>9.1f} {load:>4.1f}-{end:<4.1f}{after}"
        print(figures, flush=True)


if __name__ == "__main__":
    main()
