"""Pages benchmark: server time in process of each page at scale, with its query count.

Usage::

    .venv/bin/python bench/pages_bench.py --db sqlite:////tmp/lpr-1m.sqlite3 [--runs 7] [--only queue,pile]

Against a database ``bench/generate.py`` filled. Each page is requested through its URL with Django's
test client (DEBUG off, signed in as the generated "reviewer"), so the benchmark does not depend on
where the views live: one warm-up request, one request under ``CaptureQueriesContext`` for the query
count, then ``--runs`` timed requests (median, min and max reported). Pages: the queue by default, each
sort the queue's header offers (found in its HTML), the host filter, the text filter, page 50 (reached
by following the page's ``rel="next"`` link 49 times, whatever the queue's pagination is: page numbers
or a cursor); the largest pile (200 members), one of its lessons; hosts; the biggest host's page (and,
with ``--only topics``, its unmatched topics: on ``bench/ingested.py``'s set, which has corrections); the
decision log (first page, and filtered by the biggest host); the log filtered by outcome, revisit and
calibration (issue 24: they read the stored outcomes); the API's piles pages with a read token created in
the database: ``GET /api/v1/piles`` (first page of 100, all hosts), the biggest host's first
page, a page of the 500 maximum, and page 11 (reached by following ``next`` ten times); and
``manage.py piles --format json`` in a subprocess (wall time and that process's peak RSS).

The pile, the lesson and the host page are also asked again with the ETag they carried (a 304 while
nothing they show changed).

Prints a Markdown table; every row carries the 1-minute load average when it started, since the machine
is shared. A request that fails is reported with its status (or exception), not retried.

The test client keeps this process's one database connection from request to request, whatever
``CONN_MAX_AGE`` says (it takes Django's per-request close off the request signals), so opening a
connection (6-9 ms on PostgreSQL) is in no figure here. A server pays it per request only with
``CONN_MAX_AGE=0``; PostgreSQL's default is 60 (config/settings.py). ``locust_run.py`` measures over HTTP.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from html import unescape
from urllib.parse import parse_qsl, unquote, urlencode, urljoin

from generate import ROOT, TEXT_NEEDLE, _env, setup_django

BENCH_TOKEN = "lpr_bench-read-token-for-the-pages-benchmark-000"
SORT_LINK = re.compile(r"""[?&;]sort=([^&"'#]+)""")
ANCHOR = re.compile(r"<a\s[^>]*>", re.IGNORECASE)
HREF = re.compile(r"""\shref=["']([^"']+)["']""")
NEXT_REL = re.compile(r"""\srel=["'][^"']*\bnext\b""")


@dataclass
class Row:
    label: str
    target: str
    times: list[float]
    queries: int | None
    status: str
    size: int
    load: float

    def cells(self) -> list[str]:
        if not self.times:
            return [self.label, f"`{self.target}`", "–", "–", "–", self.status, "–", f"{self.load:.1f}"]
        median = statistics.median(self.times)
        spread = f"{min(self.times):.0f}–{max(self.times):.0f}"
        queries = "–" if self.queries is None else str(self.queries)
        return [
            self.label,
            f"`{self.target}`",
            f"{median:.1f}",
            spread,
            queries,
            self.status,
            f"{self.size:,}",
            f"{self.load:.1f}",
        ]


def load_average() -> float:
    return os.getloadavg()[0]


def targets() -> dict[str, str]:
    """The biggest host (most entities), the largest pile on it or anywhere, and one of its live lessons;
    the host with the most decisions and its largest pile."""
    from django.apps import apps
    from django.db import connection

    Host, Lesson = apps.get_model("lessons", "Host"), apps.get_model("lessons", "Lesson")
    q = connection.ops.quote_name
    lesson, host = q(Lesson._meta.db_table), q(Host._meta.db_table)
    fields = ("host", "namespace", "subject", "status")
    col = {name: q(Lesson._meta.get_field(name).column) for name in fields}
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT h.name FROM {lesson} l JOIN {host} h ON h.id = l.{col['host']} "
            f"GROUP BY h.name ORDER BY count(*) DESC LIMIT 1"
        )
        biggest = cursor.fetchone()[0]
        cursor.execute(
            f"SELECT h.name, l.{col['namespace']}, l.{col['subject']}, count(*) FROM {lesson} l "
            f"JOIN {host} h ON h.id = l.{col['host']} WHERE l.{col['status']} = 'live' "
            f"GROUP BY h.name, l.{col['namespace']}, l.{col['subject']} ORDER BY count(*) DESC LIMIT 1"
        )
        pile_host, namespace, subject, members = cursor.fetchone()
        # the host with the most decisions, and its largest pile: a pile page reads the newest decision on
        # its entity, which a host's long log must not slow down
        cursor.execute(
            "SELECT host, count(*) FROM review_decision GROUP BY host ORDER BY count(*) DESC LIMIT 1"
        )
        logged, decisions = cursor.fetchone() or ("", 0)
        cursor.execute(
            f"SELECT l.{col['namespace']}, l.{col['subject']}, count(*) FROM {lesson} l "
            f"JOIN {host} h ON h.id = l.{col['host']} WHERE l.{col['status']} = 'live' AND h.name = %s "
            f"GROUP BY l.{col['namespace']}, l.{col['subject']} ORDER BY count(*) DESC LIMIT 1",
            [logged],
        )
        logged_pile = cursor.fetchone() or ("", "", 0)
    member = Lesson.objects.filter(
        host__name=pile_host, namespace=namespace, subject=subject, status="live"
    ).values_list("hash", flat=True)[0]
    return {
        "host": biggest,
        "pile_host": pile_host,
        "namespace": namespace,
        "subject": subject,
        "members": str(members),
        "lesson": member,
        "logged_host": logged,
        "logged_decisions": f"{decisions:,}",
        "logged_pile": urlencode({"host": logged, "namespace": logged_pile[0], "subject": logged_pile[1]}),
        "logged_members": str(logged_pile[2]),
    }


