"""The outcome rules' indexes (lessons/core/outcomes.py) give what a scan of every correction gives:
``TopicIndex.against`` is ``text_matches`` (rules A/B) and the charge rule asked of each correction, ``Later`` the
corrections after a time with their distinct sessions, ``LatestVerdicts.after`` the latest verdict of each
lesson after a time. docs/decisions.md, "Outcomes"."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.core.outcomes import (
    EVIDENCE_CORRECTIONS,
    CorrectionSeen,
    Later,
    LatestVerdicts,
    TopicIndex,
    VerdictSeen,
)
from lessons.core.recurrence import AMBIGUOUS, RECURRED, UNMATCHED
from lessons.core.tokens import correction_tokens, correction_tokens_in, text_matches

# A small vocabulary, so that texts share words often; some words in backticks (anchors).
WORDS = ["contract", "number", "leading", "zeros", "gross", "amount", "invoice", "date", "flight", "copy"]
ANCHORS = ["`contract_number`", "`gross_amount`", "`zeros`"]
LESSONS = ["a" * 64, "b" * 64, "c" * 64]

texts = st.lists(st.sampled_from(WORDS + ANCHORS), min_size=1, max_size=9).map(" ".join)
charges = st.lists(
    st.tuples(st.sampled_from([UNMATCHED, RECURRED, AMBIGUOUS]), st.sampled_from(LESSONS)), max_size=2
).map(lambda pairs: tuple(sorted({(o, None if o == UNMATCHED else h) for o, h in pairs}, key=str)))


@st.composite
def corrections(draw) -> list[CorrectionSeen]:
    n = draw(st.integers(0, 25))
    return [
        CorrectionSeen(
            id=i,
            session=draw(st.sampled_from(["s1", "s2", "s3", "s4"])),
            at_ms=draw(st.integers(0, 50)),
            text=draw(texts),
            charged=draw(charges),
        )
        for i in range(n)
    ]


def _when(c: CorrectionSeen) -> tuple[int, int]:
    return c.at_ms, c.id


@settings(max_examples=300, deadline=None)
@given(corrections(), texts, st.sets(st.sampled_from(LESSONS)))
def test_against_is_every_correction_on_topic_that_counts(seen, lesson_text, kept):
    scanned = sorted(
        (
            c
            for c in seen
            if text_matches(lesson_text, c.text)
            and any(o == UNMATCHED or (o == RECURRED and h in kept) for o, h in c.charged)
        ),
        key=_when,
    )
    assert TopicIndex(seen).against(lesson_text, kept).items == scanned


@settings(max_examples=200, deadline=None)
@given(corrections(), st.integers(-1, 51))
def test_later_gives_what_came_after_a_time_and_its_sessions(seen, t):
    later = Later(seen)
    after = [c for c in sorted(seen, key=_when) if c.at_ms > t]
    start = later.start(t)
    assert later.items[start:] == after
    assert later.sessions_from[start] == len({c.session for c in after})
    listed, total = later.listed(start)
    assert total == len(after)
    assert listed == tuple(
        {"id": c.id, "session": c.session, "at_ms": c.at_ms} for c in after[:EVIDENCE_CORRECTIONS]
    )


@settings(max_examples=200, deadline=None)
@given(corrections(), st.sets(st.sampled_from(LESSONS), min_size=1))
def test_recurred_is_each_correction_charged_to_the_lessons_once(seen, lessons):
    expected = sorted(
        (c for c in seen if any(o == RECURRED and h in lessons for o, h in c.charged)), key=_when
    )
    assert TopicIndex(seen).recurred(lessons).items == expected


@st.composite
def verdicts(draw) -> list[VerdictSeen]:
    n = draw(st.integers(0, 12))
    return [
        VerdictSeen(
            lesson=draw(st.sampled_from(LESSONS)),
            verdict=draw(st.sampled_from(["held", "regressed", "drifted"])),
            at_ms=draw(st.integers(0, 20)),
            horizon_ms=draw(st.one_of(st.none(), st.integers(0, 3))),
            seq=i,  # the row id: the order they were ingested in
        )
        for i in range(n)
    ]


@settings(max_examples=200, deadline=None)
@given(verdicts(), st.sets(st.sampled_from(LESSONS)), st.integers(-1, 21))
def test_latest_verdicts_after_a_time(measured, lessons, t):
    # walk the verdicts after t from the earliest to the latest (measured_at, then the greater horizon, a
    # missing one lowest, then ingested later: docs/interchange.md), keeping each lesson's last; the
    # lessons in the order of their first verdict after t
    def rank(v):
        return v.at_ms, -1 if v.horizon_ms is None else v.horizon_ms, v.seq

    latest: dict[str, VerdictSeen] = {}
    for v in sorted((v for v in measured if v.at_ms > t), key=rank):
        if v.lesson in lessons:
            latest[v.lesson] = v
    assert LatestVerdicts(measured).after(lessons, t) == list(latest.values())


def test_a_tie_of_times_goes_to_the_greater_horizon_then_the_later_ingest():
    held = VerdictSeen(lesson=LESSONS[0], verdict="held", at_ms=5, horizon_ms=604_800_000, seq=1)
    regressed = VerdictSeen(lesson=LESSONS[0], verdict="regressed", at_ms=5, horizon_ms=86_400_000, seq=2)
    assert LatestVerdicts([held, regressed]).after([LESSONS[0]], 0) == [held]
    again = VerdictSeen(lesson=LESSONS[0], verdict="drifted", at_ms=5, horizon_ms=604_800_000, seq=3)
    assert LatestVerdicts([again, held, regressed]).after([LESSONS[0]], 0) == [again]


def test_an_anchor_alone_is_no_topic_and_an_anchor_with_a_word_is():
    seen = [
        CorrectionSeen(
            id=1, session="s1", at_ms=1, text="the `contract_number` again", charged=((UNMATCHED, None),)
        ),
        CorrectionSeen(
            id=2, session="s2", at_ms=2, text="`contract_number` leading zeros", charged=((UNMATCHED, None),)
        ),
    ]
    against = TopicIndex(seen).against("Keep the leading zeros of `contract_number`.", kept=())
    assert [c.id for c in against.items] == [2]


def _rows(seen: list[CorrectionSeen]) -> list[tuple]:
    # what the database read gives TopicIndex.from_rows: the counted charges, in time order, grouped
    return [
        (c.id, c.session, c.at_ms, c.text, o, h)
        for c in sorted(seen, key=_when)
        for o, h in sorted(c.charged, key=str)
        if o in (UNMATCHED, RECURRED)
    ]


@settings(max_examples=200, deadline=None)
@given(corrections(), texts, st.sets(st.sampled_from(LESSONS)), st.sets(st.sampled_from(LESSONS), min_size=1))
def test_the_index_read_as_rows_and_restricted_to_its_topics_answers_the_same(
    seen, lesson_text, kept, lessons
):
    whole = TopicIndex(seen)
    read = TopicIndex.from_rows(_rows(seen), topics=[lesson_text, "an other lesson"])
    for mine, theirs in (
        (whole.against(lesson_text, kept), read.against(lesson_text, kept)),
        (whole.recurred(lessons), read.recurred(lessons)),
    ):
        assert [(c.id, c.session, c.at_ms, c.text) for c in theirs.items] == [
            (c.id, c.session, c.at_ms, c.text) for c in mine.items
        ]
        assert theirs.listed(0) == mine.listed(0)
        assert theirs.sessions(0) == mine.sessions(0)


def test_a_read_correction_lists_its_counted_charges_and_an_unindexed_topic_is_refused():
    rows = [
        (7, "s1", 5, "`gross_amount` leading zeros", RECURRED, "b" * 64),
        (7, "s1", 5, "`gross_amount` leading zeros", RECURRED, "a" * 64),
        (9, "s2", 6, "keep the leading zeros of `gross_amount`!", UNMATCHED, None),
    ]
    index = TopicIndex.from_rows(rows, topics=["Keep the leading zeros of `gross_amount`."])
    assert index.recurred(["a" * 64]).items == [
        CorrectionSeen(
            id=7,
            session="s1",
            at_ms=5,
            text="`gross_amount` leading zeros",
            charged=((RECURRED, "a" * 64), (RECURRED, "b" * 64)),
        )
    ]
    assert [c.id for c in index.against("Keep the leading zeros of `gross_amount`.", kept=()).items] == [9]
    with pytest.raises(ValueError, match="outside those indexed"):
        index.against("Gross amounts carry two decimals.", kept=())


@settings(max_examples=300, deadline=None)
@given(
    text=st.text(alphabet=st.sampled_from(list("abAB_1 `.İı-éZz")), max_size=40),
    vocabulary=st.frozensets(st.text(alphabet=st.sampled_from(list("ab_1iz")), min_size=1, max_size=4)),
)
def test_a_corrections_tokens_in_a_vocabulary_are_those_of_all_its_tokens(text, vocabulary):
    """``correction_tokens_in`` (the index's look-up as runs are found) keeps exactly the tokens of
    ``correction_tokens`` that are in the vocabulary, ASCII or not (lowering "İ" gives ASCII letters)."""
    assert correction_tokens_in(text, vocabulary) == correction_tokens(text) & vocabulary
