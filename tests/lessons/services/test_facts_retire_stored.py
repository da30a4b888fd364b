"""The stored facts of the README's pile through the real decisions (issue 22, method 17): a retire
changes no fact but its own, a restore gives back the facts from before, an approved consolidation
regroups (its members superseded, its lesson added) and its rollback gives back the facts from before
the approval; an ingest that adds a lesson regroups. docs/piles-and-recurrence.md, "Facts", "Retire and
restore"."""

import json
from datetime import UTC, datetime

from lessons.ingest.passes import ingest_sources
from lessons.ingest.reading import bytes_source
from lessons.models import Draft, EntityCount, Host, Lesson
from lessons.services.entity_counts import entity_counts_check
from review.services.consolidation import consolidation_rollback, draft_approve
from review.services.decisions import lessons_restore, lessons_retire

NAMESPACE, SUBJECT = "desk.adbuy", "invoice_capture"


def _row() -> EntityCount:
    return EntityCount.objects.get(host_name="adbuy-desk", namespace=NAMESPACE, subject=SUBJECT)


def _hash(start: str) -> str:
    return Lesson.objects.get(host__name="adbuy-desk", subject=SUBJECT, text__startswith=start).hash


def _starts() -> list[tuple[tuple[str, ...], bool]]:
    """The stored facts, each as the first three words of its members' texts and whether an umbrella."""
    texts = dict(Lesson.objects.filter(host__name="adbuy-desk", subject=SUBJECT).values_list("hash", "text"))
    return [
        (tuple(" ".join(texts[h].split()[:3]) for h in f["members"]), f["umbrella"])
        for f in _row().fact_groups
    ]


FACTS = [
    (("Write Gross Amount", 'Strip "$" and'), False),
    (("Fill Advertiser with", "Every invoice needs"), False),
    (("Record Flight From", "Both flight dates"), False),
    (("Copy the Contract", "Record the contract"), False),
    (("From every invoice",), True),
    (("Do not skip",), True),
]


def test_a_retire_keeps_the_other_facts_and_a_restore_gives_back_the_facts_before(corpora, reviewer):
    host = Host.objects.get(name="adbuy-desk")
    before = _row().fact_groups
    assert _starts() == FACTS
    strip = _hash('Strip "$"')
    lessons_retire(host=host, hashes=[strip], actor=reviewer, reason="Gross Amount is said once above.")
    row = _row()
    # "9 rules, 4 facts": not "9 rules, 5 facts" with the Advertiser pair split.
    assert (row.live, row.facts, row.restatements) == (9, 4, 3)
    assert _starts() == [(("Write Gross Amount",), False), *FACTS[1:]]
    assert row.fact_groups[1:] == before[1:]  # every other fact exactly, similarity 0.08 included
    assert (row.fact_groups[1]["label"], row.fact_groups[1]["similarity"]) == ("Advertiser", 0.08)
    assert entity_counts_check(host=host) == []
    lessons_restore(
        host=host, namespace=NAMESPACE, subject=SUBJECT, hashes=[strip], actor=reviewer, reason="Needed."
    )
    row = _row()
    assert (row.live, row.facts, row.restatements, row.fact_groups) == (10, 4, 4, before)
    assert entity_counts_check(host=host) == []


def test_an_approved_consolidation_regroups_and_its_rollback_gives_back_the_facts_before(
    corpora, reviewer, second_reviewer
):
    host = Host.objects.get(name="adbuy-desk")
    before = _row().fact_groups
    gross = [_hash("Write Gross Amount"), _hash('Strip "$"')]
    draft = Draft.objects.create(
        host=host,
        ext_id="gross-once",
        namespace=NAMESPACE,
        subject=SUBJECT,
        text="Write Gross Amount as a bare number with two decimals: strip the $ and thousands separators.",
        supersedes=gross,
        drafted_by="user:dana",
        triggered_by="user:dana",
        gate_ground="pass",
        gate_verify="pass",
        created_at=datetime(2026, 3, 1, tzinfo=UTC),
    )
    draft_approve(draft=draft, actor=reviewer, reason="Gross Amount once.", confirm_dropped_anchors=True)
    # The members leave the lessons grouped over, the consolidation joins them: grouped again.
    assert _starts() == [*FACTS[1:], (("Write Gross Amount",), False)]
    assert _row().fact_groups[-1]["members"] == [
        Lesson.objects.get(kind="consolidation", subject=SUBJECT).hash
    ]
    assert entity_counts_check(host=host) == []
    draft.refresh_from_db()
    consolidation_rollback(draft=draft, actor=second_reviewer, reason="Hosts want the two lessons.")
    # The rolled-back consolidation is retracted and no longer grouped over: as before the approval.
    assert _row().fact_groups == before
    assert entity_counts_check(host=host) == []


def test_an_ingested_lesson_is_grouped_with_the_others(corpora):
    record = {
        "type": "lesson",
        "host": "adbuy-desk",
        "namespace": NAMESPACE,
        "subject": SUBJECT,
        "text": "Contract Number goes in exactly as printed on the order, dashes and letters kept.",
        "created_at": 1769904000000,
        "origin": "llm",
    }
    ingest_sources(sources=[bytes_source((json.dumps(record) + "\n").encode(), name="new.jsonl")])
    assert _starts() == [
        *FACTS[:3],
        (("Copy the Contract", "Record the contract", "Contract Number goes"), False),
        *FACTS[4:],
    ]
    assert entity_counts_check(host=Host.objects.get(name="adbuy-desk")) == []
