"""The chain head's seal and head receipts (issue 21, fault 10).

One UPDATE used to defeat the tail check: delete the last decision and set ``review_chainhead`` back to the
row before, or add a forged record and move the head to it, and ``verify_decisions`` said "chain intact".
The head now carries a seal (HMAC with a key outside the database) that such a writer cannot make; the
head a host receives with the API's answers, its acknowledgements and the exports is a receipt, and
``verify_decisions --receipt`` proves a later log extends it, which also catches what the seal cannot (an
older sealed head put back, a holder of the key rewriting the log). docs/decisions-verify.md.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from lessons.core.text import format_datetime
from review.management.commands.verify_decisions import RECEIPT_EXTENDED, RECEIPT_INVALID, RECEIPT_NOT_IN_FILE
from review.services.chain_head import (
    RECEIPT_BEYOND,
    RECEIPT_REWRITTEN,
    RECEIPT_SEAL_BROKEN,
    SEAL_BROKEN,
    head_seal,
)
from tests.security.builders import build_pile, retire


@pytest.fixture
def hashes(reviewer) -> list[str]:
    """Three decisions (seq 1..3): three lessons of the builders' pile retired; the pile's hashes."""
    hashes = build_pile()
    retire(actor=reviewer, hashes=hashes[1:4])
    return hashes


@pytest.fixture
def token() -> str:
    from review.services.tokens import token_create

    return token_create(name="host", host=None, can_ingest=False, can_read=True)[1]


def _verify(*args: str) -> str:
    out = io.StringIO()
    try:
        call_command("verify_decisions", *args, stdout=out, stderr=io.StringIO())
    except CommandError as exc:
        return f"exit {exc.returncode}: {exc}"
    return out.getvalue()


def _row(seq: int):
    from review.models import Decision

    return Decision.objects.get(seq=seq)


def _head_of(seq: int) -> dict:
    """The head as the app sealed it when the log ended at ``seq``: what a writer may have kept."""
    row = _row(seq)
    head = {"seq": seq, "hash": row.hash, "at": format_datetime(row.at)}
    return {**head, "mac": head_seal(**head)}


def _rehash_from(seq: int, *, reason: str) -> None:
    """Rewrite decision ``seq``'s reason and rehash it and every record after it (a consistent chain)."""
    from review.models import Decision
    from review.services.chain import decision_record, record_hash

    prev_hash = _row(seq).prev_hash
    for row in Decision.objects.filter(seq__gte=seq).order_by("seq"):
        if row.seq == seq:
            row.reason = reason
        row.prev_hash = prev_hash
        row.hash = record_hash(prev_hash, decision_record(row))
        row.save(update_fields=["reason", "prev_hash", "hash"])
        prev_hash = row.hash