def bench_token() -> str:
    """A read token for every host, stored (as SHA-256) in the database; the raw token is returned."""
    from django.apps import apps

    ApiToken = apps.get_model("review", "ApiToken")
    digest = hashlib.sha256(BENCH_TOKEN.encode()).hexdigest()
    ApiToken.objects.get_or_create(
        token_hash=digest,
        defaults={"name": "bench", "prefix": BENCH_TOKEN[:12], "can_read": True, "can_ingest": False},
    )
    return BENCH_TOKEN


def measure(client, label: str, url: str, *, runs: int, headers: dict | None = None) -> Row:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    load = load_average()
    headers = headers or {}
    try:
        client.get(url, headers=headers)  # warm-up
        with CaptureQueriesContext(connection) as captured:
            response = client.get(url, headers=headers)
        # Read now: the next request clears the connection's query log the count is sliced from.
        queries = len(captured)
        status = str(response.status_code)
        if response.status_code not in (200, 304):  # 304: a conditional read (If-None-Match)
            return Row(label, url, [], queries, status, len(response.content), load)
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            response = client.get(url, headers=headers)
            times.append((time.perf_counter() - started) * 1000)
        return Row(label, url, times, queries, status, len(response.content), load)
    except Exception as exc:  # a page that fails at this scale is a finding, not the end of the run
        return Row(label, url, [], None, f"error: {type(exc).__name__}: {str(exc)[:80]}", 0, load)


def page_tag(client, url: str) -> dict:
    """``If-None-Match`` with the ETag ``url`` carries now (a page's conditional read: 304 while nothing
    it shows changed)."""
    return {"If-None-Match": client.get(url).get("ETag", "")}


def queue_sorts(client) -> list[str]:
    """The ``sort`` values the queue's header links offer, in page order, without repeats."""
    html = client.get("/").content.decode()
    seen: dict[str, None] = {}
    for value in SORT_LINK.findall(html.replace("&amp;", "&")):
        seen.setdefault(unquote(value), None)
    return list(seen)


def next_link(html: str) -> str | None:
    """The href of the page's ``rel="next"`` link (HTML-unescaped), or None on the last page."""
    for tag in ANCHOR.findall(html):
        if NEXT_REL.search(tag):
            found = HREF.search(tag)
            if found:
                return unescape(found.group(1))
    return None


def follow_next(client, url: str, times: int) -> str:
    """The URL reached from ``url`` by following its ``rel="next"`` link ``times`` times (the queue's page
    ``times + 1``); raises ``LookupError`` when the pages end first. Relative hrefs (``?page=2``) resolve
    against the page they are on."""
    for step in range(times):
        response = client.get(url)
        if response.status_code != 200:
            raise LookupError(f"{url}: HTTP {response.status_code} after {step} next link(s)")
        href = next_link(response.content.decode())
        if href is None:
            raise LookupError(f"the pages end at page {step + 1}")
        url = urljoin(url, href)
    return url


