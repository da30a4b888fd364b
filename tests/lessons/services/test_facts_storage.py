"""Stored facts (lessons.services.facts, lessons.selectors.facts): written with the counts, read without
recomputing, refreshed after a mark."""

from datetime import UTC, datetime
from io import StringIO

from django.db import connection
from django.test.utils import CaptureQueriesContext

from lessons.core.facts import FACTS_VERSION, Mark
from lessons.models import EntityCount, Host, Lesson, RestatementMark
from lessons.selectors.facts import compute_facts, host_marks, pile_facts_stored
from lessons.services.facts import facts_refresh


def _pile() -> EntityCount:
    return EntityCount.objects.get(host_name="adbuy-desk", subject="invoice_capture")


def test_the_counts_store_the_facts_of_a_pile(corpora):
    row = _pile()
    assert row.facts_version == FACTS_VERSION
    assert len(row.fact_groups) == row.groups
    umbrellas = sum(1 for f in row.fact_groups if f["umbrella"])
    assert (row.facts, row.restatements, umbrellas) == (4, 4, 2)  # 4 facts of 8 members, 2 umbrellas
    assert row.facts + row.restatements + umbrellas == row.live
    members = sorted(h for f in row.fact_groups for h in f["members"])
    assert members == sorted(
        Lesson.objects.filter(subject="invoice_capture", status="live").values_list("hash", flat=True)
    )
    # Not a pile: nothing stored.
    assert EntityCount.objects.filter(over_budget=False).exclude(fact_groups=[]).count() == 0


def test_a_pile_page_reads_the_stored_facts_in_one_query(corpora):
    host = Host.objects.get(name="adbuy-desk")
    with CaptureQueriesContext(connection) as queries:
        facts = pile_facts_stored(host=host, namespace="desk.adbuy", subject="invoice_capture")
    assert len(queries) == 1
    assert facts == compute_facts(host_id=host.id, namespace="desk.adbuy", subject="invoice_capture")


def test_a_mark_then_facts_refresh_stores_the_marked_grouping(corpora):
    host = Host.objects.get(name="adbuy-desk")
    first, second = _pile().fact_groups[:2]
    a, b = sorted((first["name"], second["name"]))
    RestatementMark.objects.create(
        host=host, a=a, b=b, same=True, reason="same field", made_at=datetime.now(UTC)
    )
    assert host_marks(host=host) == [Mark(a=a, b=b, same=True)]
    before = _pile().groups
    assert facts_refresh(host_id=host.id, keys=[("desk.adbuy", "invoice_capture")]) == 1
    after = pile_facts_stored(host=host, namespace="desk.adbuy", subject="invoice_capture")
    assert len(after) == before - 1
    joined = next(f for f in after if a in f.members)
    assert b in joined.members and joined.marked
    # Every pile of the host when no keys are given; entities that are not piles are skipped.
    assert facts_refresh(host_id=host.id) == EntityCount.objects.filter(host=host, over_budget=True).count()
    assert facts_refresh(host_id=host.id, keys=[("desk.adbuy", "no_such_subject")]) == 0


def test_a_stale_version_is_recomputed_when_read(corpora):
    row = _pile()
    EntityCount.objects.filter(id=row.id).update(fact_groups=[], facts_version=FACTS_VERSION - 1)
    facts = pile_facts_stored(host=row.host_id, namespace="desk.adbuy", subject="invoice_capture")
    assert len(facts) == row.groups
    # Put back what the writers stored, so the suite's counts check agrees.
    facts_refresh(host_id=row.host_id)
    assert _pile().facts_version == FACTS_VERSION


def test_piles_regroup_recomputes_the_stored_facts(corpora):
    from django.core.management import call_command

    from lessons.management.commands.piles import REGROUPED

    row = _pile()
    EntityCount.objects.filter(id=row.id).update(fact_groups=[], facts_version=0, facts=0, restatements=0)
    out = StringIO()
    call_command("piles", "--regroup", "--host", "adbuy-desk", stdout=out)
    assert out.getvalue().strip() == REGROUPED.format(piles=1, hosts=1, version=FACTS_VERSION)
    again = _pile()
    assert (again.fact_groups, again.facts_version, again.facts, again.restatements) == (
        row.fact_groups,
        FACTS_VERSION,
        row.facts,
        row.restatements,
    )
    out = StringIO()
    call_command("piles", "--regroup", stdout=out)
    assert out.getvalue().strip() == REGROUPED.format(piles=2, hosts=3, version=FACTS_VERSION)


def test_migrate_queues_the_regroup_of_the_hosts_with_facts_of_an_older_method(corpora):
    """An upgrade that changes FACTS_VERSION regroups without a command: ``migrate`` (its post_migrate)
    queues the background regroup for each host with a stale pile, and nothing for the others; the task
    stores this version's facts again."""
    from django.core.management import call_command
    from django_tasks_db.models import DBTaskResult

    from lessons.tasks import regroup_pending

    row = _pile()
    assert DBTaskResult.objects.count() == 0
    call_command("migrate", verbosity=0)
    assert DBTaskResult.objects.count() == 0  # every pile of this version: nothing queued
    EntityCount.objects.filter(id=row.id).update(facts_version=FACTS_VERSION - 1)
    call_command("migrate", verbosity=0)
    (task,) = DBTaskResult.objects.all()
    assert (task.task_path, task.args_kwargs) == (
        "lessons.tasks.regroup_pending",
        {"args": [row.host_id], "kwargs": {}},
    )
    assert regroup_pending.call(row.host_id) == 1
    again = _pile()
    assert (again.facts_version, again.fact_groups) == (FACTS_VERSION, row.fact_groups)


def test_invoice_capture_comes_out_in_six_groups(corpora):
    """Issue 22's acceptance: the four restated facts found, each labelled by its field, and both
    umbrellas groups of their own covering the facts they state."""
    facts = pile_facts_stored(
        host=Host.objects.get(name="adbuy-desk"), namespace="desk.adbuy", subject="invoice_capture"
    )
    shown = [
        (tuple(h[:8] for h in f.members), f.umbrella, tuple(h[:8] for h in f.covers), f.label) for f in facts
    ]
    assert shown == [
        (("36727f00", "353ed7f4"), False, (), "Gross Amount"),
        (("cc844636", "e21f022e"), False, (), "Advertiser"),
        (("531d6e53", "e0b6ccc3"), False, (), "Flight From"),
        (("ccefde1b", "ba3f6459"), False, (), "Contract Number"),
        (
            ("0d3dae1c",),
            True,
            ("36727f00", "cc844636", "531d6e53", "ccefde1b"),
            "Gross Amount, Advertiser, Flight From, Contract Number",
        ),
        (("3d46cb35",), True, ("cc844636", "ccefde1b"), "Advertiser, Contract Number"),
    ]
