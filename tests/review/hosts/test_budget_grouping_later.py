"""A budget change that makes entities piles does not encode their texts in the request (an attacker's
finding: 37 s under the counts lock for 3,000 lessons, every other writer waiting): piles whose texts were
never encoded are stored "grouping…" and grouped by the background regroup it queues."""

from __future__ import annotations

import uuid

from django_tasks_db.models import DBTaskResult

from lessons.core.facts import FACTS_PENDING, FACTS_VERSION
from lessons.models import EntityCount, Host, TextEmbedding
from lessons.tasks import regroup_pending
from review.services.budget import host_set_budget

HOST = "budget-later"


def test_a_budget_change_leaves_new_piles_to_the_background_regroup(ingest, admin_user):
    run = uuid.uuid4().hex  # texts this process has never encoded
    records = [{"type": "host", "name": HOST, "max_active": 8, "budget_enabled": False}]
    records += [
        {
            "type": "lesson",
            "host": HOST,
            "namespace": "ns",
            "subject": "s",
            "text": f"Rule {i} of run {run}: write field {i} as printed, number {i * 7}.",
            "created_at": 1_700_000_000_000 + i,
        }
        for i in range(12)
    ]
    assert ingest(records).ok
    encoded = TextEmbedding.objects.count()
    host = Host.objects.get(name=HOST)
    decision = host_set_budget(
        host=host, actor=admin_user, max_active=None, budget_enabled=True, reason="Budget on for this host."
    )
    assert decision.evidence["piles_after"] == 1
    row = EntityCount.objects.get(host=host, subject="s")
    assert (row.over_budget, row.overage, row.facts_version, row.fact_groups) == (True, 4, FACTS_PENDING, [])
    assert TextEmbedding.objects.count() == encoded  # nothing encoded in the request
    (task,) = DBTaskResult.objects.filter(task_path="lessons.tasks.regroup_pending")
    assert task.args_kwargs == {"args": [host.id], "kwargs": {}}
    assert regroup_pending.call(host.id) == 1
    row = EntityCount.objects.get(id=row.id)
    assert row.facts_version == FACTS_VERSION and len(row.fact_groups) == row.groups > 0
    assert TextEmbedding.objects.count() == encoded + 12
