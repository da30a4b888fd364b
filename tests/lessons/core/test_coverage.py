"""What a consolidation draft keeps and drops of its members. spec: decisions.md; docs/piles-and-recurrence.md "Tokens"."""

from lessons.core.coverage import MemberCoverage, draft_coverage, requires_confirmation

L1 = "Convert `*_at` timestamp columns with `to_utc` in staging models."
DRAFT_WITHOUT_ANCHOR = "Convert timestamp columns in staging models to UTC."
DRAFT_WITH_ANCHOR = "Convert timestamp columns in staging models with to_utc, always."


def test_a_draft_that_drops_a_full_anchor_lists_it_as_dropped():
    assert draft_coverage(draft_text=DRAFT_WITHOUT_ANCHOR, members=[("h1", L1, "held")]) == [
        MemberCoverage(
            hash="h1",
            verdict="held",
            kept_anchors=(),
            dropped_anchors=("to_utc",),
            kept_tokens=("columns", "convert", "models", "staging", "timestamp"),
            dropped_tokens=("to_utc",),
        )
    ]


def test_an_anchor_kept_outside_backticks_counts_as_kept():
    (member,) = draft_coverage(draft_text=DRAFT_WITH_ANCHOR, members=[("h1", L1, "held")])
    assert (member.kept_anchors, member.dropped_anchors, member.dropped_tokens) == (("to_utc",), (), ())


def test_affix_anchors_are_never_reported():
    (member,) = draft_coverage(
        draft_text="Nothing in common.", members=[("h1", "Use the `_at` suffix.", "held")]
    )
    assert (member.kept_anchors, member.dropped_anchors) == ((), ())
    assert member.dropped_tokens == ("suffix",)


def test_members_keep_their_input_order():
    coverage = draft_coverage(draft_text="x", members=[("b", "beta text", None), ("a", "alpha text", None)])
    assert [m.hash for m in coverage] == ["b", "a"]


def test_confirmation_is_required_for_anchors_dropped_from_held_members_only():
    coverage = draft_coverage(
        draft_text="Write `gross` amounts plainly.",
        members=[
            ("h1", "Write `gross` and `net` amounts as numbers.", "held"),
            ("h2", "Use `iso_date` for `flight_from`.", "held"),
            ("h3", "Keep `vendor_code` as printed.", "regressed"),
            ("h4", "Keep `net` as printed.", None),
        ],
    )
    assert requires_confirmation(coverage) == ["flight_from", "iso_date", "net"]


def test_no_confirmation_when_nothing_held_is_dropped():
    coverage = draft_coverage(draft_text=DRAFT_WITHOUT_ANCHOR, members=[("h1", L1, "drifted")])
    assert requires_confirmation(coverage) == []
