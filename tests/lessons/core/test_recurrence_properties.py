"""Property tests of recurrence attribution: order, timing and partition invariants.

Pure tests: no database, no Django. spec: docs/piles-and-recurrence.md, "Attributing one correction".
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.core.recurrence import (
    Correction,
    Exposure,
    LessonVersion,
    RecurrenceResult,
    attribute,
    attribute_corrections,
    attribute_profiled,
    current_hashes,
    lesson_key,
    text_matches,
    version_profiles,
)

SETTINGS = settings(max_examples=100, deadline=None)

SESSIONS = ("s1", "s2", "s3")
KEYS = (
    lesson_key(hash="a" * 64, store="team-playbook", lesson_id="L-1"),
    lesson_key(hash="b" * 64, store="personal", lesson_id="L-1"),
    lesson_key(hash="c" * 64, store=None, lesson_id=None),
)
# A small shared vocabulary so corrections often match one, several or no lessons.
WORDS = ("convert", "timestamp", "columns", "staging", "models", "revenue", "the")
ANCHORS = ("`to_utc`", "`is_internal`", "`_at`", "`stg_`")
SINGLE = ("recurred", "during", "unknown", "earlier_version")
FIELDS = (*SINGLE, "ambiguous")

texts = st.lists(st.sampled_from(WORDS + ANCHORS), min_size=1, max_size=6).map(" ".join)
lesson_texts = st.lists(st.sampled_from(WORDS + ANCHORS), min_size=3, max_size=6).map(" ".join)
times = st.integers(min_value=0, max_value=20)


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@st.composite
def worlds(draw):
    """Versions of up to three keys (the first text current), exposures and corrections over them."""
    versions = []
    for key in KEYS[: draw(st.integers(min_value=1, max_value=len(KEYS)))]:
        # Keys often share a text (the same lesson in two stores), which makes ambiguity common.
        choices = lesson_texts | st.sampled_from([v.text for v in versions]) if versions else lesson_texts
        for index, text in enumerate(draw(st.lists(choices, min_size=1, max_size=3, unique=True))):
            versions.append(LessonVersion(key, f"{key}#{index}", text, text_hash(text), index == 0))
    hashes = sorted({(v.key, v.text_hash) for v in versions}) + [(KEYS[0], "0" * 64)]
    exposures = draw(
        st.lists(
            st.builds(
                lambda s, kh, t: Exposure(s, kh[0], kh[1], t),
                st.sampled_from(SESSIONS),
                st.sampled_from(hashes),
                times,
            ),
            max_size=16,
        )
    )
    text_of = {(v.key, v.text_hash): v.text for v in versions}
    kinds = st.sampled_from(("user_correction",) * 3 + ("tool_retry",))
    rows = []
    for _ in range(draw(st.integers(min_value=0, max_value=8))):
        seen = [e for e in exposures if (e.key, e.text_hash) in text_of]
        if seen and draw(st.booleans()):
            # Echo a text the session was shown, a little after it and with words added, so that
            # matches, ambiguity and every timing outcome come up often.
            exposure = draw(st.sampled_from(seen))
            text = f"{text_of[exposure.key, exposure.text_hash]} {draw(texts)}"
            k = exposure.shown_at_ms + draw(st.integers(min_value=0, max_value=4))
            t = draw(st.none() | st.integers(min_value=exposure.shown_at_ms - 3, max_value=k))
            rows.append((exposure.session, draw(kinds), text, k, t))
        else:
            rows.append(
                (
                    draw(st.sampled_from(SESSIONS)),
                    draw(kinds),
                    draw(texts),
                    draw(times),
                    draw(st.none() | times),
                )
            )
    corrections = [Correction(s, f"c{i}", kind, text, k, t) for i, (s, kind, text, k, t) in enumerate(rows)]
    return versions, exposures, corrections


def run(versions, exposures, corrections) -> RecurrenceResult:
    return attribute(versions=versions, exposures=exposures, corrections=corrections)


def without_sessions_shown(result: RecurrenceResult) -> dict:
    return {key: dataclasses.replace(counts, sessions_shown=0) for key, counts in result.counts.items()}


@SETTINGS
@given(worlds(), st.randoms(use_true_random=False))
def test_input_order_never_changes_the_result(world, random):
    versions, exposures, corrections = world
    expected = run(versions, exposures, corrections)
    shuffled = [list(items) for items in world]
    for items in shuffled:
        random.shuffle(items)
    result = run(*shuffled)
    assert result == expected
    assert list(result.counts.items()) == list(expected.counts.items())
    assert repr(result.coverage) == repr(expected.coverage)


@SETTINGS
@given(worlds(), st.booleans())
def test_session_by_session_with_the_profiles_kept_gives_the_attributions_of_all_at_once(world, upfront):
    # As a host's rebuild does (lessons/recurrence/attributing.py): chunks of sessions in order, the
    # profiles kept across them, made for all versions at once or for a key when a chunk first shows it.
    versions, exposures, corrections = world
    expected = attribute_corrections(versions=versions, exposures=exposures, corrections=corrections)
    current = current_hashes(versions)
    profiles = version_profiles(versions if upfront else [])
    got = []
    for session in sorted(SESSIONS):
        shown = [e for e in exposures if e.session == session]
        keys = {e.key for e in shown}
        version_profiles([v for v in versions if v.key in keys], into=profiles)
        mine = [c for c in corrections if c.session == session]
        got += attribute_profiled(profiles=profiles, current=current, exposures=shown, corrections=mine)
    assert tuple(got) == expected


@SETTINGS
@given(worlds(), st.data())
def test_an_exposure_moved_after_every_correction_never_counts(world, data):
    versions, exposures, corrections = world
    if not exposures:
        return
    index = data.draw(st.integers(min_value=0, max_value=len(exposures) - 1))
    later = max((c.corrected_at_ms for c in corrections), default=0) + 1
    moved = [
        *exposures[:index],
        exposures[index]._replace(shown_at_ms=later),
        *exposures[index + 1 :],
    ]
    dropped = exposures[:index] + exposures[index + 1 :]
    with_moved = run(versions, moved, corrections)
    with_dropped = run(versions, dropped, corrections)
    assert with_moved.attributions == with_dropped.attributions
    assert without_sessions_shown(with_moved) == without_sessions_shown(with_dropped)


@SETTINGS
@given(worlds(), st.data())
def test_exposures_of_a_lesson_no_correction_of_the_session_matches_change_nothing_else(world, data):
    versions, exposures, corrections = world
    key = data.draw(st.sampled_from(sorted({v.key for v in versions})))
    key_versions = [v for v in versions if v.key == key]
    # A session without corrections always qualifies, so the draw below never comes up empty.
    quiet = [
        session
        for session in (*SESSIONS, "s-quiet")
        if not any(
            c.session == session and c.kind == "user_correction" and text_matches(v.text, c.text)
            for c in corrections
            for v in key_versions
        )
    ]
    session = data.draw(st.sampled_from(quiet))
    added = data.draw(
        st.lists(
            st.builds(
                lambda v, t: Exposure(session, key, v.text_hash, t), st.sampled_from(key_versions), times
            ),
            min_size=1,
            max_size=4,
        )
    )
    before = run(versions, exposures, corrections)
    after = run(versions, exposures + added, corrections)
    assert after.attributions == before.attributions
    assert without_sessions_shown(after) == without_sessions_shown(before)
    for (other, current_hash), counts in after.counts.items():
        if other != key:
            assert counts.sessions_shown == before.counts[other, current_hash].sessions_shown


@SETTINGS
@given(worlds())
def test_counts_partition_the_user_corrections(world):
    versions, exposures, corrections = world
    result = run(versions, exposures, corrections)
    outcomes = Counter(a.outcome for a in result.attributions)
    total = Counter()
    for counts in result.counts.values():
        total.update({name: getattr(counts, name) for name in FIELDS})
        assert counts.recurred_sessions <= min(counts.recurred, counts.sessions_shown)
    for name in SINGLE:
        assert total[name] == outcomes[name]
    for (key, _), counts in result.counts.items():
        recurred = [a for a in result.attributions if a.outcome == "recurred" and a.keys == (key,)]
        assert counts.recurred_sessions == len({a.session for a in recurred})
    ambiguous = [a for a in result.attributions if a.outcome == "ambiguous"]
    assert all(len(a.keys) >= 2 for a in ambiguous)
    assert total["ambiguous"] == sum(len(a.keys) for a in ambiguous)
    users = sum(1 for c in corrections if c.kind == "user_correction")
    coverage = result.coverage
    assert coverage["attributed"] + coverage["ambiguous"] + coverage["unmatched"] == users
    assert outcomes["not_attributed"] == len(corrections) - users


@SETTINGS
@given(worlds(), st.data())
def test_each_correction_adds_one_to_one_key_or_ambiguous_to_several_or_nothing(world, data):
    versions, exposures, corrections = world
    if not corrections:
        return
    index = data.draw(st.integers(min_value=0, max_value=len(corrections) - 1))
    correction = corrections[index]
    before = run(versions, exposures, corrections[:index] + corrections[index + 1 :])
    after = run(versions, exposures, corrections)
    (attribution,) = [a for a in after.attributions if a.correction_id == correction.id]
    delta = {
        key: {name: getattr(after.counts[key], name) - getattr(before.counts[key], name) for name in FIELDS}
        for key in after.counts
    }
    expected = {key: dict.fromkeys(FIELDS, 0) for key in after.counts}
    current = {key: key_hash for key, key_hash in after.counts}
    if attribution.outcome in SINGLE:
        assert len(attribution.keys) == 1
        expected[attribution.keys[0], current[attribution.keys[0]]][attribution.outcome] = 1
    elif attribution.outcome == "ambiguous":
        assert len(attribution.keys) >= 2
        for key in attribution.keys:
            expected[key, current[key]]["ambiguous"] = 1
    else:
        assert attribution.keys == ()
    assert delta == expected
    for key, counts in after.counts.items():
        assert counts.sessions_shown == before.counts[key].sessions_shown
        grew = counts.recurred_sessions - before.counts[key].recurred_sessions
        assert grew in ((0, 1) if attribution.outcome == "recurred" else (0,))
