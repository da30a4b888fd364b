"""``manage.py export_restatements``: the reviewers' restatement marks as JSON Lines or CSV (issue 22,
Build 2), by host, oldest first; ``--host`` keeps one host's; formula-like reasons are quoted in CSV."""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime

import pytest
from django.core.management import CommandError, call_command

from lessons.models import Host
from review.hosts.marks import MARK_FIELDS
from review.services.restatements import restatement_mark

pytestmark = pytest.mark.django_db

T1 = datetime(2026, 3, 1, 9, 0, 0, 250000, tzinfo=UTC)
T2 = datetime(2026, 3, 2, 9, 0, 0, tzinfo=UTC)


@pytest.fixture
def marks(entity, reviewer, second_reviewer):
    """Two hosts with a pile each; one mark on qa-host (rita, T2), two on qa-other (rob at T2, rita at T1)."""
    qa = entity(3, texts=["Alpha rule one.", "Bravo rule two.", "Charlie rule three."])
    other = entity(3, host="qa-other", texts=["Delta one.", "Echo two.", "Foxtrot three."])
    host, other_host = Host.objects.get(name="qa-host"), Host.objects.get(name="qa-other")
    restatement_mark(
        host=host, pairs=[(qa[0], qa[1])], same=True, actor=reviewer, reason="One «fact»", now=T2
    )
    restatement_mark(
        host=other_host,
        pairs=[(other[1], other[2])],
        same=False,
        actor=second_reviewer,
        reason="=differ",
        now=T2,
    )
    restatement_mark(
        host=other_host, pairs=[(other[0], other[1])], same=True, actor=reviewer, reason="same", now=T1
    )
    return qa, other


def export(*args: str) -> str:
    out = io.StringIO()
    call_command("export_restatements", *args, stdout=out)
    return out.getvalue()


def test_jsonl_has_every_mark_by_host_oldest_first_with_its_entity(marks):
    qa, other = marks
    records = [json.loads(line) for line in export().splitlines()]
    assert [list(r) for r in records] == [list(MARK_FIELDS)] * 3
    assert records[0] == {
        "host": "qa-host",
        "namespace": "qa",
        "subject": "orders",
        "a": min(qa[0], qa[1]),
        "b": max(qa[0], qa[1]),
        "same": True,
        "reason": "One «fact»",
        "made_by": "rita",
        "made_at": "2026-03-02T09:00:00.000Z",
    }
    assert [(r["host"], r["made_by"], r["made_at"]) for r in records[1:]] == [
        ("qa-other", "rita", "2026-03-01T09:00:00.250Z"),
        ("qa-other", "rob", "2026-03-02T09:00:00.000Z"),
    ]


def test_csv_with_host_keeps_one_hosts_marks_and_quotes_formula_like_text(marks):
    _qa, other = marks
    lines = export("--format", "csv", "--host", "qa-other").split("\r\n")
    assert lines[0] == ",".join(MARK_FIELDS)
    a, b = sorted((other[1], other[2]))
    assert lines[2] == f"qa-other,qa,orders,{a},{b},false,'=differ,rob,2026-03-02T09:00:00.000Z"
    assert len(lines) == 4 and lines[3] == ""


def test_an_unknown_host_is_refused_in_one_line(marks):
    with pytest.raises(CommandError) as refused:
        export("--host", "nope")
    assert "nope" in str(refused.value)
    assert refused.value.returncode == 1


def test_no_marks_export_nothing_but_the_csv_header(db):
    assert export() == ""
    assert export("--format", "csv") == ",".join(MARK_FIELDS) + "\r\n"
