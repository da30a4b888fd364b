"""Issue 21, items 1 and 3, with real processes: two ``apply_decisions --areev`` runs started together on
one memory file apply each decision once, leave it acknowledged applied and both exit 0 (one waits for
the other); ``apply_decisions --altimate`` keeps the lesson a second altimate writer, which keeps
altimate's learn lock, adds right after the apply read the store (``altimate_writer``).

Each test builds its host here, then runs the processes on the same database: on PostgreSQL the test
database itself (committed: ``transactional_db``); on SQLite, whose test database is in memory, a file
copy of it (``VACUUM INTO``) that is copied back once the processes are done (``shared_database``).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import connection

from lessons.models import Host
from review.apply.host_lock import WAITING
from review.models import DecisionAck
from review.services.decisions import lessons_retire
from tests.conftest import make_user
from tests.engines.altimate_decided import HOST as ALTIMATE_HOST
from tests.engines.altimate_decided import NEW_ID, STORE, decide
from tests.engines.conftest import (
    ALTIMATE_CORPUS,
    DATA,
    HOST,
    LESSONS,
    NS,
    SUBJECT,
    TRIGGER,
    lesson_fields,
    loop_live,
    needs_areev,
    open_memory,
    release,
    store_copy,
)
from tests.fixtures.importers import run_command

BASE_DIR = Path(__file__).resolve().parents[2]
RETIRED = 4  # lessons retired, one decision each
WRITER_ID = "L-beef"
REFLECTIONS = 30_000  # history lines of a long-lived store: reading them keeps the apply busy a while
TIMEOUT_S = 120
NOTHING_LEFT = "0 applied, 0 refused, 0 skipped\n"


@pytest.fixture
def shared_database(transactional_db, tmp_path):
    """A context manager: inside it, ``DATABASE_URL`` of this test's database for other processes."""

    @contextmanager
    def share() -> Iterator[str]:
        db = connection.settings_dict
        if connection.vendor == "postgresql":
            yield f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}"
            return
        path = tmp_path / "shared.sqlite3"
        connection.ensure_connection()
        connection.connection.execute("VACUUM INTO ?", [str(path)])
        yield f"sqlite:///{path}"
        source = sqlite3.connect(path)
        try:
            source.backup(connection.connection)
        finally:
            source.close()

    return share


def start(args: list[str], database_url: str) -> subprocess.Popen:
    env = {**os.environ, "DEBUG": "1", "DATABASE_URL": database_url}
    return subprocess.Popen(
        [sys.executable, *args],
        cwd=BASE_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=TIMEOUT_S)
    return proc.returncode, out, err


def acks(host: str) -> list[tuple[int, str]]:
    rows = DecisionAck.objects.filter(decision__host=host).order_by("decision__seq")
    return list(rows.values_list("decision__seq", "status"))


def waited_or_silent(err: str, *, host: str, engine: str) -> bool:
    """The run said in one line that it waited for the other run, or said nothing."""
    head = WAITING.format(host=host, who=f"{engine}, pid").split(" pid")[0]
    return err == "" or (err.count("\n") == 1 and err.startswith(head))


def retire_markers(path: Path) -> list[str]:
    """The lesson hash each ``lesson_retired`` marker of the entity names, sorted (one per retire)."""
    db = open_memory(path, "user:reader")
    query = f'RECALL facts WHERE namespace = "{NS}" AND subject = "{SUBJECT}" LIMIT 1000 WITH superseded'
    grains = json.loads(db.cal(query))["grains"]
    del db
    release()
    return sorted(g["fields"]["retires"] for g in grains if g["fields"]["relation"] == "lesson_retired")


def test_two_areev_apply_runs_at_once_apply_each_decision_once_and_both_exit_0(shared_database, tmp_path):
    needs_areev()
    path = tmp_path / "memory.db"
    handle = open_memory(path, TRIGGER)
    hashes = [handle.add("fact", json.dumps(lesson_fields(i))) for i in range(len(LESSONS))]
    del handle
    release()
    code, _out, err = run_command("sync_areev", str(path), "--host", HOST, "--triggered-by", TRIGGER)
    assert code == 0, err
    host, reviewer = Host.objects.get(name=HOST), make_user("rita", "reviewer")
    seqs = [
        lessons_retire(host=host, hashes=[h], actor=reviewer, reason="Restates another rule.")[0].seq
        for h in hashes[:RETIRED]
    ]
    args = ["manage.py", "apply_decisions", "--areev", str(path), "--host", HOST]
    with shared_database() as url:
        runs = [finish(p) for p in [start(args, url), start(args, url)]]

    assert [code for code, _out, _err in runs] == [0, 0], runs
    outs = sorted((out for _code, out, _err in runs), key=len)
    assert outs[0] == NOTHING_LEFT  # the later run found every decision acknowledged
    assert outs[1].splitlines() == [
        *(
            f"applied: #{seq} retire: lesson {h[:8]}… forgotten as user:rita; its fields kept in a "
            "lesson_retired marker"
            for seq, h in zip(seqs, hashes, strict=False)
        ),
        f"{RETIRED} applied, 0 refused, 0 skipped",
    ]
    assert all(waited_or_silent(err, host=HOST, engine="areev") for _code, _out, err in runs), runs
    assert acks(HOST) == [(seq, "applied") for seq in seqs]
    assert retire_markers(path) == sorted(hashes[:RETIRED])  # each lesson retired once
    assert loop_live(path) == sorted(hashes[RETIRED:])


def reflections(n: int) -> str:
    """``n`` history lines of altimate's curator marking L-8201 helpful, one session each."""
    return "".join(
        json.dumps(
            {
                "ts": f"2026-09-{1 + i % 28:02d}T08:{i % 60:02d}:00.000Z",
                "action": "reflect",
                "session": f"ses_{i:06d}",
                "feedbackKind": "user",
                "feedbackHash": f"{i:064x}",
                "applied": [{"op": "HELPFUL", "id": "L-8201", "reason": "the rule held", "count": i + 1}],
                "rejected": [],
            },
            separators=(",", ":"),
        )
        + "\n"
        for i in range(n)
    )


def test_a_lesson_altimate_adds_while_decisions_are_applied_is_kept(shared_database, tmp_path):
    project = decide(store_copy(ALTIMATE_CORPUS, tmp_path / "project"), make_user("rita", "reviewer"))
    store = project / ".altimate-code" / "learn" / STORE
    history = store / "history.jsonl"
    history.write_text(reflections(REFLECTIONS) + history.read_text())
    with shared_database() as url:
        writer = start(["-m", "tests.engines.altimate_writer", str(store), WRITER_ID], url)
        assert writer.stdout.readline() == "ready\n"
        apply = finish(
            start(["manage.py", "apply_decisions", "--altimate", str(project), "--host", ALTIMATE_HOST], url)
        )
        wrote = finish(writer)

    assert wrote[0] == 0, wrote
    expected = [x["id"] for x in json.loads((DATA / "altimate-applied" / "approved.json").read_text())]
    assert expected[0] == NEW_ID
    # the writer's lesson is there, after the decisions' changes (issue 21, item 1: it was gone)
    assert [x["id"] for x in json.loads((store / "approved.json").read_text())] == [*expected, WRITER_ID]
    assert (apply[0], apply[2], apply[1].splitlines()[0]) == (0, "", "2 applied, 0 skipped, 0 refused")
    assert acks(ALTIMATE_HOST) == [(1, "applied"), (2, "applied")]
    # it saw the apply read approved.json, and found altimate's learn lock held by the apply
    assert json.loads(wrote[1]) == {"added": WRITER_ID, "waited": True}
