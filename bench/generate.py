"""Scale-set generator: writes the benchmark data straight into the migrated tables, fast.

Usage::

    .venv/bin/python bench/generate.py --db sqlite:////tmp/lpr-1m.sqlite3 --scale 1m
    .venv/bin/python bench/generate.py --db postgres://postgres@127.0.0.1:5432/lpr_bench --scale 10k
    .venv/bin/python bench/generate.py --db sqlite:////tmp/lpr-1m-1md.sqlite3 --scale 1m --decisions 1000000

The target is WIPED first (SQLite: the file is deleted; PostgreSQL: the ``public`` schema is dropped, and
only a database whose name contains ``bench`` is accepted), then migrated with ``manage.py migrate``.

Shape (issue 10, item 5), from a fixed seed, at ``--scale 1m`` (``10k``: 20 hosts, 1,000 entities, 10,000
lessons, the same proportions):

- 200 hosts, budgets on at ``max_active`` 8, entities spread unevenly (Zipf weights: a few hosts hold most);
- 100,000 entities, 1,000,000 lessons (~85% live; the rest retracted or superseded);
- a latest verdict on ~60% of lessons (a ``Verdict`` row and ``lessons.latest_verdict``), mixed over held,
  regressed, drifted, held_costlier, unmeasured;
- ~5% of entities over budget with 9-40 live members, and a few (5; at 10k: 1) with 200;
- recurrence counts (``RecurrenceCount`` rows) on ~10% of lessons, a third of them recurring (>= 2);
- a draft on ~20% of piles (mostly pending);
- 10,000 decisions (``--decisions``) with a valid hash chain and the chain head row, checked with
  ``manage.py verify_decisions``;
- the demo users viewer, reviewer and admin (passwords as ``manage.py demo`` gives them).

Rows go in through the database connection, not the app's services, so that the generator does not
depend on where the app's Python code lives: table and column names come from ``Model._meta``; fields
the generator does not set get their model default (so a new field with a default needs no change
here). SQLite: ``executemany`` in one transaction with bulk-load PRAGMAs; PostgreSQL: ``COPY`` through
psycopg 3, then ``VACUUM ANALYZE`` (what autovacuum reaches on a settled database). SQLite is left
without ``ANALYZE``, as the app leaves it.

Afterwards the derived counts are rebuilt with ``manage.py piles --recount`` (the per-entity counts of
issue 10, item 1), and PostgreSQL gets ``VACUUM ANALYZE`` once more, since the recount rewrote them.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import time
import warnings
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import urlparse

ROOT = Path(__file__).resolve().parents[1]

SEED = 20261201
SCALES = {
    "10k": {"hosts": 20, "entities": 1_000, "lessons": 10_000, "huge_piles": 1},
    "1m": {"hosts": 200, "entities": 100_000, "lessons": 1_000_000, "huge_piles": 5},
}
MAX_ACTIVE = 8
OVER_BUDGET_SHARE = 0.05
HUGE_PILE = 200
VERDICT_SHARE = 0.60
VERDICT_MIX = (("held", 40), ("regressed", 15), ("drifted", 15), ("held_costlier", 15), ("unmeasured", 15))
RECURRENCE_SHARE = 0.10
DRAFT_SHARE = 0.20
CHUNK = 20_000
# The demo logins (as ``manage.py demo`` creates them); the page benchmarks sign in as "reviewer".
USERS = (
    ("viewer", "viewer-demo-pass", "viewer"),
    ("reviewer", "reviewer-demo-pass", "reviewer"),
    ("admin", "admin-demo-pass", "admin"),
)
WORDS = (
    "invoice capture staging model column join retry quota budget ledger refund payout cache index "
    "schema report metric export import session token deploy rollback review audit alert queue batch "
    "window partition vendor tenant billing currency rounding timezone locale header footer template "
    "upload parser"
).split()
AREAS = ("desk", "ops", "data", "web", "ml", "infra", "fin", "crm")
BASE_TIME = datetime(2026, 1, 1, tzinfo=UTC)
# The text filter the page benchmark uses: a word that appears in no host, namespace or subject, so
# that matching it needs the lesson texts. One lesson in ~50 carries it.
TEXT_NEEDLE = "flaky"


def _env(db_url: str) -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": db_url, "DEBUG": "0", "SECRET_KEY": "bench"}


def manage(db_url: str, *args: str, capture: bool = False) -> subprocess.CompletedProcess:
    """Run ``manage.py ARGS`` against ``db_url`` (DEBUG off); raises ``CalledProcessError`` on failure."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=_env(db_url),
        check=True,
        text=True,
        capture_output=capture,
    )


