"""Fixtures of the engine tests: writable copies of the altimate stores under ``data/`` (data in
altimate-code's own canonical JSON, carried by the repository), and a real areev memory file built with
the binding. The areev tests are skipped with a reason when the areev package is not importable, except
under ``CI=true``, where they must run (and fail without the package).
"""

from __future__ import annotations

import gc
import json
import os
import shutil
import stat
import sys
import time
from pathlib import Path

import pytest

try:
    import areev
except ImportError:  # the optional extra: pip install -e '.[areev]'
    areev = None

DATA = Path(__file__).resolve().parent / "data"
ALTIMATE_CORPUS = Path(__file__).resolve().parents[1] / "data" / "altimate-dbt-project"


def store_copy(source: Path, target: Path) -> Path:
    shutil.copytree(source, target, symlinks=True)
    for path in [target, *target.rglob("*")]:
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    return target


@pytest.fixture
def altimate_project(tmp_path) -> Path:
    """A writable copy of the altimate-dbt-project store (a dbt team's learn store)."""
    return store_copy(ALTIMATE_CORPUS, tmp_path / "altimate-dbt-project")


def team_store(project: Path) -> Path:
    """The default store folder (``team-playbook``) of an altimate project."""
    return project / ".altimate-code" / "learn" / "team-playbook"


@pytest.fixture
def small(tmp_path) -> Path:
    """A writable copy of ``altimate-small``: two approved lessons, one retired, four signal lines."""
    return store_copy(DATA / "altimate-small", tmp_path / "small")


@pytest.fixture
def history(tmp_path) -> Path:
    """A writable copy of ``altimate-history``: an edit promoted as version 1, then a pin."""
    return store_copy(DATA / "altimate-history", tmp_path / "history")


@pytest.fixture
def team(tmp_path) -> Path:
    """A writable copy of ``altimate-team``: team lessons in remote.json and a legacy signals file."""
    return store_copy(DATA / "altimate-team", tmp_path / "team")


SCRIPTED_MODEL = Path(__file__).resolve().parent / "scripted_model.py"
HOST = "adbuy-desk"
NS = "desk.adbuy"
SUBJECT = "invoice_capture"
TRIGGER = "user:dana"  # the host's loop runs as dana: she triggered the drafting run
LESSONS = [
    "Write Gross Amount as a bare number with two decimals, no currency symbol or commas.",
    "Fill Advertiser with the sponsoring committee or candidate named on the order, never the station.",
    "Record Flight From and Flight To as YYYY-MM-DD, exactly as the contract's flight window gives them.",
    "Every invoice needs an Advertiser value; take it from the Advertiser or Client line.",
    "Strip $ and thousands separators from the gross total before filing it.",
]
BASE_MS = 1768435200000  # 2026-01-15T00:00:00Z; one lesson a day
DAY_MS = 86_400_000


def needs_areev():
    if areev is None and os.environ.get("CI") != "true":
        pytest.skip("the areev package is not installed (pip install -e '.[areev]'); CI=true runs these")


def open_memory(path: Path, actor: str):
    """A handle on ``path`` as ``actor``; the caller must ``release`` it (one handle per file)."""
    return areev.Areev(str(path), ns=NS, actor=actor, telemetry="off")


def release(_handle=None) -> None:
    gc.collect()


def lesson_fields(i: int) -> dict:
    return {
        "subject": SUBJECT,
        "relation": "lesson",
        "object": LESSONS[i],
        "confidence": 0.8,
        "created_at": BASE_MS + i * DAY_MS,
    }


def build_memory(path: Path, *, policy: Path | None = None) -> list[str]:
    """Five lessons on one entity, ``loop.lesson_pile/1`` enabled with a budget of 3, and the loop run
    by dana with the scripted model (under the host ``policy`` file when given): one pile finding and
    one consolidation recommendation that passed GROUND and VERIFY. Returns the lesson hashes."""
    handle = open_memory(path, TRIGGER)
    hashes = [handle.add("fact", json.dumps(lesson_fields(i))) for i in range(len(LESSONS))]
    handle.set_analyzer_config("loop.lesson_pile/1", True, json.dumps({"max_active": 3}))
    if policy is not None:
        journal_eval(handle, "eval-before", 90, int(time.time() * 1000) - 3_600_000)
    options = {"policy": str(policy)} if policy is not None else {}
    run = json.loads(handle.loop_run(llm_cmd=f"{sys.executable} {SCRIPTED_MODEL}", **options))
    assert run["llm_funnel"]["stored"] == 1, run
    del handle
    release()
    return hashes


@pytest.fixture
def memory(db, tmp_path) -> tuple[Path, list[str]]:
    """``(path, lesson hashes)`` of ``build_memory`` (no host policy)."""
    needs_areev()
    path = tmp_path / "memory.db"
    return path, build_memory(path)


# The host's held-out evaluation set, as areev's loop reads it: each pass of the host's harness is a
# fact ``mg:eval_run`` on ``evalset:<name>`` in the ``agent:harness`` namespace, its summary as the
# object; a host policy's ``outcome_evalset`` makes the Verify gate measure every applied model-written
# lesson by one numeric field of it (baseline: the newest run before the apply; current: a run after).
EVALSET = "invoice-holdout"
EVAL_FIELD = "exact"


def journal_eval(handle, run_id: str, exact: int, at_ms: int) -> str:
    """Journal one pass of the host's evaluation set (``exact`` of 100 fields right) at ``at_ms``."""
    summary = {"run_id": run_id, "passed": exact, "failed": 100 - exact, EVAL_FIELD: exact}
    fields = {
        "namespace": "agent:harness",
        "subject": f"evalset:{EVALSET}",
        "relation": "mg:eval_run",
        "object": json.dumps(summary),
        "created_at": at_ms,
    }
    return handle.add("fact", json.dumps(fields))


@pytest.fixture
def measured_memory(db, tmp_path) -> tuple[Path, list[str], Path]:
    """``(path, lesson hashes, policy file)``: ``build_memory`` under a host policy whose
    ``outcome_evalset`` names ``EVALSET``, with one pass of it (90 of 100) journaled before the loop
    drafted the consolidation."""
    needs_areev()
    path, policy = tmp_path / "memory.db", tmp_path / "loop-policy.json"
    evalset = {"hash": EVALSET, "field": EVAL_FIELD, "higher_is_better": True}
    policy.write_text(json.dumps({"outcome_evalset": evalset}), encoding="utf-8")
    return path, build_memory(path, policy=policy), policy


def loop_live(path: Path, actor: str = "user:reader") -> list[str]:
    """The lesson hashes areev's loop counts live on the entity: ``superseded_by`` absent, or naming a
    grain that no longer exists (a rolled-back consolidation's marker). Sorted."""
    db = open_memory(path, actor)
    query = f'RECALL facts WHERE namespace = "{NS}" AND subject = "{SUBJECT}" LIMIT 1000 WITH superseded'
    grains = json.loads(db.cal(query))["grains"]
    del db
    release()
    present = {g["hash"] for g in grains}
    return sorted(
        g["hash"]
        for g in grains
        if g["fields"]["relation"] == "lesson" and g["fields"].get("superseded_by") not in present
    )


def recalled(path: Path, actor: str = "user:reader") -> list[dict]:
    """What ``recall`` serves a prompt on the entity (current heads only)."""
    db = open_memory(path, actor)
    grains = json.loads(db.recall(SUBJECT, "lesson", 1000))
    del db
    release()
    return grains
