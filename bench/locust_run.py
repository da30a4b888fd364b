"""Load run: 50 signed-in reviewers for 60 s on gunicorn (3 sync workers), headless locust.

Usage::

    .venv/bin/pip install -e '.[bench]'          # locust comes only from the bench extra
    .venv/bin/python bench/locust_run.py --db sqlite:////tmp/lpr-1m.sqlite3 [--users 50] [--seconds 60]

Picks up to 200 piles and 200 of their live lessons from the database (``bench/locustfile.py`` draws from
them) and makes one signed-in session per user (as a sign-in does, without the password hash), serves
the app on 127.0.0.1:8110 with ``--workers`` gunicorn workers (DEBUG off), runs locust
headless (users spawned 10 a second) and prints requests/s, p50, p95, p99 and failures per page and
in all as locust saw them (the time a request waited for a free worker included), then each kind of
request's time inside a gunicorn worker (its access log: ``%(D)s``, the 304s apart), with the load average
before and after and the CPU seconds the run took: locust's, gunicorn's (master and workers) and the rest
of the machine's (the database server, other people's work). ``--keep DIR`` keeps locust's CSVs (with
``--csv-full-history``) and the access log. ``--extra api,log,deep`` adds the API piles page (a read
token made in the database), the decision log and the queue's page 50 (found by following its next
links) to the mix, each with weight 1; ``filters,regions,conditional`` the queue's host and text filters,
the pile's htmx region and a pile asked again with its ``ETag``; ``writer`` one more user who retires and
restores lessons through the lesson page's forms (bench/locustfile.py). Issue 25's mix::

    .venv/bin/python bench/locust_run.py --db ... --extra log,filters,regions,conditional,writer
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

from generate import ROOT, setup_django
from pages_bench import bench_token, follow_next
from serve import REVIEWER, bin_path, gunicorn_process

HERE = Path(__file__).resolve().parent


def pick_targets(limit: int = 200) -> dict[str, list[str]]:
    """Over-budget entities (as pile query strings) and live lessons of theirs (as page paths)."""
    from django.apps import apps
    from django.db.models import Count, F

    Lesson = apps.get_model("lessons", "Lesson")
    live = Lesson.objects.filter(status="live", host__budget_enabled=True)
    piles = list(
        live.values("host__name", "namespace", "subject")
        .annotate(n=Count("id"))
        .filter(n__gt=F("host__max_active"))
        .order_by()[:limit]
    )
    lessons = []
    for pile in piles[:limit]:
        lesson_hash = live.filter(
            host__name=pile["host__name"], namespace=pile["namespace"], subject=pile["subject"]
        ).values_list("hash", flat=True)[0]
        lessons.append(f"/lessons/{pile['host__name']}/{lesson_hash}/")
    return {
        "piles": [
            urlencode({"host": p["host__name"], "namespace": p["namespace"], "subject": p["subject"]})
            for p in piles
        ],
        "lessons": lessons,
    }


def extra_targets(extra: list[str], *, deep_page: int = 50) -> dict:
    """What the ``--extra`` pages need: their names, a read token, the URL of the queue's ``deep_page``,
    words of the lessons' texts for the text filter, a session of its own for the writer."""
    out: dict = {"extra": extra}
    if "filters" in extra:
        out["words"] = ["flaky", "timestamp", "invoice", "decimals", "zeros"]
    if "writer" in extra:
        out["writer"] = sessions(1)[0]
    if "api" in extra:
        out["token"] = bench_token()
    if "deep" in extra:
        from django.contrib.auth import get_user_model
        from django.test import Client

        client = Client()
        client.force_login(get_user_model().objects.get(username=REVIEWER[0]))
        out["deep"] = follow_next(client, "/", deep_page - 1)
    return out


def sessions(count: int) -> list[str]:
    """``count`` signed-in sessions of the reviewer (session ids), made in the database as a sign-in makes
    them: the run measures the pages, not the password hash each form sign-in costs (~1 s of CPU)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    user = get_user_model().objects.get(username=REVIEWER[0])
    ids = []
    for _ in range(count):
        client = Client()
        client.force_login(user)
        ids.append(client.cookies["sessionid"].value)
    return ids


def cpu_seconds(pids: list[int]) -> float:
    """User plus system CPU seconds the processes ``pids`` have used so far (Linux ``/proc``); a process
    that has gone counts 0."""
    tick = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return total / tick


def machine_busy_seconds() -> float:
    """CPU seconds the whole machine has been busy (every core, ``/proc/stat``: all but idle and iowait)."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(values) - values[3] - values[4]) / os.sysconf("SC_CLK_TCK")