def wipe(db_url: str) -> None:
    """Empty the target: delete the SQLite file, or drop PostgreSQL's public schema (bench databases only;
    one that does not exist yet is created, from the server's ``postgres`` database)."""
    parsed = urlparse(db_url)
    if parsed.scheme.startswith("sqlite"):
        path = Path(parsed.path[1:])  # dj-database-url: sqlite:////abs or sqlite:///relative
        for suffix in ("", "-wal", "-shm", "-journal"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        return
    name = parsed.path.lstrip("/")
    if "bench" not in name:
        sys.exit(f"refusing to wipe database {name!r}: its name must contain 'bench'")
    import psycopg
    from psycopg import sql

    with psycopg.connect(parsed._replace(path="/postgres").geturl(), autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone() is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("DROP SCHEMA IF EXISTS public CASCADE")
        conn.execute("CREATE SCHEMA public")


def setup_django(db_url: str) -> None:
    os.environ.update(_env(db_url))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    sys.path.insert(0, str(ROOT))
    # Whitenoise warns once per process that collectstatic has not run; the benchmarks serve no assets.
    warnings.filterwarnings("ignore", message="No directory at")
    import django

    django.setup()


def sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def format_at(moment: datetime) -> str:
    """UTC ISO 8601 with milliseconds and ``Z``: how decisions.md's record writes ``at``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def record_hash(prev_hash: str, record: dict) -> str:
    """``sha256_hex(prev_hash + "\\n" + canonical)``, canonical = the record without ``hash`` and
    ``prev_hash``, sorted keys, separators ``,`` ``:``, non-ASCII as is. spec: decisions.md, "The record"
    (the same bytes as review's chain code hashes; ``manage.py verify_decisions`` checks the result)."""
    body = {k: v for k, v in record.items() if k not in ("hash", "prev_hash")}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return sha(prev_hash + "\n" + canonical)


class TableWriter:
    """Buffered bulk insert of one model's rows; ``fields`` are the model field names each row gives.

    Every other concrete field gets its model default once (prepared for this database), so rows stay
    plain tuples. SQLite: ``executemany``; PostgreSQL: ``COPY ... FROM STDIN``. Call ``close`` to flush.
    """

    def __init__(self, connection, model, fields: tuple[str, ...]):
        from django.db.models.fields import NOT_PROVIDED

        self.connection = connection
        self.fields = [model._meta.get_field(name) for name in fields]
        given = set(fields)
        # The auto primary key, when not given, is the database's to number.
        auto = model._meta.auto_field
        rest = [f for f in model._meta.concrete_fields if f.name not in given and f is not auto]
        missing = [f.name for f in rest if f.default is NOT_PROVIDED and not f.null and not _auto_now(f)]
        if missing:
            raise SystemExit(f"{model.__name__}: the generator sets no value for {missing}; add them")
        now = datetime.now(UTC)
        self.defaults = tuple(
            f.get_db_prep_save(now if _auto_now(f) else f.get_default(), connection) for f in rest
        )
        quote = connection.ops.quote_name
        columns = ", ".join(quote(f.column) for f in (*self.fields, *rest))
        self.table = model._meta.db_table
        self.vendor = connection.vendor
        if self.vendor == "postgresql":
            self.sql = f"COPY {quote(self.table)} ({columns}) FROM STDIN"
        else:
            marks = ", ".join(["%s"] * (len(self.fields) + len(rest)))
            self.sql = f"INSERT INTO {quote(self.table)} ({columns}) VALUES ({marks})"
        self.json_fields = {i for i, f in enumerate(self.fields) if f.get_internal_type() == "JSONField"}
        self.rows: list[tuple] = []
        self.written = 0

    def add(self, *values) -> None:
        self.rows.append(values)
        if len(self.rows) >= CHUNK:
            self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        rows = [self._prep(row) + self.defaults for row in self.rows]
        if self.vendor == "postgresql":
            raw = self.connection.connection
            with raw.cursor() as cursor, cursor.copy(self.sql) as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            with self.connection.cursor() as cursor:
                cursor.executemany(self.sql, rows)
        self.written += len(rows)
        self.rows = []

    def _prep(self, row: tuple) -> tuple:
        out = list(row)
        for i, value in enumerate(out):
            if i in self.json_fields:
                out[i] = json.dumps(value)
            elif isinstance(value, datetime):
                out[i] = self.connection.ops.adapt_datetimefield_value(value)
        return tuple(out)

    close = flush


def _auto_now(field) -> bool:
    return bool(getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False))


def _bulk_mode(connection) -> None:
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            for pragma in ("synchronous = OFF", "journal_mode = MEMORY", "cache_size = -400000"):
                cursor.execute(f"PRAGMA {pragma}")
            cursor.execute("PRAGMA temp_store = MEMORY")


def generate(*, scale: str, decisions: int, seed: int = SEED) -> dict[str, int]:
    """Write the scale set into the (migrated, empty) default database; returns the row counts."""
    from django.apps import apps
    from django.db import connection, transaction

    from lessons.core.text import format_datetime
    from review.services.chain_head import head_seal
    from review.services.decision_weeks import decision_weeks_rebuild

    model = apps.get_model
    Host, Lesson, Verdict = model("lessons", "Host"), model("lessons", "Lesson"), model("lessons", "Verdict")
    RecurrenceCount, Draft = model("lessons", "RecurrenceCount"), model("lessons", "Draft")
    Decision, ChainHead = model("review", "Decision"), model("review", "ChainHead")

    shape = SCALES[scale]
    rng = random.Random(seed)
    n_hosts, n_entities, n_lessons = shape["hosts"], shape["entities"], shape["lessons"]
    connection.ensure_connection()
    _bulk_mode(connection)

    with transaction.atomic():
        hosts = TableWriter(connection, Host, ("id", "name", "max_active", "budget_enabled", "created_at"))
        host_names = [f"bench-{i:03d}" for i in range(n_hosts)]
        for i, name in enumerate(host_names):
            hosts.add(i + 1, name, MAX_ACTIVE, True, BASE_TIME)
        hosts.close()

        # Entities: every host gets one, the rest by Zipf weights (host 0 holds the most).
        weights = [1 / (i + 1) ** 1.1 for i in range(n_hosts)]
        entity_host = list(range(n_hosts)) + rng.choices(
            range(n_hosts), weights=weights, k=n_entities - n_hosts
        )
        over = rng.sample(range(n_entities), k=int(n_entities * OVER_BUDGET_SHARE))
        live_count = [rng.choice((8,) * 14 + (7,) * 4 + (6,) * 2) for _ in range(n_entities)]
        for rank, e in enumerate(over):
            live_count[e] = HUGE_PILE if rank < shape["huge_piles"] else rng.randint(MAX_ACTIVE + 1, 40)
        not_live = [0] * n_entities
        for e in rng.choices(range(n_entities), k=max(0, n_lessons - sum(live_count))):
            not_live[e] += 1
        drafted = set(rng.sample(over, k=int(len(over) * DRAFT_SHARE)))

        lessons = TableWriter(
            connection,
            Lesson,
            (
                "id", "host", "hash", "namespace", "subject", "text", "text_hash", "created_at", "status",
                "lesson_id", "store", "superseded_by", "latest_verdict",
            ),
        )  # fmt: skip
        verdicts = TableWriter(
            connection,
            Verdict,
            (
                "host", "lesson", "key", "verdict", "metric", "baseline", "current", "horizon_ms",
                "measured_at",
            ),
        )  # fmt: skip
        recurrence = TableWriter(
            connection, RecurrenceCount, ("lesson", "sessions_shown", "recurred", "recurred_sessions")
        )
        drafts = TableWriter(
            connection,
            Draft,
            (
                "host", "ext_id", "namespace", "subject", "text", "supersedes", "drafted_by", "gate_ground",
                "gate_verify", "confidence", "created_at", "status", "decided_at",
            ),
        )  # fmt: skip
        verdict_names = [v for v, w in VERDICT_MIX for _ in range(w)]
        retired: list[tuple] = []  # (host name, namespace, subject, hash, lesson_id) for the decisions
        n = 0
        for e in range(n_entities):
            h = entity_host[e]
            namespace = "" if e % 10 == 0 else f"{AREAS[e % len(AREAS)]}.{WORDS[(e // 8) % len(WORDS)]}"
            subject = f"{WORDS[e % len(WORDS)]}_{e}"
            live_hashes = []
            for k in range(live_count[e] + not_live[e]):
                n += 1
                is_live = k < live_count[e]
                words = rng.sample(WORDS, 6)
                if n % 50 == 0:
                    words[2] = TEXT_NEEDLE
                text = f"When {words[0]} {words[1]} meets {words[2]}, check {' '.join(words[3:])} (rule {n})."
                lesson_hash = sha(f"{seed}:{n}")
                created = BASE_TIME + timedelta(seconds=n * 17 + rng.randint(0, 3600))
                status, superseded_by = "live", None
                if not is_live:
                    status = "retracted" if rng.random() < 0.6 else "superseded"
                    superseded_by = live_hashes[0] if status == "superseded" and live_hashes else None
                verdict = rng.choice(verdict_names) if rng.random() < VERDICT_SHARE else None
                lessons.add(
                    n, h + 1, lesson_hash, namespace, subject, text, sha(text), created, status,
                    f"L-{n:07d}", "bench-store", superseded_by, verdict,
                )  # fmt: skip
                if verdict is not None:
                    verdicts.add(
                        h + 1, n, sha(f"v:{n}"), verdict, "pass_rate", 0.8, 0.8 + rng.uniform(-0.2, 0.2),
                        86_400_000, created + timedelta(days=1),
                    )  # fmt: skip
                if rng.random() < RECURRENCE_SHARE:
                    recurred_sessions = rng.choice((0, 1, 2, 3, 5))
                    recurrence.add(
                        n, rng.randint(5, 60), recurred_sessions + rng.randint(0, 3), recurred_sessions
                    )
                if is_live:
                    live_hashes.append(lesson_hash)
                elif status == "retracted":
                    retired.append((host_names[h], namespace, subject, lesson_hash, f"L-{n:07d}"))
            if e in drafted:
                pending = rng.random() < 0.9
                decided = None if pending else BASE_TIME + timedelta(days=301)
                drafts.add(
                    h + 1, f"D-{e:06d}", namespace, subject, f"Consolidates {subject}: {' '.join(words)}.",
                    live_hashes[:3], "bench-drafter", "pass", "pass", 0.9, BASE_TIME + timedelta(days=300),
                    "pending" if pending else "rejected", decided,
                )  # fmt: skip
        for writer in (lessons, verdicts, recurrence, drafts):
            writer.close()

        head_seq, head_hash = _decisions(connection, Decision, rng=rng, count=decisions, retired=retired)
        last_at = Decision.objects.filter(seq=head_seq).values_list("at", flat=True).first()
        head_at = format_datetime(last_at) if last_at is not None else ""
        head = {"seq": head_seq, "hash": head_hash, "at": head_at}
        ChainHead.objects.update_or_create(id=1, defaults={**head, "mac": head_seal(**head)})  # sealed
        decision_weeks_rebuild()  # the log chart's rollup, as decisions_append_many would have kept it
        _users()
    if connection.vendor == "postgresql":
        _after_copy(connection, (Host, Lesson, Verdict, Draft, Decision))
    return {
        "hosts": n_hosts,
        "entities": n_entities,
        "lessons": lessons.written,
        "live": sum(live_count),
        "piles": len(over),
        "verdicts": verdicts.written,
        "recurrence_counts": recurrence.written,
        "drafts": drafts.written,
        "decisions": decisions,
    }


def _decisions(
    connection, Decision, *, rng: random.Random, count: int, retired: list[tuple]
) -> tuple[int, str]:
    """``count`` retire/restore decisions on retracted lessons, hash-chained from the genesis."""
    writer = TableWriter(
        connection,
        Decision,
        (
            "id", "seq", "at", "actor", "action", "host", "namespace", "subject", "lesson_hash", "lesson_id",
            "store", "batch", "reason_code", "reason", "evidence", "prev_hash", "hash",
        ),
    )  # fmt: skip
    codes = ("duplicate", "restates_another", "regressed", "drifted", "recurring", "obsolete", None)
    prev = ""
    start = BASE_TIME + timedelta(days=200)
    for seq in range(1, count + 1):
        host, namespace, subject, lesson_hash, lesson_id = retired[(seq * 7919) % len(retired)]
        at = start + timedelta(milliseconds=seq * 61_000 + rng.randint(0, 999))
        record = {
            "seq": seq,
            "at": format_at(at),
            "actor": ("reviewer", "admin", "priya")[seq % 3],
            "action": "retire" if seq % 10 else "restore",
            "host": host,
            "namespace": namespace,
            "subject": subject,
            "lesson_hash": lesson_hash,
            "lesson_id": lesson_id,
            "store": "bench-store",
            "draft_id": None,
            "created_hash": None,
            "batch": sha(f"batch:{seq // 3}")[:32],
            "reason_code": codes[seq % len(codes)],
            "reason": f"bench decision {seq}: over budget",
            "evidence": {"count": 12, "max_active": MAX_ACTIVE, "verdict": None, "recurrence": None},
            "prev_hash": prev,
        }
        record["hash"] = record_hash(prev, record)
        r = record
        writer.add(
            seq, seq, at, r["actor"], r["action"], host, namespace, subject, lesson_hash, lesson_id,
            r["store"], r["batch"], r["reason_code"], r["reason"], r["evidence"], prev, r["hash"],
        )  # fmt: skip
        prev = r["hash"]
    writer.close()
    return count, prev


def _users() -> None:
    from django.contrib.auth.models import Group, User

    for username, password, group in USERS:
        user = User.objects.create_user(username, password=password, is_staff=group == "admin")
        user.groups.set(Group.objects.filter(name=group))


def _vacuum_analyze(connection) -> None:
    """PostgreSQL: ``VACUUM ANALYZE`` on Django's open ``connection`` (outside a transaction, as it must
    run: autocommit on for it, then as it was)."""
    raw = connection.connection
    autocommit = raw.autocommit
    raw.autocommit = True
    raw.execute("VACUUM ANALYZE")
    raw.autocommit = autocommit


def _after_copy(connection, models) -> None:
    """PostgreSQL: move each identity sequence past the ids written, then VACUUM ANALYZE."""
    with connection.cursor() as cursor:
        for m in models:
            table = connection.ops.quote_name(m._meta.db_table)
            cursor.execute(
                f"SELECT setval(pg_get_serial_sequence(%s, 'id'), (SELECT max(id) FROM {table}))",
                [m._meta.db_table],
            )
    _vacuum_analyze(connection)


def settle(db_url: str) -> None:
    """PostgreSQL: ``VACUUM ANALYZE`` once more after the recount, which rewrote every ``EntityCount`` row:
    without it the queue's COUNT scanned the table (stale statistics, no visibility map: 13 ms instead of
    1 ms at 1M lessons), which autovacuum mends on a settled database."""
    if not db_url.startswith("postgres"):
        return
    from django.db import connection

    connection.ensure_connection()
    _vacuum_analyze(connection)


def rebuild_derived(db_url: str) -> str:
    """The hook for derived counts (issue 10, item 1): ``manage.py piles --recount`` when it exists."""
    usage = manage(db_url, "piles", "--help", capture=True).stdout
    if "--recount" not in usage:
        return "skipped (manage.py piles has no --recount yet)"
    started = time.perf_counter()
    manage(db_url, "piles", "--recount")
    return f"manage.py piles --recount: {time.perf_counter() - started:.1f} s"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True, help="sqlite:///PATH or postgres://... (wiped first)")
    parser.add_argument("--scale", choices=sorted(SCALES), required=True)
    parser.add_argument("--decisions", type=int, default=10_000, help="decisions in the log (default 10000)")
    parser.add_argument("--no-verify", action="store_true", help="skip manage.py verify_decisions")
    args = parser.parse_args()

    started = time.perf_counter()
    wipe(args.db)
    manage(args.db, "migrate", "-v0")
    migrated = time.perf_counter()
    setup_django(args.db)
    counts = generate(scale=args.scale, decisions=args.decisions)
    written = time.perf_counter()
    print(f"migrate {migrated - started:.1f} s, write {written - migrated:.1f} s")
    print(", ".join(f"{k} {v:,}" for k, v in counts.items()))
    print(f"derived counts: {rebuild_derived(args.db)}")
    settle(args.db)
    if not args.no_verify:
        check = time.perf_counter()
        print(manage(args.db, "verify_decisions", capture=True).stdout.strip(), end="")
        print(f" ({time.perf_counter() - check:.1f} s)")
    print(f"total {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
