"""The decision commands: exit codes, outputs and refusals. spec: README.md ("Commands")."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from lessons.models import Draft, Host, Lesson
from review.management.lookups import (
    DRAFT_AMBIGUOUS,
    DRAFT_UNKNOWN,
    HASH_AMBIGUOUS,
    HASH_ON_SEVERAL_HOSTS,
    HASH_PREFIX_INVALID,
    HASH_UNKNOWN,
    LESSONS_ON_SEVERAL_HOSTS,
    USER_UNKNOWN,
)
from review.models import Decision
from review.services.budget import BUDGET_NOTHING_GIVEN, BUDGET_OUT_OF_RANGE
from review.services.common import NOT_ALLOWED_BUDGET, NOT_ALLOWED_DECIDE, REASON_REQUIRED
from review.services.consolidation import DRAFT_BY_TRIGGER
from tests.builders import numbered_lesson
from tests.fixtures.decisions import NS

GOOD = "rec-adbuy-consolidate-1"


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def fails(*args: str) -> tuple[int, str]:
    with pytest.raises(CommandError) as exc:
        run(*args)
    return exc.value.returncode, str(exc.value)


def statuses(hashes):
    by_hash = dict(Lesson.objects.filter(hash__in=hashes).values_list("hash", "status"))
    return [by_hash[h] for h in hashes]


def test_retire_by_prefixes(pile, reviewer):
    out = run(
        "review",
        "retire",
        pile[0][:8],
        pile[1][:8].upper(),
        "--as",
        "rita",
        "--reason",
        "dup",
        "--code",
        "duplicate",
    )
    batch = Decision.objects.get(seq=1).batch
    assert out == f"retired 2 lesson(s) on acme desk.test/invoice_capture: decision #1-#2, batch {batch}\n"
    assert statuses(pile[:2]) == ["retracted", "retracted"]
    assert Decision.objects.get(seq=2).reason_code == "duplicate"


def test_retire_as_an_unknown_user_exits_1(pile):
    assert fails("review", "retire", pile[0], "--as", "nobody", "--reason", "x") == (
        1,
        USER_UNKNOWN.format(name="nobody"),
    )


def test_retire_as_a_viewer_exits_1_with_the_refusal(pile, viewer):
    assert fails("review", "retire", pile[0], "--as", "vera", "--reason", "x") == (
        1,
        NOT_ALLOWED_DECIDE.format(user="vera"),
    )
    assert statuses(pile[:1]) == ["live"]


def test_a_blank_reason_exits_1(pile, reviewer):
    assert fails("review", "retire", pile[0], "--as", "rita", "--reason", "  ") == (1, REASON_REQUIRED)


def test_a_missing_reason_is_wrong_usage(pile, reviewer):
    code, message = fails("review", "retire", pile[0], "--as", "rita")
    assert code == 2
    assert message == "Error: the following arguments are required: --reason"


def test_an_unknown_action_is_wrong_usage(db):
    with pytest.raises((CommandError, SystemExit)) as exc:
        run("review", "frobnicate", "--as", "rita", "--reason", "x")
    assert getattr(exc.value, "returncode", getattr(exc.value, "code", None)) == 2


def test_a_short_prefix_exits_1(pile, reviewer):
    assert fails("review", "retire", pile[0][:7], "--as", "rita", "--reason", "x") == (
        1,
        HASH_PREFIX_INVALID.format(value=pile[0][:7]),
    )


def test_a_prefix_that_is_not_hex_exits_1(pile, reviewer):
    assert fails("review", "retire", "zzzzzzzzzz", "--as", "rita", "--reason", "x")[0] == 1


def test_an_unknown_prefix_exits_1(pile, reviewer):
    assert fails("review", "retire", "00000000", "--as", "rita", "--reason", "x") == (
        1,
        HASH_UNKNOWN.format(prefix="00000000", where=""),
    )


@pytest.fixture
def twins(ingest):
    """Two lessons on two hosts whose hashes share the prefix ``abcdef01``."""
    a = {**numbered_lesson(1, namespace=NS, host="one"), "hash": "abcdef01" + "1" * 56}
    b = {**numbered_lesson(2, namespace=NS, host="two"), "hash": "abcdef01" + "2" * 56}
    assert ingest([a, b]).ok
    return a["hash"], b["hash"]


def test_an_ambiguous_prefix_exits_1_and_suggests_host(twins, reviewer):
    assert fails("review", "retire", "abcdef01", "--as", "rita", "--reason", "x") == (
        1,
        HASH_AMBIGUOUS.format(
            prefix="abcdef01",
            count=2,
            matches=f"one:{twins[0]}, two:{twins[1]}",  # whole hashes: eight characters would be the prefix
            hint=" or add --host NAME",
        ),
    )


def test_a_whole_hash_on_two_hosts_asks_for_the_host_not_more_characters(ingest, reviewer):
    """The attacker's finding 13: a full 64-hex hash on two hosts was told to "give more characters"."""
    same = "abcdef01" + "3" * 56
    one = {**numbered_lesson(3, namespace=NS, host="one"), "hash": same}
    two = {**numbered_lesson(3, namespace=NS, host="two"), "hash": same}
    assert ingest([one, two]).ok
    assert fails("review", "retire", same, "--as", "rita", "--reason", "x") == (
        1,
        HASH_ON_SEVERAL_HOSTS.format(prefix=same, count=2, hosts="one, two"),
    )


