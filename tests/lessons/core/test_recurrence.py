"""Recurrence core: the worked examples of docs/piles-and-recurrence.md, token rules and unmatched topics.

Pure tests: no database, no Django. spec: docs/piles-and-recurrence.md.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.core.recurrence import (
    STOP_WORDS,
    Attribution,
    Correction,
    Counts,
    Exposure,
    LessonVersion,
    RecurrenceResult,
    anchors,
    attribute,
    content_tokens,
    correction_tokens,
    correction_topics,
    lesson_key,
    runs,
    text_matches,
    unmatched_topics,
)


def text_hash(text: str) -> str:
    # interchange.md, "Text normalization and hashes": NFKC, whitespace runs to one space, trim.
    normalized = re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text)).strip()
    return hashlib.sha256(normalized.encode("utf-8")).hexdigest()


def ms(iso: str) -> int:
    """Epoch milliseconds of an ISO 8601 string with Z."""
    moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return int(moment.timestamp() * 1000)


def at(clock: str) -> int:
    """Epoch milliseconds of a wall-clock time (``10:00`` or ``10:00:00.019``) on 2026-10-05, UTC."""
    if clock.count(":") == 1:
        clock += ":00"
    return ms(f"2026-10-05T{clock}Z")


def version(key: str, text: str, *, current: bool = True) -> LessonVersion:
    return LessonVersion(
        key=key,
        hash=text_hash(f"h\x1f{key}\x1f{text}"),
        text=text,
        text_hash=text_hash(text),
        is_current=current,
    )


def shown(session: str, lesson: LessonVersion, clock: str) -> Exposure:
    return Exposure(session=session, key=lesson.key, text_hash=lesson.text_hash, shown_at_ms=at(clock))


def corrected(
    session: str,
    clock: str,
    text: str,
    *,
    turn: str | None = None,
    kind: str = "user_correction",
    id: str | None = None,
) -> Correction:
    return Correction(
        session=session,
        id=id or f"{session}-{clock}",
        kind=kind,
        text=text,
        corrected_at_ms=at(clock),
        turn_started_at_ms=None if turn is None else at(turn),
    )


def counts_of(result: RecurrenceResult, lesson: LessonVersion) -> Counts:
    return result.counts[lesson.key, lesson.text_hash]


L1_KEY = lesson_key(hash="0" * 64, store="team-playbook", lesson_id="L-0001")
L1_TEXT = "Convert `*_at` timestamp columns with `to_utc` in staging models."
L1 = version(L1_KEY, L1_TEXT)
L1_EARLIER = version(L1_KEY, "Convert `*_at` timestamp columns with `to_utc`.", current=False)
L2_TEXT = "Staging models must convert timestamp columns to UTC."
L2 = version(lesson_key(hash=text_hash(L2_TEXT), store=None, lesson_id=None), L2_TEXT)
VERSIONS = (L1, L1_EARLIER, L2)

ON_TOPIC = "No, convert the `created_at` timestamps with `to_utc`."


def run(exposures: list[Exposure], corrections: list[Correction]) -> RecurrenceResult:
    return attribute(versions=VERSIONS, exposures=exposures, corrections=corrections)


# --- The ten worked examples (docs/piles-and-recurrence.md, "Worked examples") ---------------------------------


def test_example_1_shown_before_the_turn_is_recurred():
    result = run([shown("s1", L1, "10:00:00.000")], [corrected("s1", "10:01", ON_TOPIC, turn="10:00:00.019")])
    assert counts_of(result, L1) == Counts(sessions_shown=1, recurred=1, recurred_sessions=1)
    assert result.attributions == (Attribution("s1-10:01", "s1", "recurred", (L1_KEY,)),)


def test_example_2_recurred_in_two_sessions_is_recurring():
    result = run(
        [shown("s1", L1, "10:00:00.000"), shown("s2", L1, "10:00:00.000")],
        [corrected(s, "10:01", ON_TOPIC, turn="10:00:00.019") for s in ("s1", "s2")],
    )
    assert counts_of(result, L1) == Counts(sessions_shown=2, recurred=2, recurred_sessions=2)
    assert counts_of(result, L1).recurring is True


def test_example_3_shown_mid_turn_is_during():
    result = run([shown("s3", L1, "10:00:23")], [corrected("s3", "10:01", ON_TOPIC, turn="10:00")])
    assert counts_of(result, L1) == Counts(sessions_shown=1, during=1)
    assert result.attributions[0].outcome == "during"


def test_example_4_unknown_turn_start_is_unknown():
    result = run([shown("s4", L1, "10:00")], [corrected("s4", "10:01", ON_TOPIC, turn=None)])
    assert counts_of(result, L1) == Counts(sessions_shown=1, unknown=1)


def test_example_5_full_anchor_without_another_content_token_does_not_match():
    text = "Don't drop `to_utc` from the macros list."
    result = run([shown("s5", L1, "10:00")], [corrected("s5", "10:01", text, turn="10:00:30")])
    assert counts_of(result, L1) == Counts(sessions_shown=1)
    assert result.attributions[0].outcome == "unmatched"


def test_example_6_affix_anchor_alone_does_not_match():
    result = run(
        [shown("s6", L1, "10:00")], [corrected("s6", "10:01", "Use the `_at` suffix.", turn="10:00:30")]
    )
    assert counts_of(result, L1) == Counts(sessions_shown=1)
    assert result.attributions[0].outcome == "unmatched"


def test_example_7_correction_matching_two_shown_lessons_is_ambiguous_for_both():
    text = "convert the timestamp columns in staging models"
    result = run(
        [shown("s7", L1, "10:00"), shown("s7", L2, "10:00")],
        [corrected("s7", "10:01", text, turn="10:00:30")],
    )
    assert counts_of(result, L1) == Counts(sessions_shown=1, ambiguous=1)
    assert counts_of(result, L2) == Counts(sessions_shown=1, ambiguous=1)
    assert result.attributions[0].outcome == "ambiguous"
    assert result.attributions[0].keys == tuple(sorted((L1.key, L2.key)))


def test_example_8_only_an_earlier_text_shown_is_earlier_version():
    result = run([shown("s8", L1_EARLIER, "10:00")], [corrected("s8", "10:01", ON_TOPIC, turn="10:00:30")])
    assert counts_of(result, L1) == Counts(sessions_shown=0, earlier_version=1)
    assert (L1.key, L1_EARLIER.text_hash) not in result.counts


def test_example_9_lesson_first_shown_after_the_correction_does_not_count():
    result = run([shown("s9", L1, "10:05")], [corrected("s9", "10:01", ON_TOPIC, turn="10:00:30")])
    # Shown at some time, so sessions_shown is 1; no correction is charged to it.
    assert counts_of(result, L1) == Counts(sessions_shown=1)
    assert result.attributions[0].outcome == "unmatched"


def test_example_10_lesson_never_shown_does_not_compete():
    result = run([], [corrected("s10", "10:01", ON_TOPIC, turn="10:00:30")])
    assert counts_of(result, L1) == Counts()
    assert result.attributions[0] == Attribution("s10-10:01", "s10", "unmatched", ())


# --- Tokens (docs/piles-and-recurrence.md, "Tokens") ---------------------------------------------------------------


def test_runs_of_l1_are_every_maximal_word_run_lowercased_in_order():
    assert runs(L1_TEXT) == [
        "convert",
        "_at",
        "timestamp",
        "columns",
        "with",
        "to_utc",
        "in",
        "staging",
        "models",
    ]


def test_correction_tokens_are_the_set_of_its_runs_outside_ascii_too():
    # an ASCII text is lowered whole; "İ" lowers to "i" and a combining dot, which must not join "K" and "ng"
    assert correction_tokens("Keep `To_UTC` in Staging, keep it!") == {
        "keep",
        "to_utc",
        "in",
        "staging",
        "it",
    }
    assert correction_tokens("Kİng \u212aelvin") == {"k", "ng", "elvin"}


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("aZ_9 `.İ\u212aéß-")))
def test_correction_tokens_are_the_set_of_runs(text):
    assert correction_tokens(text) == frozenset(runs(text))


def test_content_tokens_of_l1():
    assert content_tokens(L1_TEXT) == {"convert", "timestamp", "columns", "to_utc", "staging", "models"}


def test_anchors_of_l1_split_full_and_affix():
    assert anchors(L1_TEXT) == (frozenset({"to_utc"}), frozenset({"_at"}))


def test_stop_list_is_the_82_words_of_the_spec():
    assert len(STOP_WORDS) == 82
    assert {"and", "dont", "instead", "okay", "without", "wrong", "correct"} <= STOP_WORDS


def test_stop_list_words_are_not_content_tokens():
    assert content_tokens(" ".join(sorted(STOP_WORDS))) == frozenset()
    assert content_tokens("Always make sure you use the correct schema") == {"schema"}


def test_short_numeric_and_underscore_edged_runs_are_not_content_tokens():
    assert content_tokens("go to 2026 `stg_` _tmp x_y abc 3rd") == {"x_y", "abc", "3rd"}


def test_content_tokens_are_case_insensitive_and_counted_once():
    assert content_tokens("Revenue REVENUE revenue") == {"revenue"}


def test_anchors_keep_stop_words_and_short_runs_as_full_anchors():
    assert anchors("Set `is_internal = false` and `id`.") == (
        frozenset({"is_internal", "false", "id"}),
        frozenset(),
    )


def test_unpaired_backtick_opens_no_anchor():
    assert anchors("use `a_b` then `tail") == (frozenset({"a_b"}), frozenset())


def test_correction_tokens_keep_every_run():
    assert correction_tokens("No, it's `to_utc`!") == {"no", "it", "s", "to_utc"}


def test_correction_topics_are_its_full_anchors():
    assert correction_topics("Use `dim_calendar` and the `*_at` columns.") == {"dim_calendar"}


# --- Matching (docs/piles-and-recurrence.md, "Matching one correction against one lesson text") --------------------


def test_rule_a_anchor_plus_another_content_token_matches():
    assert text_matches(L1_TEXT, "the `to_utc` macro, convert it") is True


def test_rule_a_second_token_must_be_a_content_token_not_a_stop_word():
    assert text_matches(L1_TEXT, "use to_utc with this") is False


def test_affix_anchor_counts_for_nothing_even_next_to_a_content_token():
    assert text_matches(L1_TEXT, "the _at staging") is False


@pytest.mark.parametrize(
    ("lesson_tokens", "shared", "expected"),
    [
        (5, 3, True),  # exactly 60%
        (10, 6, True),  # exactly 60%
        (6, 3, False),  # 50%
        (9, 5, False),  # 55.6%, just below
        (3, 3, True),
        (3, 2, False),  # 67%, but fewer than 3 shared
    ],
)
def test_rule_b_needs_three_shared_tokens_covering_sixty_percent(lesson_tokens, shared, expected):
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
    lesson = " ".join(words[:lesson_tokens])
    correction = " ".join(words[:shared]) + " zulu yankee"
    assert text_matches(lesson, correction) is expected


# --- Attribution details --------------------------------------------------------------------------


def test_lesson_key_uses_store_and_id_else_hash():
    assert lesson_key(hash="ab", store="team-playbook", lesson_id="L-0001") == "id:team-playbook\x1fL-0001"
    assert lesson_key(hash="ab", store=None, lesson_id="L-0001") == "id:\x1fL-0001"
    assert lesson_key(hash="ab", store="team-playbook", lesson_id=None) == "hash:ab"


def test_counts_as_dict_has_the_seven_counts_in_order():
    assert list(Counts(recurred=1).as_dict().items()) == [
        ("sessions_shown", 0),
        ("recurred", 1),
        ("recurred_sessions", 0),
        ("during", 0),
        ("unknown", 0),
        ("ambiguous", 0),
        ("earlier_version", 0),
    ]


def test_recurring_needs_two_recurred_sessions():
    assert Counts(recurred=5, recurred_sessions=1).recurring is False


def test_two_recurred_corrections_in_one_session_are_one_recurred_session():
    corrections = [
        corrected("s1", "10:01", ON_TOPIC, turn="10:00:30"),
        corrected("s1", "10:03", ON_TOPIC, turn="10:02"),
    ]
    result = run([shown("s1", L1, "10:00")], corrections)
    assert counts_of(result, L1) == Counts(sessions_shown=1, recurred=2, recurred_sessions=1)
    assert counts_of(result, L1).recurring is False


def test_shown_at_the_turn_start_is_recurred():
    result = run([shown("s1", L1, "10:00")], [corrected("s1", "10:01", ON_TOPIC, turn="10:00")])
    assert counts_of(result, L1) == Counts(sessions_shown=1, recurred=1, recurred_sessions=1)


def test_shown_at_the_correction_time_competes():
    result = run([shown("s1", L1, "10:01")], [corrected("s1", "10:01", ON_TOPIC, turn="10:00")])
    assert counts_of(result, L1) == Counts(sessions_shown=1, during=1)


def test_earliest_current_exposure_before_the_correction_decides():
    exposures = [shown("s1", L1, "10:00:40"), shown("s1", L1, "09:59")]
    result = run(exposures, [corrected("s1", "10:01", ON_TOPIC, turn="10:00")])
    assert counts_of(result, L1) == Counts(sessions_shown=1, recurred=1, recurred_sessions=1)


def test_current_text_shown_after_the_correction_leaves_earlier_version():
    exposures = [shown("s1", L1_EARLIER, "10:00"), shown("s1", L1, "10:05")]
    result = run(exposures, [corrected("s1", "10:01", ON_TOPIC, turn="10:00:30")])
    assert counts_of(result, L1) == Counts(sessions_shown=1, earlier_version=1)


def test_exposure_of_an_unknown_text_competes_but_cannot_match():
    unknown = Exposure(session="s1", key=L1_KEY, text_hash="f" * 64, shown_at_ms=at("10:00"))
    result = run([unknown], [corrected("s1", "10:01", ON_TOPIC, turn="10:00:30")])
    assert counts_of(result, L1) == Counts()
    assert result.attributions[0].outcome == "unmatched"


def test_same_lesson_id_in_another_store_never_borrows_evidence():
    other = version(lesson_key(hash="1" * 64, store="personal", lesson_id="L-0001"), L1_TEXT)
    result = attribute(
        versions=[*VERSIONS, other],
        exposures=[shown("s1", other, "10:00")],
        corrections=[corrected("s1", "10:01", ON_TOPIC, turn="10:00:30")],
    )
    assert counts_of(result, L1) == Counts()
    assert counts_of(result, other) == Counts(sessions_shown=1, recurred=1, recurred_sessions=1)


def test_other_kinds_are_not_attributed_and_only_counted_in_coverage():
    corrections = [
        corrected("s1", "10:01", ON_TOPIC, turn="10:00:30", kind="tool_retry"),
        corrected("s1", "10:02", ON_TOPIC, turn="10:00:30"),
        corrected("s2", "10:01", "nothing about lessons", turn="10:00:30"),
        corrected("s2", "10:03", ON_TOPIC, kind="ci"),
    ]
    result = run([shown("s1", L1, "10:00"), shown("s1", L2, "10:00"), shown("s3", L2, "09:00")], corrections)
    assert counts_of(result, L1) == Counts(sessions_shown=1, recurred=1, recurred_sessions=1)
    assert [(a.correction_id, a.outcome) for a in result.attributions] == [
        ("s1-10:01", "not_attributed"),
        ("s1-10:02", "recurred"),
        ("s2-10:01", "unmatched"),
        ("s2-10:03", "not_attributed"),
    ]
    assert result.coverage == {
        "sessions": 3,
        "exposures": 3,
        "corrections_by_kind": {"ci": 1, "tool_retry": 1, "user_correction": 2},
        "attributed": 1,
        "ambiguous": 0,
        "unmatched": 1,
    }


def test_every_current_version_has_counts_in_key_order():
    result = run([], [])
    assert list(result.counts) == sorted([(L1.key, L1.text_hash), (L2.key, L2.text_hash)])
    assert set(result.counts.values()) == {Counts()}


def test_key_with_two_current_texts_is_refused():
    twin = version(L1_KEY, "Another current text for the same key.")
    with pytest.raises(ValueError, match="2 current texts"):
        attribute(versions=[L1, twin], exposures=[], corrections=[])


def test_key_without_a_current_text_is_refused():
    with pytest.raises(ValueError, match="0 current texts"):
        attribute(versions=[L1_EARLIER], exposures=[], corrections=[])


# --- Unmatched topics (docs/piles-and-recurrence.md, "Unmatched topics") -------------------------------------------


def topic_corrections(*rows: tuple[str, str]) -> list[Correction]:
    return [corrected(session, f"10:{i:02d}", text) for i, (session, text) in enumerate(rows)]


def test_unmatched_topics_sort_by_sessions_then_topic_and_stop_at_the_limit():
    corrections = topic_corrections(
        ("s1", "`zeta` `beta` `alpha` `gamma` `delta` `eta`"),
        ("s2", "`zeta` `beta` `alpha` `gamma` `delta` `eta`"),
        ("s3", "`zeta` `beta`"),
    )
    assert unmatched_topics(corrections=corrections, live_lesson_texts=[]) == [
        ("beta", 3),
        ("zeta", 3),
        ("alpha", 2),
        ("delta", 2),
        ("eta", 2),
    ]
    assert unmatched_topics(corrections=corrections, live_lesson_texts=[], limit=1) == [("beta", 3)]


def test_unmatched_topics_leave_out_full_anchors_of_live_lessons():
    corrections = topic_corrections(
        ("s1", "fix `to_utc` and `fx_daily`"), ("s2", "again `to_utc`, `fx_daily`")
    )
    assert unmatched_topics(corrections=corrections, live_lesson_texts=[L1_TEXT]) == [("fx_daily", 2)]


def test_unmatched_topics_need_two_distinct_sessions_of_user_corrections():
    corrections = [
        *topic_corrections(("s1", "`once`"), ("s1", "`once` again"), ("s2", "`twice`"), ("s3", "`twice`")),
        corrected("s4", "11:00", "`once`", kind="tool_retry"),
    ]
    assert unmatched_topics(corrections=corrections, live_lesson_texts=[]) == [("twice", 2)]


def test_affix_anchors_of_corrections_are_not_topics():
    corrections = topic_corrections(("s1", "the `_at` suffix"), ("s2", "the `_at` suffix"))
    assert unmatched_topics(corrections=corrections, live_lesson_texts=[]) == []


# --- Corpus check: warehouse-sql.jsonl, lesson L-0a07 ------------------------------------------------


def test_warehouse_sql_l_0a07_recurs_in_two_sessions_after_an_earlier_version():
    def key(lesson_id: str) -> str:
        return lesson_key(hash="", store="team-playbook", lesson_id=lesson_id)

    old_0a07 = version(key("L-0a07"), "Exclude internal accounts from revenue queries.", current=False)
    new_0a07 = version(
        key("L-0a07"), "Filter test accounts with `is_internal = false` in every revenue and retention query."
    )
    l_0a02 = version(
        key("L-0a02"), "Revenue means `net_revenue` after refunds; never report `gross_revenue` as revenue."
    )
    l_0a03 = version(key("L-0a03"), "Filter test accounts with `is_internal = false` in every revenue query.")
    exposures = [
        Exposure("w1", old_0a07.key, old_0a07.text_hash, ms("2026-02-04T00:00:00.000Z")),
        Exposure("w1", l_0a02.key, l_0a02.text_hash, ms("2026-02-04T00:00:00.000Z")),
        Exposure("w2", new_0a07.key, new_0a07.text_hash, ms("2026-02-05T00:00:00.000Z")),
        Exposure("w2", l_0a02.key, l_0a02.text_hash, ms("2026-02-05T00:00:00.000Z")),
        Exposure("w3", new_0a07.key, new_0a07.text_hash, ms("2026-02-06T00:00:00.000Z")),
        Exposure("w3", l_0a02.key, l_0a02.text_hash, ms("2026-02-06T00:00:00.000Z")),
    ]
    corrections = [
        Correction(
            "w1",
            "w1-c1",
            "user_correction",
            "You included internal accounts again; exclude them from revenue queries.",
            ms("2026-02-04T00:02:00.000Z"),
            ms("2026-02-04T00:00:30.000Z"),
        ),
        Correction(
            "w2",
            "w2-c1",
            "user_correction",
            "No: filter the test accounts with `is_internal = false` here too.",
            ms("2026-02-05T00:01:40.000Z"),
            ms("2026-02-05T00:00:20.000Z"),
        ),
        Correction(
            "w3",
            "w3-c1",
            "user_correction",
            "No: filter the test accounts with `is_internal = false` here too.",
            ms("2026-02-06T00:01:40.000Z"),
            ms("2026-02-06T00:00:20.000Z"),
        ),
    ]
    result = attribute(
        versions=[old_0a07, new_0a07, l_0a02, l_0a03], exposures=exposures, corrections=corrections
    )
    assert counts_of(result, new_0a07) == Counts(
        sessions_shown=2, recurred=2, recurred_sessions=2, earlier_version=1
    )
    assert counts_of(result, new_0a07).recurring is True
    assert counts_of(result, l_0a02) == Counts(sessions_shown=3)
    # L-0a03 has the same wording but was never shown: it does not compete.
    assert counts_of(result, l_0a03) == Counts()
    assert [a.outcome for a in result.attributions] == ["earlier_version", "recurred", "recurred"]
