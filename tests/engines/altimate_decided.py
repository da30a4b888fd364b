"""The altimate-dbt-project store with two decisions waiting for ``apply_decisions --altimate``: L-f5a8
retired, and a consolidation of L-8201 and L-2fe6 approved. Shared by the apply tests
(test_altimate_apply.py) and the race scenarios (apply_races.py), which build it in a process of their own.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from lessons.core.text import lesson_hash

HOST = "dbt-project"
STORE = "team-playbook"
DECIDED = datetime(2026, 10, 6, 9, 0, 0, 250000, tzinfo=UTC)
CONSOLIDATED = (
    "Convert `*_at` columns with `to_utc` and `*_cents` columns with `cents_to_dollars` in staging models."
)
NEW_ID = "L-" + lesson_hash(STORE, "project", CONSOLIDATED)[:4]


def lesson(lesson_id: str):
    """The dashboard's lesson imported from the store as ``lesson_id``."""
    from lessons.models import Lesson

    return Lesson.objects.get(host__name=HOST, lesson_id=lesson_id, status__in=["live", "retracted"])


def decide(project: Path, reviewer) -> Path:
    """Import ``project`` as host dbt-project, retire L-f5a8 and approve the consolidation as ``reviewer``."""
    from lessons.models import Draft
    from review.services.consolidation import draft_approve
    from review.services.decisions import lessons_retire
    from tests.fixtures.importers import run_command

    code, _out, err = run_command("import_altimate", str(project), "--host", HOST)
    assert code == 0, err
    draft = {
        "type": "draft",
        "id": "rec-stg-1",
        "namespace": STORE,
        "subject": "project",
        "text": CONSOLIDATED,
        "supersedes": [lesson("L-8201").hash, lesson("L-2fe6").hash],
        "drafted_by": "llm:claude",
        "triggered_by": "user:rob",
        "gates": {"ground": "pass", "verify": "pass"},
        "created_at": "2026-10-05T12:00:00.000Z",
    }
    path = project / "draft.jsonl"
    path.write_text(json.dumps(draft) + "\n")
    code, _out, err = run_command("ingest", str(path), "--host", HOST)
    assert code == 0, err
    lessons_retire(
        host=lesson("L-f5a8").host,
        hashes=[lesson("L-f5a8").hash],
        actor=reviewer,
        reason="Marts config lives in dbt_project.yml.",
        now=DECIDED,
    )
    draft_approve(
        draft=Draft.objects.get(ext_id="rec-stg-1"),
        actor=reviewer,
        reason="One rule for staging conversions.",
        now=DECIDED,
    )
    return project