def test_host_disambiguates_a_prefix(twins, reviewer):
    run("review", "retire", "abcdef01", "--host", "two", "--as", "rita", "--reason", "x")
    assert statuses(list(twins)) == ["live", "retracted"]


def test_lessons_on_two_hosts_are_refused(twins, reviewer):
    assert fails("review", "retire", twins[0], twins[1], "--as", "rita", "--reason", "x") == (
        1,
        LESSONS_ON_SEVERAL_HOSTS.format(hosts="one, two"),
    )


def test_restore(pile, reviewer):
    run("review", "retire", pile[0], "--as", "rita", "--reason", "x")
    out = run("review", "restore", pile[0][:10], "--as", "rita", "--reason", "back")
    assert out == f"restored {pile[0][:8]}… on acme desk.test/invoice_capture: decision #2\n"
    assert statuses(pile[:1]) == ["live"]


def test_approve_reject_and_rollback_by_draft_id(corpora, reviewer, user_factory):
    user_factory("dana")
    assert fails("review", "approve", GOOD, "--as", "dana", "--reason", "x") == (
        1,
        DRAFT_BY_TRIGGER.format(user="dana", draft=GOOD),
    )
    out = run("review", "approve", GOOD, "--as", "rita", "--reason", "One rule")
    created = Decision.objects.get(seq=1).created_hash
    assert out == (
        f"approved draft {GOOD}: consolidation {created[:8]}… supersedes 10 lesson(s) on adbuy-desk "
        "desk.adbuy/invoice_capture: decision #1\n"
    )
    out = run("review", "rollback", GOOD, "--as", "rita", "--reason", "undo")
    assert out == (
        f"rolled back draft {GOOD}: consolidation {created[:8]}… retracted, "
        "the lessons it superseded are live again: decision #2\n"
    )
    out = run("review", "reject", "rec-adbuy-consolidate-0", "--as", "rita", "--reason", "invented number")
    assert out == "rejected draft rec-adbuy-consolidate-0 on adbuy-desk: decision #3\n"


def test_a_draft_by_the_dashboards_numeric_id(corpora, reviewer):
    pk = Draft.objects.get(ext_id="rec-adbuy-consolidate-0").pk
    run("review", "reject", str(pk), "--as", "rita", "--reason", "no")
    assert Draft.objects.get(pk=pk).status == "rejected"


