"""A bulk ingest leaves the piles whose texts are not encoded yet to the background regroup
(``settings.FACTS_DEFER_LESSONS``; lessons.services.embeddings.facts_deferred), queues
``lessons.tasks.regroup_pending`` for their host, and the task stores the same facts the ingest would
have (docs/piles-and-recurrence.md, "Facts")."""

from __future__ import annotations

import pytest
from django_tasks_db.models import DBTaskResult

from lessons.core import embedding
from lessons.core.facts import FACTS_PENDING, FACTS_VERSION
from lessons.ingest.passes import FACTS_LATER
from lessons.models import EntityCount, Host, TextEmbedding
from lessons.selectors.facts import compute_facts, pile_facts_stored
from lessons.services.entity_counts import entity_counts_check
from lessons.tasks import regroup_pending
from tests.builders import numbered_lesson

NS = "desk.later"
SUBJECT = "invoice_capture"


@pytest.fixture
def records():
    embedding.forget()  # as a fresh process: these texts are new to it
    texts = [
        "Write Gross Amount as a bare number with two decimals.",
        "Strip the dollar sign and thousands separators from the gross total.",
        "Copy the Contract Number character for character.",
        "Record the contract number exactly as printed, never shortened.",
        "Fill Advertiser with the sponsoring committee named on the order.",
        "Every invoice needs an Advertiser value from the Client line.",
        "Record Flight From and Flight To as YYYY-MM-DD.",
        "Both flight dates are mandatory, in ISO 8601 form.",
        "Leave Due Date empty; never compute it from the terms.",
        "Keep VAT Amount apart from Net Amount.",
    ]
    return [{"type": "host", "name": "later", "max_active": 8, "budget_enabled": True}] + [
        numbered_lesson(i, host="later", namespace=NS, subject=SUBJECT, text=t) for i, t in enumerate(texts)
    ]


def _row() -> EntityCount:
    return EntityCount.objects.get(host__name="later", namespace=NS, subject=SUBJECT)


def test_a_bulk_ingest_leaves_the_pile_to_the_background_regroup(ingest, records, settings):
    settings.FACTS_DEFER_LESSONS = 10
    report = ingest(records)
    assert report.ok, report.error_lines()
    assert report.notes == [FACTS_LATER.format(piles=1)]
    row = _row()
    assert (row.over_budget, row.live, row.facts_version, row.groups, row.facts, row.restatements) == (
        True,
        10,
        FACTS_PENDING,
        0,
        0,
        0,
    )
    assert row.fact_groups == [] and TextEmbedding.objects.count() == 0  # nothing encoded in the ingest
    host = Host.objects.get(name="later")
    (task,) = DBTaskResult.objects.all()
    assert (task.task_path, task.args_kwargs) == (
        "lessons.tasks.regroup_pending",
        {"args": [host.id], "kwargs": {}},
    )
    # Until the worker runs, a reader works the facts out (and the check does not count it wrong).
    shown = pile_facts_stored(host=host, namespace=NS, subject=SUBJECT)
    assert entity_counts_check() == []
    assert regroup_pending.call(host.id) == 1
    row = _row()
    assert row.facts_version == FACTS_VERSION
    assert row.groups == len(shown) and row.fact_groups == [f.as_dict() for f in shown]
    assert TextEmbedding.objects.count() == 10
    assert pile_facts_stored(host=host, namespace=NS, subject=SUBJECT) == shown
    assert compute_facts(host_id=host.id, namespace=NS, subject=SUBJECT) == shown


def test_a_small_ingest_groups_in_its_transaction(ingest, records, settings):
    settings.FACTS_DEFER_LESSONS = 11
    report = ingest(records)
    assert report.ok and report.notes == []
    row = _row()
    assert row.facts_version == FACTS_VERSION and row.groups > 0
    assert DBTaskResult.objects.count() == 0
    assert TextEmbedding.objects.count() == 10


def test_a_bulk_ingest_of_texts_already_encoded_groups_them_at_once(ingest, records, settings):
    embedding.vectors([r["text"] for r in records[1:]])  # the process holds them all
    settings.FACTS_DEFER_LESSONS = 10
    report = ingest(records)
    assert report.ok and report.notes == []
    assert _row().facts_version == FACTS_VERSION
    assert DBTaskResult.objects.count() == 0
    assert TextEmbedding.objects.count() == 10  # what the process held is stored


def test_the_queue_says_a_pile_is_being_grouped_until_the_worker_has(ingest, records, settings, as_viewer):
    from review.piles.tables import GROUPING
    from tests.html import parse, table_rows

    settings.FACTS_DEFER_LESSONS = 10
    assert ingest(records).ok

    def groups_cell() -> list[str]:
        (row,) = table_rows(parse(as_viewer.get("/?host=later").content), "queue-table")
        return row[3:5]  # facts, restatements

    assert groups_cell() == [GROUPING, "\u2014"]
    regroup_pending.call(Host.objects.get(name="later").id)
    row = _row()
    assert groups_cell() == [str(row.facts), str(row.restatements) if row.restatements else "\u2014"]
