"""Recurrence benchmark: time and peak memory of the pure ``attribute`` and of ``recurrence_recompute``.

Usage:
    DEBUG=1 .venv/bin/python bench/recurrence_bench.py [--pure 0.5,1,2] [--db 0.5,1,2]

A scale of 1 is 100,000 sessions, 1,000,000 exposures, 200,000 corrections (90% user corrections)
and 10,000 lesson versions (7,000 keys with a lesson_id, a fifth of them with two texts; 3,000
without). Every measurement runs in a fresh child process, so its peak resident memory is its own:

- pure: the data is generated in memory, then ``attribute`` runs over all of it once for the time
  and once under ``tracemalloc`` for the peak of what it allocates beyond its input;
- db: one child writes the data to a fresh SQLite file (bulk inserts, not measured); another then
  runs ``recurrence_recompute()``, which rebuilds every attribution and count, and after it a
  ``recurrence_refresh`` of 100 sessions (what an ingest of new signals costs).

The data is deterministic (seeded). Results and the machine are in docs/benchmarks.md. Never run by
the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SESSIONS = 100_000
EXPOSURES_PER_SESSION = 10
CORRECTIONS = 200_000
LESSONS = 10_000
VOCABULARY = 4_000
BASE_MS = 1_790_000_000_000
SEED = 20261005


@dataclass(frozen=True)
class Data:
    """Generated rows as plain tuples (shared by both parts)."""

    lessons: list[tuple]  # (hash, store, lesson_id, text, created_ms, status)
    exposures: list[tuple]  # (session, lesson index, shown_ms)
    corrections: list[tuple]  # (session, kind, text, corrected_ms, turn_ms or None)


def generate(scale: float) -> Data:
    """Lessons, exposures and corrections at ``scale``; half the user corrections echo a shown lesson."""
    rng = random.Random(SEED)
    words = [f"term{i}" for i in range(VOCABULARY)]
    n_lessons = int(LESSONS * scale)
    lessons: list[tuple] = []
    keyed = []  # per key: indices of its versions, oldest first
    while len(lessons) < n_lessons:
        k = len(keyed)
        text_words = rng.sample(words, 6)
        anchor = f"`col_{rng.randrange(VOCABULARY)}`"
        with_id = k % 10 < 7
        versions = 2 if with_id and k % 5 == 0 and len(lessons) + 2 <= n_lessons else 1
        indices = []
        for v in range(versions):
            if v:
                text_words = text_words[:4] + rng.sample(words, 2)
            text = f"Use {anchor} with {' '.join(text_words)} in staging models (rule {k}.{v})."
            status = "live" if v == versions - 1 else "superseded"
            lessons.append(
                (
                    f"{k:032x}{v:032x}",
                    "team" if with_id else None,
                    f"L-{k}" if with_id else None,
                    text,
                    BASE_MS - 86_400_000 * 30 + v * 86_400_000,
                    status,
                )
            )
            indices.append(len(lessons) - 1)
        keyed.append(indices)
    n_sessions = int(SESSIONS * scale)
    exposures: list[tuple] = []
    shown_by_session: list[list[int]] = []
    for s in range(n_sessions):
        start = BASE_MS + s * 60_000
        shown = []
        for e in range(EXPOSURES_PER_SESSION):
            versions = keyed[rng.randrange(len(keyed))]
            index = versions[-1] if rng.random() < 0.8 else versions[0]
            exposures.append((f"ses_{s:07d}", index, start + e * 1000))
            shown.append(index)
        shown_by_session.append(shown)
    corrections: list[tuple] = []
    for c in range(int(CORRECTIONS * scale)):
        s = rng.randrange(n_sessions)
        start = BASE_MS + s * 60_000
        kind = "user_correction" if c % 10 else "tool_retry"
        if rng.random() < 0.5:
            lesson_text = lessons[rng.choice(shown_by_session[s])][3]
            text = "No: " + " ".join(lesson_text.split()[:6]) + " please."
        else:
            text = "Not like that, " + " ".join(rng.sample(words, 5)) + "."
        corrected = start + rng.randrange(0, 20_000)
        turn = corrected - rng.randrange(500, 15_000) if rng.random() < 0.8 else None
        corrections.append((f"ses_{s:07d}", kind, text, corrected, turn))
    return Data(lessons, exposures, corrections)


def _rss_mib() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_pure(scale: float) -> dict:
    from lessons.core.recurrence import Correction, Exposure, LessonVersion, attribute, lesson_key
    from lessons.core.text import text_hash

    data = generate(scale)
    keys = [lesson_key(hash=h, store=st, lesson_id=lid) for h, st, lid, *_ in data.lessons]
    live_of_key = {keys[i]: i for i, row in enumerate(data.lessons) if row[5] == "live"}
    hashes = [text_hash(row[3]) for row in data.lessons]
    versions = [
        LessonVersion(keys[i], row[0], row[3], hashes[i], live_of_key[keys[i]] == i)
        for i, row in enumerate(data.lessons)
    ]
    exposures = [Exposure(s, keys[i], hashes[i], at) for s, i, at in data.exposures]
    corrections = [
        Correction(s, f"c{n}", kind, text, k, t) for n, (s, kind, text, k, t) in enumerate(data.corrections)
    ]
    del data
    rss_input = _rss_mib()
    start = time.perf_counter()
    result = attribute(versions=versions, exposures=exposures, corrections=corrections)
    seconds = time.perf_counter() - start
    peak_rss = _peak_mib()
    coverage = result.coverage
    del result
    tracemalloc.start()
    attribute(versions=versions, exposures=exposures, corrections=corrections)
    traced_peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return {
        "part": "pure",
        "scale": scale,
        "sessions": coverage["sessions"],
        "exposures": len(exposures),
        "corrections": len(corrections),
        "lessons": len(versions),
        "seconds": round(seconds, 2),
        "input_rss_mib": round(rss_input, 1),
        "peak_rss_mib": round(peak_rss, 1),
        "attribute_traced_peak_mib": round(traced_peak, 1),
        "attributed": coverage["attributed"],
        "ambiguous": coverage["ambiguous"],
        "unmatched": coverage["unmatched"],
    }


def _django(folder: str) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
    os.environ.setdefault("DEBUG", "1")
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings"
    import django

    django.setup()


def child_load(scale: float, folder: str) -> dict:
    """Write the generated data into a fresh SQLite file (raw executemany: loading is not measured)."""
    _django(folder)
    from django.core.management import call_command
    from django.db import connection, transaction

    from lessons.core.recurrence import lesson_key
    from lessons.core.text import from_ms, sha256_hex, text_hash
    from lessons.models import Correction, Exposure, Host, Lesson

    call_command("migrate", verbosity=0)
    data = generate(scale)
    start = time.perf_counter()
    adapt = connection.ops.adapt_datetimefield_value

    def insert(model, fields: list[str], rows) -> None:
        columns = ", ".join(model._meta.get_field(f).column for f in fields)
        marks = ", ".join(["%s"] * len(fields))
        with connection.cursor() as cursor:
            cursor.executemany(f"INSERT INTO {model._meta.db_table} ({columns}) VALUES ({marks})", rows)

    with transaction.atomic():
        host = Host.objects.create(name="bench")
        rows = [
            Lesson(
                host=host,
                hash=sha256_hex(h),
                namespace="ns",
                subject=f"s{i % 500}",
                text=text,
                text_hash=text_hash(text),
                created_at=from_ms(created),
                status=status,
                store=store,
                lesson_id=lid,
            )
            for i, (h, store, lid, text, created, status) in enumerate(data.lessons)
        ]
        Lesson.objects.bulk_create(rows, batch_size=2000)
        keys = [lesson_key(hash=r.hash, store=r.store, lesson_id=r.lesson_id) for r in rows]
        digests = [r.text_hash for r in rows]
        insert(
            Exposure,
            ["host", "session", "lesson_key", "text_hash", "shown_at", "key"],
            (
                (host.id, sess, keys[i], digests[i], adapt(from_ms(at)), f"e{n}")
                for n, (sess, i, at) in enumerate(data.exposures)
            ),
        )
        insert(
            Correction,
            ["host", "session", "key", "kind", "text", "text_hash", "corrected_at", "turn_started_at"],
            (
                (
                    host.id,
                    sess,
                    f"c{n}",
                    kind,
                    text,
                    "0" * 64,
                    adapt(from_ms(k)),
                    adapt(from_ms(t)) if t is not None else None,
                )
                for n, (sess, kind, text, k, t) in enumerate(data.corrections)
            ),
        )
    return {"load_seconds": round(time.perf_counter() - start, 1)}


def child_db(folder: str) -> dict:
    """In its own process (so the peak memory is its own): a full recompute, then a 100-session refresh."""
    _django(folder)
    from lessons.models import Correction, CorrectionAttribution, Exposure, Host, Lesson, RecurrenceCount
    from lessons.recurrence.refresh import recurrence_recompute, recurrence_refresh

    host = Host.objects.get(name="bench")
    sample = sorted(set(Correction.objects.order_by("id").values_list("session", flat=True)[:100]))
    rss_before = _rss_mib()
    start = time.perf_counter()
    stats = recurrence_recompute()
    seconds = time.perf_counter() - start
    peak = _peak_mib()
    start = time.perf_counter()
    recurrence_refresh(sessions={(host.id, s) for s in sample})
    refresh_seconds = time.perf_counter() - start
    return {
        "part": "db",
        "sessions": len(set(Exposure.objects.values_list("session", flat=True))),
        "sessions_with_user_corrections": stats.sessions,
        "exposures": Exposure.objects.count(),
        "corrections": Correction.objects.count(),
        "lessons": Lesson.objects.count(),
        "attribution_rows": CorrectionAttribution.objects.count(),
        "count_rows": RecurrenceCount.objects.count(),
        "seconds": round(seconds, 2),
        "rss_before_mib": round(rss_before, 1),
        "peak_rss_mib": round(peak, 1),
        "refresh_sessions": len(sample),
        "refresh_seconds": round(refresh_seconds, 3),
    }


def _child(args: list[str]) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", *args],
        cwd=ROOT,
        env={**os.environ, "DEBUG": "1"},
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_child(part: str, scale: float) -> dict:
    if part == "pure":
        return _child(["pure", str(scale), "-"])
    with tempfile.TemporaryDirectory() as folder:
        loaded = _child(["load", str(scale), folder])
        return {"part": "db", "scale": scale, **loaded, **_child(["db", str(scale), folder])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--pure", default="0.5,1,2", help="scales of the pure part (comma-separated; '' skips)"
    )
    parser.add_argument(
        "--db", default="0.5,1,2", help="scales of the database part (comma-separated; '' skips)"
    )
    parser.add_argument("--child", nargs=3, metavar=("PART", "SCALE", "FOLDER"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        part, scale, folder = args.child
        sys.setrecursionlimit(10_000)
        if part == "pure":
            result = child_pure(float(scale))
        elif part == "load":
            result = child_load(float(scale), folder)
        else:
            result = child_db(folder)
        print(json.dumps(result))
        return
    for part, scales in (("pure", args.pure), ("db", args.db)):
        for scale in [float(s) for s in scales.split(",") if s.strip()]:
            print(json.dumps(run_child(part, scale)), flush=True)


if __name__ == "__main__":
    main()