def test_an_unknown_draft_exits_1(db, reviewer):
    assert fails("review", "reject", "nope", "--as", "rita", "--reason", "x") == (
        1,
        DRAFT_UNKNOWN.format(draft_id="nope", where=""),
    )


def test_a_draft_id_on_two_hosts_needs_host(ingest, reviewer):
    records = []
    for host in ("one", "two"):
        lesson = numbered_lesson(1, namespace=NS, host=host)
        records += [
            lesson,
            {
                "type": "draft",
                "host": host,
                "id": "d-1",
                "namespace": lesson["namespace"],
                "subject": lesson["subject"],
                "text": "Merged.",
                "supersedes": [lesson["hash"]],
                "drafted_by": "llm:x",
                "gates": {"ground": "pass", "verify": "pass"},
                "created_at": "2026-02-01T00:00:00Z",
            },
        ]
    assert ingest(records).ok
    assert fails("review", "reject", "d-1", "--as", "rita", "--reason", "x") == (
        1,
        DRAFT_AMBIGUOUS.format(draft_id="d-1", hosts="one, two"),
    )
    run("review", "reject", "d-1", "--host", "two", "--as", "rita", "--reason", "x")
    assert sorted(Draft.objects.values_list("host__name", "status")) == [
        ("one", "pending"),
        ("two", "rejected"),
    ]


def test_approve_needs_the_flag_when_held_anchors_are_dropped(pile, ingest, reviewer):
    member = numbered_lesson(7, namespace=NS, text="Convert timestamps with `to_utc` always.")
    ingest(
        [
            member,
            {
                "type": "verdict",
                "host": "acme",
                "lesson": member["hash"],
                "verdict": "held",
                "measured_at": "2026-02-01T00:00:00Z",
            },
            {
                "type": "draft",
                "host": "acme",
                "id": "d-9",
                "namespace": member["namespace"],
                "subject": member["subject"],
                "text": "Convert timestamps to UTC.",
                "supersedes": [member["hash"]],
                "drafted_by": "llm:x",
                "gates": {"ground": "pass", "verify": "pass"},
                "created_at": "2026-02-02T00:00:00Z",
            },
        ]
    )
    assert fails("review", "approve", "d-9", "--as", "rita", "--reason", "x")[0] == 1
    run("review", "approve", "d-9", "--as", "rita", "--reason", "x", "--confirm-dropped-anchors")
    assert Draft.objects.get(ext_id="d-9").status == "approved"


def test_budget_command(pile, admin_user):
    out = run("budget", "acme", "--max-active", "5", "--as", "ada", "--reason", "room")
    assert out == "acme: max_active 3 -> 5, budget enabled -> enabled; piles 1 -> 0: decision #1\n"
    out = run("budget", "acme", "--disable", "--as", "ada", "--reason", "pause")
    assert out == "acme: max_active 5 -> 5, budget enabled -> disabled; piles 0 -> 0: decision #2\n"
    assert (Host.objects.get(name="acme").max_active, Host.objects.get(name="acme").budget_enabled) == (
        5,
        False,
    )


def test_budget_by_a_reviewer_exits_1(pile, reviewer):
    assert fails("budget", "acme", "--max-active", "5", "--as", "rita", "--reason", "x") == (
        1,
        NOT_ALLOWED_BUDGET.format(user="rita"),
    )


def test_budget_out_of_range_exits_1(pile, admin_user):
    assert fails("budget", "acme", "--max-active", "0", "--as", "ada", "--reason", "x") == (
        1,
        BUDGET_OUT_OF_RANGE.format(value=0),
    )


def test_budget_without_a_change_is_wrong_usage(pile, admin_user):
    assert fails("budget", "acme", "--as", "ada", "--reason", "x") == (2, BUDGET_NOTHING_GIVEN)


def test_budget_on_an_unknown_host_exits_1(db, admin_user):
    assert fails("budget", "nope", "--enable", "--as", "ada", "--reason", "x") == (
        1,
        "HOST nope: no such host.",
    )
