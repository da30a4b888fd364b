"""An ingested scale set: what ``manage.py ingest`` makes of ``bench/ingest_bench.py``'s generated lines.

Usage::

    .venv/bin/python bench/ingested.py --db sqlite:////tmp/lprbench/ingested-1m.sqlite3 [--lines 1000000]
    .venv/bin/python bench/ingested.py --db postgres://postgres@127.0.0.1:5432/lpr_bench_ingested

``bench/generate.py``'s set has lessons, verdicts, counts, drafts and decisions but no exposures and no
corrections, so the pages that read those (the lesson page's recurrence section, a host's unmatched
topics) are measured on this one: one host, 1 lesson per 20 lines (500 piles of 100 members at 1M), the
rest exposures and corrections, 10 lines a session (at 1M: 50,000 lessons, 760,000 exposures, 190,000
user corrections). The target is wiped first (a PostgreSQL database's name must contain ``bench``), then
migrated, the lines ingested and the demo users made (the pages benchmark signs in as "reviewer"); then
``bench/pages_bench.py --db URL --only queue,pile,lesson,hosts,topics`` measures it.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from generate import _users, manage, settle, setup_django, wipe
from ingest_bench import generate as generate_lines
from ingest_bench import parse_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True, help="sqlite:///PATH or postgres://... (wiped first)")
    parser.add_argument("--lines", default="1m", help="lines ingested (default 1m; 100k, 250000, ...)")
    args = parser.parse_args()
    lines = parse_size(args.lines)
    started = time.perf_counter()
    wipe(args.db)
    manage(args.db, "migrate", "-v0")
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "input.jsonl"
        generate_lines(data, lines)
        written = time.perf_counter()
        manage(args.db, "ingest", str(data), capture=True)
        print(f"ingest of {lines:,} lines: {time.perf_counter() - written:.1f} s")
    setup_django(args.db)
    _users()
    settle(args.db)
    print(f"total {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
