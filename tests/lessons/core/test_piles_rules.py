"""The pile rules (docs/piles-and-recurrence.md) and the seed analyzer's test cases (seeds/lesson_pile.rs.txt), restated."""

from lessons.core.piles import (
    NOT_APPLIED,
    PileMember,
    entity_pile,
    is_over_budget,
    pile_summary,
    pile_target,
)


def member(i: int, verdict=None, status="live", created=None) -> PileMember:
    return PileMember(
        hash=f"{i:02x}" * 32,
        created_at_ms=created if created is not None else 1000 + i,
        status=status,
        verdict=verdict,
    )


def lessons(n: int, **kw) -> list[PileMember]:
    return [member(i, **kw) for i in range(n)]


# seed: flags_a_pile_over_budget_with_each_members_verdict
def test_nine_live_lessons_over_a_budget_of_eight_are_one_pile_citing_all_nine_with_verdicts():
    nine = lessons(9)
    nine[0] = member(0, verdict="held")
    nine[3] = member(3, verdict="regressed")
    pile = entity_pile(namespace="", subject="capture", max_active=8, budget_enabled=True, lessons=nine)
    assert pile is not None
    assert [m.hash for m in pile.members] == [m.hash for m in nine]
    verdicts = ["held", NOT_APPLIED, NOT_APPLIED, "regressed"] + [NOT_APPLIED] * 5
    rendered = ", ".join(f"{i:02x}{i:02x}{i:02x}{i:02x}\u2026 ({v})" for i, v in enumerate(verdicts))
    assert pile.summary == f'9 live lessons on "capture" exceed the budget of 8: {rendered}'
    assert pile.severity == "medium"


def test_eight_live_lessons_are_within_a_budget_of_eight():
    assert (
        entity_pile(namespace="", subject="capture", max_active=8, budget_enabled=True, lessons=lessons(8))
        is None
    )


# seed: a_retracted_lesson_does_not_count
def test_a_retracted_lesson_does_not_count():
    nine = lessons(9)
    nine[8] = member(8, status="retracted")
    assert (
        entity_pile(namespace="", subject="capture", max_active=8, budget_enabled=True, lessons=nine) is None
    )
    pile = entity_pile(namespace="", subject="capture", max_active=3, budget_enabled=True, lessons=nine)
    assert pile is not None and pile.count == 8


def test_a_superseded_lesson_does_not_count():
    nine = lessons(9)
    nine[2] = member(2, status="superseded")
    assert entity_pile(namespace="n", subject="s", max_active=8, budget_enabled=True, lessons=nine) is None


# seed: manifest_pinned_default_off
def test_a_host_without_an_enabled_budget_has_no_piles():
    assert (
        entity_pile(namespace="", subject="capture", max_active=1, budget_enabled=False, lessons=lessons(50))
        is None
    )
    assert is_over_budget(live_count=50, max_active=1, budget_enabled=False) is False


def test_over_budget_is_strictly_greater_than_max_active():
    assert is_over_budget(live_count=9, max_active=8, budget_enabled=True) is True
    assert is_over_budget(live_count=8, max_active=8, budget_enabled=True) is False


def test_members_are_ordered_by_created_at_then_hash():
    a = PileMember(hash="b" * 64, created_at_ms=5, status="live", verdict=None)
    b = PileMember(hash="a" * 64, created_at_ms=5, status="live", verdict=None)
    c = PileMember(hash="0" * 64, created_at_ms=9, status="live", verdict=None)
    pile = entity_pile(namespace="", subject="s", max_active=2, budget_enabled=True, lessons=[c, a, b])
    assert [m.hash[0] for m in pile.members] == ["a", "b", "0"]


def test_target_uses_the_namespace_only_when_not_empty():
    assert pile_target("desk.adbuy", "invoice_capture") == "entity:desk.adbuy/invoice_capture"
    assert pile_target("", "capture") == "entity:capture"


def test_summary_format_is_exact():
    members = [
        PileMember(hash="1a2b3c4d" + "0" * 56, created_at_ms=1, status="live", verdict="held"),
        PileMember(hash="9f8e7d6c" + "0" * 56, created_at_ms=2, status="live", verdict=None),
    ]
    assert pile_summary("invoice_capture", 1, members) == (
        '2 live lessons on "invoice_capture" exceed the budget of 1: '
        "1a2b3c4d\u2026 (held), 9f8e7d6c\u2026 (not applied by the loop)"
    )


def test_unknown_verdicts_are_shown_as_they_are():
    members = [PileMember(hash="f" * 64, created_at_ms=1, status="live", verdict="inconclusive")] * 2
    assert pile_summary("s", 1, members).endswith(
        "ffffffff\u2026 (inconclusive), ffffffff\u2026 (inconclusive)"
    )
