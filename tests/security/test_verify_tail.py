"""verify_decisions compares the chain head with the last row (issue 13, fault 5): deleted tail rows and a
rewritten, rehashed tail are reported (exit 1), not "chain intact". The exports carry the head, so a host
can tell a truncated export (X-Chain-Head-Seq/-Hash headers; the API's ``head``)."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from lessons.core.text import format_datetime
from tests.security.builders import build_pile, retire


@pytest.fixture
def three(reviewer):
    """Three decisions (seq 1..3): three lessons of the builders' pile retired."""
    hashes = build_pile()
    retire(actor=reviewer, hashes=hashes[1:4])


def _verify() -> str:
    out = io.StringIO()
    try:
        call_command("verify_decisions", stdout=out, stderr=io.StringIO())
    except CommandError as exc:
        return f"exit {exc.returncode}: {exc}"
    return out.getvalue()


def _head() -> tuple[int, str]:
    from review.models import ChainHead

    head = ChainHead.objects.get()
    return head.seq, head.hash


def test_an_intact_chain_ends_at_its_head(three):
    assert _verify() == "chain intact: 3 decisions\n"


@pytest.mark.counts_unchecked  # rows deleted behind the writers' backs: the tamper under test
def test_the_last_row_deleted_is_reported(three):
    from review.models import Decision

    Decision.objects.filter(seq=3).delete()
    assert _verify() == "exit 1: chain broken: row 3 is missing at the tail (the chain head is at seq 3)"


@pytest.mark.counts_unchecked  # rows deleted behind the writers' backs: the tamper under test
def test_the_last_rows_deleted_are_reported_as_a_range(three):
    from review.models import Decision

    Decision.objects.filter(seq__gte=2).delete()
    assert _verify() == "exit 1: chain broken: rows 2..3 are missing at the tail (the chain head is at seq 3)"


@pytest.mark.counts_unchecked  # rows deleted behind the writers' backs: the tamper under test
def test_every_row_deleted_is_reported(three):
    from review.models import Decision

    Decision.objects.all().delete()
    assert _verify() == "exit 1: chain broken: rows 1..3 are missing at the tail (the chain head is at seq 3)"


def test_a_rewritten_and_rehashed_tail_is_reported(three):
    from review.models import Decision
    from review.services.chain import decision_record, record_hash

    last = Decision.objects.get(seq=3)
    last.reason = "Nothing to see."
    record = decision_record(last)
    last.hash = record_hash(last.prev_hash, record)
    last.save(update_fields=["reason", "hash"])
    head_hash = _head()[1]
    assert _verify() == (
        f"exit 1: chain broken: the tail was rewritten: seq 3 has hash {last.hash[:8]}…, "
        f"the chain head {head_hash[:8]}…"
    )


def test_rows_appended_after_the_head_was_moved_back_are_reported(three):
    """The head set back to an earlier sealed head (one a writer saw, seal and all): the rows past it show."""
    from lessons.core.text import format_datetime
    from review.models import ChainHead, Decision
    from review.services.chain_head import head_seal

    second = Decision.objects.get(seq=2)
    earlier = {"seq": 2, "hash": second.hash, "at": format_datetime(second.at)}
    ChainHead.objects.update(**earlier, mac=head_seal(**earlier))
    assert _verify() == "exit 1: chain broken: rows 3..3 are past the chain head (seq 2)"


@pytest.mark.parametrize("url", ["/review/decisions/export.jsonl", "/review/decisions/export.csv"])
def test_the_page_exports_carry_the_head_in_headers(three, client, reviewer, url):
    from review.models import ChainHead

    client.force_login(reviewer)
    response = client.get(url)
    names = ("X-Chain-Head-Seq", "X-Chain-Head-Hash", "X-Chain-Head-At", "X-Chain-Head-Mac")
    head = ChainHead.objects.get()
    assert tuple(response[name] for name in names) == ("3", head.hash, head.at, head.mac)


def test_the_jsonl_lines_stay_exactly_the_records(three, client, reviewer):
    from review.models import Decision
    from review.services.chain import decision_record

    client.force_login(reviewer)
    body = b"".join(client.get("/review/decisions/export.jsonl").streaming_content).decode()
    lines = [json.loads(line) for line in body.splitlines()]
    assert lines == [decision_record(d) for d in Decision.objects.order_by("seq")]


def test_the_api_decisions_answer_carries_the_head(three, client):
    from review.services.tokens import token_create

    raw = token_create(name="t", host=None, can_ingest=False, can_read=True)[1]
    response = client.get("/api/v1/decisions?since=1&limit=1", HTTP_AUTHORIZATION=f"Bearer {raw}")
    body = response.json()
    from review.models import ChainHead, Decision
    from review.services.chain_head import head_seal

    head = ChainHead.objects.get()
    at = Decision.objects.get(seq=3).at
    receipt = {"seq": 3, "hash": head.hash, "at": format_datetime(at), "mac": head.mac}
    assert head.mac == head_seal(seq=3, hash=head.hash, at=format_datetime(at))
    assert (body["head"], response["X-Chain-Head-Seq"], response["X-Chain-Head-Hash"]) == (
        receipt,
        "3",
        head.hash,
    )
    assert ([d["seq"] for d in body["decisions"]], body["has_more"]) == ([2], True)