def family(pid: int) -> list[int]:
    """``pid`` and its children (gunicorn's master and its workers)."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        children = []
    return [pid, *(int(c) for c in children)]


ROUTES = (
    # (name, path pattern): the server's time per kind of request, from gunicorn's access log
    ("queue", re.compile(r"^/\?$")),
    ("queue, host filter", re.compile(r"^/\?host=")),
    ("queue, text filter", re.compile(r"^/\?q=")),
    ("pile", re.compile(r"^/pile/\?")),
    ("writer: retire/restore", re.compile(r"^/lessons/[^/]+/[0-9a-f]+/(retire|restore)/")),
    ("lesson", re.compile(r"^/lessons/[^/]+/[0-9a-f]+/\?")),
    ("decision log", re.compile(r"^/decisions/")),
    ("api piles", re.compile(r"^/api/v1/piles")),
)


def server_times(log: Path) -> list[tuple[str, int, float, float, float, float]]:
    """``(route, count, p50, p95, p99, max)`` in ms of the worker's own time per route (and status 304
    apart), from an access log that ``serve.gunicorn(access_log=...)`` wrote."""
    by_route: dict[str, list[float]] = {}
    for line in log.read_text().splitlines():
        method, path, status, micros = line.split(" ")
        name = next((n for n, pattern in ROUTES if pattern.match(path)), "other")
        if status == "304":
            name += " (304)"
        by_route.setdefault(name, []).append(int(micros) / 1000)
    rows = []
    for name, times in sorted(by_route.items()):
        times.sort()

        def at(q: float, times=times) -> float:
            return times[min(len(times) - 1, int(q * len(times)))]

        rows.append((name, len(times), at(0.5), at(0.95), at(0.99), times[-1]))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--users", type=int, default=50)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument(
        "--extra",
        default="",
        help="comma-separated parts added to the mix: api,log,deep,filters,regions,conditional,writer",
    )
    parser.add_argument("--deep-page", type=int, default=50, help="the queue page of --extra deep")
    parser.add_argument(
        "--keep",
        metavar="DIR",
        help="keep locust's CSVs (run_stats.csv, run_stats_history.csv) and gunicorn's access log in DIR",
    )
    args = parser.parse_args()
    extra = [name for name in args.extra.split(",") if name]
    unknown = set(extra) - {"api", "log", "deep", "filters", "regions", "conditional", "writer"}
    if unknown:
        parser.error(f"unknown --extra page(s): {', '.join(sorted(unknown))}")
    os.environ.setdefault("ALLOWED_HOSTS", "testserver,127.0.0.1,localhost")  # the test client finds page 50
    setup_django(args.db)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.keep) if args.keep else Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        targets = Path(tmp) / "targets.json"
        targets.write_text(
            json.dumps(
                {
                    **pick_targets(),
                    "sessions": sessions(args.users),
                    **extra_targets(extra, deep_page=args.deep_page),
                }
            )
        )
        prefix = str(out / "run")
        access_log = out / "access.log"
        access_log.unlink(missing_ok=True)
        with gunicorn_process(args.db, workers=args.workers, access_log=str(access_log)) as (base, proc):
            load_start = os.getloadavg()[0]
            server = family(proc.pid)
            server_before, busy_before = cpu_seconds(server), machine_busy_seconds()
            started = time.monotonic()
            locust = subprocess.Popen(
                [bin_path("locust"), "-f", str(HERE / "locustfile.py"), "--headless", "--only-summary"]
                + ["-u", str(args.users), "-r", "10", "-t", f"{args.seconds}s", "--host", base]
                + ["--csv", prefix, "--csv-full-history", "--stop-timeout", "5"]
                + ["--loglevel", "WARNING"],
                cwd=ROOT,
                env={**os.environ, "LPR_BENCH_TARGETS": str(targets)},
                stdout=subprocess.DEVNULL,
            )
            _, _, usage = os.wait4(locust.pid, 0)
            locust.returncode = 0  # reaped by wait4 above
            locust_cpu = usage.ru_utime + usage.ru_stime
            server_cpu = cpu_seconds(server) - server_before
            busy = machine_busy_seconds() - busy_before
            wall = time.monotonic() - started
            load_end = os.getloadavg()[0]
        with open(f"{prefix}_stats.csv", newline="") as f:
            stats = list(csv.DictReader(f))
        times = server_times(access_log)
    print(
        f"{args.db}: {args.users} users, {args.seconds} s, gunicorn {args.workers} sync workers; "
        f"load {load_start:.1f} → {load_end:.1f}"
    )
    print(
        f"CPU seconds during the run: locust {locust_cpu:.1f}, gunicorn {server_cpu:.1f}, the rest of the "
        f"machine (the database server, other work) {busy - locust_cpu - server_cpu:.1f}; "
        f"busy {busy:.1f} of {os.cpu_count()} cores × {wall:.1f} s"
    )
    print()
    print("| requests (locust) | count | failures | requests/s | p50 ms | p95 ms | p99 ms | max ms |")
    print("|---|---|---|---|---|---|---|---|")
    for row in stats:
        rate, top = float(row["Requests/s"]), float(row["Max Response Time"])
        print(
            f"| {row['Name']} | {row['Request Count']} | {row['Failure Count']} | {rate:.1f} "
            f"| {row['50%']} | {row['95%']} | {row['99%']} | {top:.0f} |"
        )
    print()
    print("| requests (time in the gunicorn worker) | count | p50 ms | p95 ms | p99 ms | max ms |")
    print("|---|---|---|---|---|---|")
    for name, count, p50, p95, p99, top in times:
        print(f"| {name} | {count} | {p50:.1f} | {p95:.1f} | {p99:.1f} | {top:.1f} |")


if __name__ == "__main__":
    main()
