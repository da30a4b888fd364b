"""Outcomes benchmark: what recomputing a host's decision outcomes costs after an ingest brings it evidence.

Usage::

    .venv/bin/python bench/generate.py --db sqlite:////tmp/b10k.sqlite3 --scale 10k --decisions 100000
    .venv/bin/python bench/outcomes_bench.py --db sqlite:////tmp/b10k.sqlite3 [--lines 100k] [--runs 3] \
        [--history N]

Against a set ``bench/generate.py`` filled (SQLite only: each run ingests into a fresh copy of the file, so
every run starts from the same data, its outcomes computed by ``manage.py outcomes`` before the ingest;
with ``--history N``, N earlier batches of the same size ingested first, untimed: the host's history).
It picks the host with the most judged decisions and writes an
interchange file of ``--lines`` lines for it: sessions of 10 lines after every decision, each showing
that host's lessons (exposures) and, one line in five, a user correction that repeats the words of one of
the host's lessons, live or retired in turn by id, so that corrections land on the topics of retired
lessons (the retire rule's evidence) and on live ones (recurrence). Then, per run, on a fresh copy:

- in one process, the ingest of the file with its ``host_evidence_changed`` receiver disconnected, then
  ``review.services.outcomes.outcomes_refresh`` of that host (what the receiver runs: the kept counted
  corrections brought up to date from the batch, the decisions they touch judged), again with nothing new,
  and a whole recompute (``full=True``, as ``manage.py outcomes``).

Prints wall and CPU seconds of each (the process's and its children's: the ingest forks workers), and the
refresh's CPU as a share of the ingest's (issue 24's "recomputing outcomes after a 100k-line ingest costs
at most 10% of that ingest"): CPU time, since wall time on a shared machine moves with the load average
(printed too). Before each run the host's outcomes are computed by ``manage.py outcomes``, then the
``--history`` batches are ingested, each with its own refresh, as a production host would have them.
docs/benchmarks.md, "Outcomes recomputed after an ingest".
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from ingest_bench import _timed_manage, parse_size  # bench/ is the script's folder

ROOT = Path(__file__).resolve().parents[1]
SESSION_LINES = 10
CORRECTION_EVERY = 5


def busiest_host(db: Path, rank: int = 0) -> tuple[str, int]:
    """The host with the most judged decisions in the SQLite file ``db`` (``rank`` 1: the second most…),
    and the epoch ms of its newest."""
    with sqlite3.connect(db) as con:
        row = con.execute(
            "SELECT host, max(at) FROM review_decision WHERE action IN ('retire', 'restore', 'approve',"
            " 'rollback') GROUP BY host ORDER BY count(*) DESC LIMIT 1 OFFSET ?",
            (rank,),
        ).fetchone()
        newest = con.execute("SELECT CAST(strftime('%s', ?) AS INTEGER) * 1000", (row[1],)).fetchone()[0]
    return row[0], newest


def write_input(db: Path, host: str, after_ms: int, lines: int, out: Path, batch: int = 0) -> None:
    """``lines`` interchange lines for ``host``: sessions after ``after_ms`` showing its live lessons, one
    line in ``CORRECTION_EVERY`` a user correction that repeats the words of one of its lessons (live or
    retired, in turn by id, so the retired lessons' topics get corrections too). ``batch`` n: the n-th of
    successive batches, its sessions new and after the earlier batches' (``lines`` seconds each)."""
    with sqlite3.connect(db) as con:
        lessons = con.execute(
            "SELECT l.store, l.lesson_id, l.text, l.status FROM lessons_lesson l JOIN lessons_host h"
            " ON h.id = l.host_id WHERE h.name = ? ORDER BY l.id",
            (host,),
        ).fetchall()
    live = [row for row in lessons if row[3] == "live"]
    with out.open("w") as f:
        for j in range(lines):
            session = f"bench-ses-{batch}-{j // SESSION_LINES}"
            at = after_ms + 60_000 + (batch * lines + j) * 1_000
            if j % CORRECTION_EVERY == CORRECTION_EVERY - 1:
                text = lessons[(j // CORRECTION_EVERY) % len(lessons)][2]
                record = {
                    "type": "correction",
                    "host": host,
                    "session": session,
                    "id": f"bench-c{batch}-{j}",
                    "kind": "user_correction",
                    "text": f"No: {text}",
                    "corrected_at": at,
                    "turn_started_at": at - 500,
                }
            else:
                store, lesson_id, _text, _status = live[(j * 7) % len(live)]
                record = {
                    "type": "exposure",
                    "host": host,
                    "session": session,
                    "store": store,
                    "lesson_id": lesson_id,
                    "shown_at": at - 1_000,
                }
            f.write(json.dumps(record) + "\n")


INGEST_THEN_REFRESH = """
import os, resource, sys, time, django
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
sys.path.insert(0, os.getcwd())
django.setup()
from django.core.management import call_command
from lessons.signals import host_evidence_changed
from review.services.outcomes import outcomes_refresh

def cpu():
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

# the ingest without its signal's refresh, then that refresh (what the signal runs), then one with nothing
# new, then the whole recompute (manage.py outcomes: the kept rows built afresh, every decision judged)
host_evidence_changed.disconnect(dispatch_uid="outcomes_after_evidence")
times = []
for step in ("ingest", "refresh", "again", "whole"):
    start, used = time.perf_counter(), cpu()
    if step == "ingest":
        call_command("ingest", sys.argv[2], stdout=open(os.devnull, "w"))
    else:
        try:
            outcomes_refresh(host=sys.argv[1], full=step == "whole")
        except TypeError:  # code from before the kept counted corrections: every refresh reads it all
            outcomes_refresh(host=sys.argv[1])
    times += [time.perf_counter() - start, cpu() - used]
print(" ".join(f"{t:.3f}" for t in times))
"""


def run(db: Path, data: Path, host: str, earlier: list[Path] = ()) -> list[float]:
    """One run on a fresh copy of ``db``: [wall, CPU seconds] of the ingest (its outcome refresh left out),
    of the refresh it leaves (the one its signal runs), of a refresh with nothing new, of a whole recompute.
    ``earlier``: batches ingested first, untimed, each with its own refresh (the host's history)."""
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "bench.sqlite3"
        shutil.copyfile(db, copy)
        env = {**os.environ, "DEBUG": "0", "SECRET_KEY": "bench", "DATABASE_URL": f"sqlite:///{copy}"}
        _timed_manage(env, "migrate")
        # the host's outcomes and kept rows as a production host has them before the batch
        _timed_manage(env, "outcomes", "--host", host)
        for batch in earlier:
            _timed_manage(env, "ingest", str(batch))
        out = subprocess.run(
            [sys.executable, "-c", INGEST_THEN_REFRESH, host, str(data)],
            cwd=ROOT,
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        return [float(t) for t in out.stdout.split()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="sqlite:///PATH of a bench/generate.py set")
    parser.add_argument("--lines", default="100k")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--rank", type=int, default=0, help="0: the host with the most judged decisions, 1…")
    parser.add_argument(
        "--history", type=int, default=0, help="batches of --lines ingested before the timed one (untimed)"
    )
    args = parser.parse_args(argv)
    if not args.db.startswith("sqlite:///"):
        parser.error("--db must be sqlite:///PATH")
    db = Path(args.db.removeprefix("sqlite://"))
    host, newest = busiest_host(db, args.rank)
    lines = parse_size(args.lines)
    with tempfile.TemporaryDirectory() as tmp:
        earlier = [Path(tmp) / f"history-{n}.jsonl" for n in range(args.history)]
        for n, path in enumerate(earlier):
            write_input(db, host, newest, lines, path, batch=n)
        data = Path(tmp) / "input.jsonl"
        write_input(db, host, newest, lines, data, batch=args.history)
        ingests, refreshes, wholes = [], [], []
        for _ in range(args.runs):
            load = os.getloadavg()[0]
            t = run(db, data, host, earlier)
            ingests.append(t[1])
            refreshes.append(t[3])
            wholes.append(t[7])
            print(
                f"ingest {t[0]:.2f} s ({t[1]:.2f} s CPU); its refresh {t[2]:.3f} s ({t[3]:.3f} s CPU);"
                f" again {t[4]:.3f} s ({t[5]:.3f} s CPU); whole {t[6]:.3f} s ({t[7]:.3f} s CPU);"
                f" load {load:.2f}",
                flush=True,
            )
    ingest, refresh, whole = (statistics.median(x) for x in (ingests, refreshes, wholes))
    print(
        f"host {host}: {lines:,} lines after {args.history} such batches; median CPU: ingest {ingest:.2f} s"
        f" (its refresh left out), its refresh {refresh:.3f} s = {refresh / ingest:.1%} of the ingest;"
        f" a whole recompute {whole:.3f} s = {whole / ingest:.1%}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
