"""Datasette against our queue page, over HTTP, on the same SQLite file, interleaved in one run.

Usage::

    .venv/bin/pip install -e '.[bench]'          # datasette comes only from the bench extra
    .venv/bin/python bench/datasette_compare.py --db sqlite:////tmp/lpr-1m.sqlite3 [--runs 7]

Datasette serves the file (on a Unix socket) with one canned query, ``queue``: the natural query for
the queue, i.e. over-budget entities with their live count, overage and verdict mix, first 50, in the
queue's default order (host, namespace, subject). Its SQL limit is raised to 10 minutes so that it
answers rather than times out. Our app runs on gunicorn (1 sync worker, DEBUG off) on 127.0.0.1:8110,
signed in as the reviewer. Each round requests our ``/``, then Datasette's HTML page and its JSON, each
on a fresh connection; after one warm-up round, ``--runs`` rounds are timed (client wall time, body
read in full) and the medians compared.

Also, in the same rounds: page ``--page`` (default 50) of each, ours reached by following the queue's
``rel="next"`` link (whatever its pagination, found once before the rounds), Datasette's the same query
with ``offset``; and our ``GET /api/v1/piles?limit=50`` (JSON, a read token) beside Datasette's JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import urljoin, urlparse

from generate import setup_django
from pages_bench import bench_token, next_link
from serve import UnixHTTPConnection, bin_path, get_body, gunicorn, sign_in, tcp, timed_get, wait_until

PER_PAGE = 50


def our_page(cookie: dict, page: int) -> str:
    """The URL of our queue's page ``page``, by following ``rel="next"`` from ``/`` over HTTP."""
    url = "/"
    for step in range(page - 1):
        status, body = get_body(tcp, url, cookie)
        href = next_link(body.decode()) if status == 200 else None
        if href is None:
            raise SystemExit(f"our queue ends at page {step + 1} (HTTP {status}); pass a smaller --page")
        url = urljoin(url, href)
    return url


def natural_query() -> str:
    """The SQL a Datasette user would write for the queue's first page, names from ``Model._meta``."""
    from django.apps import apps

    Host, Lesson = apps.get_model("lessons", "Host"), apps.get_model("lessons", "Lesson")
    c = {f: Lesson._meta.get_field(f).column for f in ("host", "namespace", "subject", "status")}
    v, created = Lesson._meta.get_field("latest_verdict").column, Lesson._meta.get_field("created_at").column
    return f"""
select h.name as host, l.{c["namespace"]} as namespace, l.{c["subject"]} as subject,
  count(*) as live, count(*) - h.max_active as overage,
  sum(l.{v} = 'held') as held, sum(l.{v} = 'regressed') as regressed, sum(l.{v} = 'drifted') as drifted,
  sum(l.{v} is not null and l.{v} not in ('held', 'regressed', 'drifted')) as other,
  sum(l.{v} is null) as not_applied, min(l.{created}) as oldest
from {Lesson._meta.db_table} l join {Host._meta.db_table} h on h.id = l.{c["host"]}
where l.{c["status"]} = 'live' and h.budget_enabled
group by l.{c["host"]}, l.{c["namespace"]}, l.{c["subject"]}
having count(*) > h.max_active
order by h.name, l.{c["namespace"]}, l.{c["subject"]}
limit 50
""".strip()


def natural_query_page() -> str:
    """The same query at an offset (Datasette's ``:offset`` parameter): the page-N request."""
    return natural_query() + " offset :offset"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True, help="sqlite:///PATH (a file bench/generate.py filled)")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--page", type=int, default=50, help="the deep page compared (default 50)")
    args = parser.parse_args()
    path = urlparse(args.db).path[1:]
    setup_django(args.db)
    name = Path(path).stem
    results: dict[str, list[float]] = {}
    sizes: dict[str, int] = {}
    with tempfile.TemporaryDirectory() as tmp:
        metadata = Path(tmp) / "metadata.json"
        metadata.write_text(
            json.dumps(
                {
                    "databases": {
                        name: {
                            "queries": {
                                "queue": {"sql": natural_query()},
                                "queue_page": {"sql": natural_query_page()},
                            }
                        }
                    }
                }
            )
        )
        sock = str(Path(tmp) / "datasette.sock")
        datasette = subprocess.Popen(
            [bin_path("datasette"), "serve", path, "--uds", sock, "--metadata", str(metadata)]
            + ["--setting", "sql_time_limit_ms", "600000", "--setting", "num_sql_threads", "1"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_until(lambda: os.path.exists(sock), what="datasette")
            with gunicorn(args.db, workers=1):
                cookie = sign_in()
                deep = our_page(cookie, args.page)
                offset = (args.page - 1) * PER_PAGE
                bearer = {"Authorization": f"Bearer {bench_token()}"}
                targets = {
                    "ours": (tcp, "/", cookie),
                    "datasette html": (lambda: UnixHTTPConnection(sock), f"/{name}/queue", {}),
                    "datasette json": (
                        lambda: UnixHTTPConnection(sock),
                        f"/{name}/queue.json?_shape=array",
                        {},
                    ),
                    f"ours, page {args.page}": (tcp, deep, cookie),
                    f"datasette html, page {args.page}": (
                        lambda: UnixHTTPConnection(sock),
                        f"/{name}/queue_page?offset={offset}",
                        {},
                    ),
                    "ours, API piles limit=50 (JSON)": (tcp, f"/api/v1/piles?limit={PER_PAGE}", bearer),
                }
                results = {label: [] for label in targets}
                load_start = os.getloadavg()[0]
                for round_no in range(args.runs + 1):
                    for label, (connect, url, headers) in targets.items():
                        status, size, ms = timed_get(connect, url, headers)
                        if status != 200:
                            raise SystemExit(f"{label} {url}: HTTP {status}")
                        sizes[label] = size
                        if round_no:  # round 0 warms both up
                            results[label].append(ms)
                load_end = os.getloadavg()[0]
        finally:
            datasette.terminate()
            datasette.wait(timeout=30)
    print(
        f"{args.db}: {args.runs} interleaved rounds after a warm-up; load {load_start:.1f} → {load_end:.1f}"
    )
    print()
    print("| over HTTP | median ms | min–max ms | bytes |")
    print("|---|---|---|---|")
    for label, times in results.items():
        spread = f"{min(times):.0f}–{max(times):.0f}"
        print(f"| {label} | {statistics.median(times):.0f} | {spread} | {sizes[label]:,} |")
    print()
    for ours, theirs in (
        ("ours", "datasette html"),
        (f"ours, page {args.page}", f"datasette html, page {args.page}"),
        ("ours, API piles limit=50 (JSON)", "datasette json"),
    ):
        ratio = statistics.median(results[ours]) / statistics.median(results[theirs])
        print(f"{ours} / {theirs}: {ratio:.2f}× ({'slower' if ratio > 1 else 'faster'})")


if __name__ == "__main__":
    main()