def _receipt_file(tmp_path, receipt: dict, name: str = "receipt.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(receipt), encoding="utf-8")
    return str(path)


# --- the two attacks --------------------------------------------------------------------------------


@pytest.mark.counts_unchecked  # a row deleted behind the writers' backs: the tamper under test
def test_the_last_decision_deleted_and_the_head_set_back_one_row_is_reported(hashes):
    from review.models import ChainHead

    second = _row(2)
    _row(3).delete()
    ChainHead.objects.update(seq=2, hash=second.hash, at=format_datetime(second.at))
    assert _verify() == "exit 1: " + SEAL_BROKEN.format(seq=2)


@pytest.mark.counts_unchecked  # a row added behind the writers' backs: the tamper under test
def test_a_forged_record_and_the_head_moved_to_it_are_reported(hashes):
    from review.models import ChainHead, Decision
    from review.services.chain import decision_record, record_hash

    forged = _row(3)
    forged.pk, forged.seq, forged.prev_hash = None, 4, forged.hash
    forged.reason = "Retired by nobody."
    forged.hash = record_hash(forged.prev_hash, decision_record(forged))
    Decision.objects.bulk_create([forged])
    ChainHead.objects.update(seq=4, hash=forged.hash, at=format_datetime(forged.at))
    assert _verify() == "exit 1: " + SEAL_BROKEN.format(seq=4)


def test_an_honest_log_verifies_with_its_seal(hashes):
    assert _verify() == "chain intact: 3 decisions\n"


def test_the_seal_uses_decision_head_key_when_it_is_set(hashes, settings):
    """A changed key: the head sealed with the old one is reported; the next decision seals it anew."""
    settings.DECISION_HEAD_KEY = "a key kept in the deployment's environment"
    assert _verify() == "exit 1: " + SEAL_BROKEN.format(seq=3)


# --- receipts ------------------------------------------------------------------------------------------------


def test_a_receipt_from_the_api_is_extended_by_a_later_honest_log(hashes, reviewer, client, token, tmp_path):
    answer = client.get("/api/v1/decisions", HTTP_AUTHORIZATION=f"Bearer {token}").json()
    path = _receipt_file(tmp_path, answer)  # the API's answer as the host saved it: its "head" is the receipt
    retire(actor=reviewer, hashes=hashes[:1])  # seq 4, later
    assert _verify("--receipt", path) == (
        "chain intact: 4 decisions\n" + RECEIPT_EXTENDED.format(seq=3, hash=_row(3).hash[:8]) + "\n"
    )


def test_an_acknowledgement_answers_with_the_receipt(hashes, client, token):
    from review.services.chain_head import chain_receipt

    answer = client.post(
        "/api/v1/decisions/2/ack",
        {"status": "applied"},
        content_type="application/json",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    ).json()
    assert answer["head"] == chain_receipt() == _head_of(3)


def test_a_receipt_against_a_log_the_key_holder_rewrote_fails(hashes, tmp_path):
    """Someone with the key and the database rewrites seq 2 and 3 and seals the new head: the log
    alone verifies, the host's receipt does not."""
    from review.models import ChainHead

    receipt = _head_of(3)
    _rehash_from(2, reason="Nothing to see.")
    ChainHead.objects.update(**_head_of(3))
    path = _receipt_file(tmp_path, receipt)
    assert _verify() == "chain intact: 3 decisions\n"
    assert _verify("--receipt", path) == "exit 1: " + RECEIPT_REWRITTEN.format(
        seq=3, row=_row(3).hash[:8], receipt=receipt["hash"][:8]
    )


@pytest.mark.counts_unchecked  # a row deleted behind the writers' backs: the tamper under test
def test_an_older_sealed_head_put_back_passes_the_seal_but_not_a_receipt(hashes, tmp_path):
    """What the seal cannot stop: a writer who kept the head at seq 2 (seal and all) deletes seq 3 and
    puts that head back. A receipt for seq 3 shows it."""
    from review.models import ChainHead

    older, receipt = _head_of(2), _head_of(3)
    _row(3).delete()
    ChainHead.objects.update(**older)
    assert _verify() == "chain intact: 2 decisions\n"
    assert _verify("--receipt", _receipt_file(tmp_path, receipt)) == "exit 1: " + RECEIPT_BEYOND.format(
        seq=3, last=2
    )


def test_a_receipt_this_server_did_not_seal_is_refused(hashes, tmp_path):
    path = _receipt_file(tmp_path, {**_head_of(2), "mac": "0" * 64})
    assert _verify("--receipt", path) == "exit 1: " + RECEIPT_SEAL_BROKEN.format(path=path)


@pytest.mark.parametrize("content", ["[1, 2]", '{"seq": "3", "hash": "ab"}', '{"seq": 3}', "not json"])
def test_a_file_that_is_not_a_receipt_is_one_line(db, tmp_path, content):
    path = tmp_path / "receipt.json"
    path.write_text(content, encoding="utf-8")
    assert _verify("--receipt", str(path)) == "exit 1: " + RECEIPT_INVALID.format(path=path)


def test_an_export_since_the_receipt_extends_it_and_a_rewritten_one_does_not(hashes, reviewer, tmp_path):
    """A host without the database: ``--file`` with ``--receipt`` (the seal is the server's to check)."""
    receipt = _receipt_file(tmp_path, _head_of(2))
    honest_second = _head_of(2)["hash"]
    retire(actor=reviewer, hashes=hashes[:1])  # seq 4
    honest, rewritten = tmp_path / "since-2.jsonl", tmp_path / "rewritten.jsonl"
    with honest.open("w", encoding="utf-8") as handle:
        call_command("export_decisions", "--since", "2", stdout=handle)
    _rehash_from(2, reason="Nothing to see.")
    with rewritten.open("w", encoding="utf-8") as handle:
        call_command("export_decisions", stdout=handle)
    assert _verify("--file", str(honest), "--receipt", receipt) == (
        "chain intact: 2 decisions\n" + RECEIPT_EXTENDED.format(seq=2, hash=honest_second[:8]) + "\n"
    )
    assert _verify("--file", str(rewritten), "--receipt", receipt) == "exit 1: " + RECEIPT_REWRITTEN.format(
        seq=2, row=_row(2).hash[:8], receipt=honest_second[:8]
    )
    first = _receipt_file(tmp_path, _head_of(1), "seq-1.json")
    assert _verify("--file", str(honest), "--receipt", first) == (
        "exit 1: " + RECEIPT_NOT_IN_FILE.format(path=honest, seq=1, first=3, last=4)
    )