def api_page_after(client, url: str, headers: dict, times: int) -> str:
    """The API URL of the page reached from ``url`` by following its ``next`` cursor ``times`` times."""
    for step in range(times):
        body = client.get(url, headers=headers).json()
        if not body.get("next"):
            raise LookupError(f"the piles end at page {step + 1}")
        base = url.split("?")[0]
        params = dict(parse_qsl(url.split("?", 1)[1])) if "?" in url else {}
        url = base + "?" + urlencode({**params, "cursor": body["next"]})
    return url


def decision_count() -> int:
    from django.apps import apps

    return apps.get_model("review", "Decision").objects.count()


def pile_count() -> int:
    from lessons.selectors.piles import pile_queue

    return pile_queue().count()


def piles_command(db_url: str, *, runs: int) -> Row:
    """``manage.py piles --format json`` in a child process: wall time, output size, the child's peak RSS."""
    load = load_average()
    times, peak, size, status = [], 0.0, 0, "ok"
    for _ in range(runs):
        with tempfile.TemporaryFile() as out:
            started = time.perf_counter()
            proc = subprocess.Popen(
                [sys.executable, "manage.py", "piles", "--format", "json"],
                cwd=ROOT,
                env=_env(db_url),
                stdout=out,
                stderr=subprocess.PIPE,
            )
            _, code, usage = os.wait4(proc.pid, 0)
            elapsed = (time.perf_counter() - started) * 1000
            err = proc.stderr.read().decode(errors="replace").strip().splitlines()
            proc.stderr.close()
            size = out.seek(0, 2)
        if os.waitstatus_to_exitcode(code) != 0:
            status = f"exit {os.waitstatus_to_exitcode(code)}: {(err or [''])[-1][:80]}"
            break
        times.append(elapsed)
        peak = max(peak, usage.ru_maxrss / 1024)
    label = f"`manage.py piles --format json` (peak RSS {peak:.0f} MiB)" if times else "`manage.py piles`"
    return Row(label, "manage.py piles --format json", times, None, status, size, load)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--runs", type=int, default=7, help="timed requests per page (default 7)")
    parser.add_argument("--cmd-runs", type=int, default=1, help="runs of manage.py piles (default 1)")
    parser.add_argument("--queue-page", type=int, default=50, help="the queue page reached by next links")
    parser.add_argument("--api-page", type=int, default=11, help="the API piles page reached by cursors")
    parser.add_argument("--api-limit", type=int, default=100, help="limit of that API page (default 100)")
    parser.add_argument(
        "--only",
        default="",
        help="groups: queue,sorts,pile,lesson,hosts,log,outcomes,api,command (default all), topics",
    )
    args = parser.parse_args()
    only = {g for g in args.only.split(",") if g}

    def wanted(group: str) -> bool:
        # topics (a host's unmatched topics) only when named: bench/ingested.py's set has the corrections
        return group in only or (not only and group != "topics")

    os.environ["ALLOWED_HOSTS"] = "testserver,127.0.0.1,localhost"
    setup_django(args.db)
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    assert not settings.DEBUG
    started_load = load_average()
    t = targets()
    # stored before any ETag is read: its first creation is a write, which would change them all
    auth = {"Authorization": f"Bearer {bench_token()}"}
    client = Client(raise_request_exception=True)
    client.force_login(get_user_model().objects.get(username="reviewer"))
    big = t["host"]
    pile_qs = urlencode({"host": t["pile_host"], "namespace": t["namespace"], "subject": t["subject"]})
    plan: list[tuple[str, str, str | Callable[[], str], dict | None]] = []
    if wanted("queue"):
        plan += [
            ("queue", "queue, first page", "/", None),
            ("queue", "queue, host filter (biggest host)", "/?" + urlencode({"host": big}), None),
            ("queue", f"queue, text filter ({TEXT_NEEDLE!r})", "/?" + urlencode({"q": TEXT_NEEDLE}), None),
            (
                "queue",
                f"queue, page {args.queue_page} ({args.queue_page - 1} next links)",
                lambda: follow_next(client, "/", args.queue_page - 1),
                None,
            ),
        ]
    if wanted("sorts"):
        for sort in queue_sorts(client):
            plan.append(("sorts", f"queue sorted by {sort}", "/?" + urlencode({"sort": sort}), None))
    if wanted("pile"):
        plan.append(("pile", f"pile of {t['members']} members", f"/pile/?{pile_qs}", None))
        plan.append(
            (
                "pile",
                "the same pile with its ETag (304)",
                f"/pile/?{pile_qs}",
                page_tag(client, f"/pile/?{pile_qs}"),
            )
        )
        if t["logged_host"]:
            label = (
                f"pile of {t['logged_members']} members on the host with the most decisions"
                f" ({t['logged_decisions']})"
            )
            plan.append(("pile", label, f"/pile/?{t['logged_pile']}", None))
    if wanted("lesson"):
        lesson_url = f"/lessons/{t['pile_host']}/{t['lesson']}/"
        plan.append(("lesson", "lesson page", lesson_url, None))
        plan.append(
            ("lesson", "the same lesson page with its ETag (304)", lesson_url, page_tag(client, lesson_url))
        )
    if wanted("hosts"):
        plan.append(("hosts", "hosts", "/hosts/", None))
        plan.append(("hosts", "biggest host's page", f"/hosts/{big}/", None))
        plan.append(
            (
                "hosts",
                "the same host page with its ETag (304)",
                f"/hosts/{big}/",
                page_tag(client, f"/hosts/{big}/"),
            )
        )
    if wanted("topics"):
        plan.append(("topics", "biggest host's unmatched topics", f"/hosts/{big}/unmatched-topics/", None))
    if wanted("log"):
        n = decision_count()
        plan.append(("log", f"decision log ({n:,} decisions)", "/decisions/", None))
        plan.append(
            (
                "log",
                "decision log, host filter (biggest host)",
                "/decisions/?" + urlencode({"host": big}),
                None,
            )
        )
    if wanted("outcomes"):  # issue 24: the pages that read the decisions' outcomes
        n = decision_count()
        plan += [
            (
                "outcomes",
                f"decision log, outcome filter contradicted ({n:,} decisions)",
                "/decisions/?outcome=contradicted",
                None,
            ),
            ("outcomes", "revisit (contradicted decisions, newest first)", "/decisions/revisit/", None),
            ("outcomes", "calibration (the reviewer's own, by month)", "/decisions/calibration/", None),
        ]
    if wanted("api"):
        plan += [
            ("api", f"`GET /api/v1/piles` first 100 (of {pile_count():,} piles)", "/api/v1/piles", auth),
            ("api", "`GET /api/v1/piles?host=` (biggest host), first 100", f"/api/v1/piles?host={big}", auth),
            ("api", "`GET /api/v1/piles?limit=500`", "/api/v1/piles?limit=500", auth),
            (
                "api",
                f"`GET /api/v1/piles?limit={args.api_limit}` page {args.api_page} (by cursors)",
                lambda: api_page_after(
                    client, f"/api/v1/piles?limit={args.api_limit}", auth, args.api_page - 1
                ),
                auth,
            ),
            (
                "api",
                "`GET /api/v1/piles` again with its ETag (304)",
                "/api/v1/piles",
                {**auth, "If-None-Match": client.get("/api/v1/piles", headers=auth).get("ETag", "")},
            ),
        ]

    print(
        f"database: {connection.vendor} ({args.db}); biggest host {big}; "
        f"{args.runs} timed runs after a warm-up; load {started_load:.1f} at start"
    )
    print()
    header = ["page", "URL", "median ms", "min–max ms", "queries", "status", "bytes", "load"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header), flush=True)
    # Each row as soon as it is measured: at 1M a full run takes long, and a cut-short run keeps its rows.
    for _, label, url, headers in plan:
        if callable(url):  # a page reached by following links: found now, then measured as any other
            try:
                url = url()
            except LookupError as exc:
                print(
                    f"| {label} | – | – | – | – | not reached: {exc} | – | {load_average():.1f} |", flush=True
                )
                continue
        print(
            "| " + " | ".join(measure(client, label, url, runs=args.runs, headers=headers).cells()) + " |",
            flush=True,
        )
    if wanted("command"):
        print("| " + " | ".join(piles_command(args.db, runs=args.cmd_runs).cells()) + " |")
    print()
    print(f"load {load_average():.1f} at end")


if __name__ == "__main__":
    main()
