"""The recurrence refresh attributes a large chunk in two processes under ``manage.py ingest`` (issue 10,
Build 4): the attributions are exactly those of one process, in the same order.
spec: recurrence.md, "Attributing one correction"; lessons/recurrence/refresh.py ``_attribute``.
"""

from __future__ import annotations

import os

from hypothesis import given, settings
from hypothesis import strategies as st

from lessons.core.recurrence import attribute_corrections
from lessons.ingest import forked
from lessons.ingest.forked import forking, forking_allowed
from lessons.recurrence import refresh
from lessons.recurrence.refresh import _attribute, _ProfileMemo
from tests.lessons.core.test_recurrence_properties import worlds


@settings(max_examples=100, deadline=None)
@given(worlds(), st.booleans())
def test_two_processes_attribute_exactly_what_one_does(world, memo):
    versions, exposures, corrections = world
    expected = attribute_corrections(versions=versions, exposures=exposures, corrections=corrections)
    profile = _ProfileMemo() if memo else None
    old = refresh.PARALLEL_CORRECTIONS
    refresh.PARALLEL_CORRECTIONS = 1
    try:
        with forking(True):
            got = _attribute(versions, exposures, corrections, profile)
    finally:
        refresh.PARALLEL_CORRECTIONS = old
    assert got == expected
    if memo:  # filled here with every version's text, for both processes and the next chunks
        assert set(profile) == {v.text for v in versions}


def test_forking_is_allowed_only_within_the_block_and_where_the_platform_forks(monkeypatch):
    assert forking_allowed() is False
    with forking(True):
        assert forking_allowed() is True
        with forking(False):
            assert forking_allowed() is False
        assert forking_allowed() is True
        monkeypatch.setattr(forked, "can_fork", lambda: False)
        assert forking_allowed() is False
    assert forking_allowed() is False


def test_a_child_that_fails_leaves_its_half_to_this_process(monkeypatch):
    versions, exposures, corrections = _world_with_two_sessions()
    expected = attribute_corrections(versions=versions, exposures=exposures, corrections=corrections)
    parent = os.getpid()
    real = refresh.attribute_corrections

    def fails_in_the_child(**kwargs):
        if os.getpid() != parent:
            raise MemoryError("out of memory")
        return real(**kwargs)

    monkeypatch.setattr(refresh, "attribute_corrections", fails_in_the_child)
    monkeypatch.setattr(refresh, "PARALLEL_CORRECTIONS", 1)
    with forking(True):
        assert _attribute(versions, exposures, corrections, None) == expected
    assert [a.session for a in expected] == ["s1", "s2"]


def _world_with_two_sessions():
    from lessons.core.recurrence import Correction, Exposure, LessonVersion, lesson_key

    key = lesson_key(hash="a" * 64, store=None, lesson_id=None)
    text = "Convert timestamp columns with `to_utc` in staging models."
    versions = [LessonVersion(key, "v1", text, "h" * 64, True)]
    exposures = [Exposure("s1", key, "h" * 64, 1), Exposure("s2", key, "h" * 64, 1)]
    corrections = [
        Correction("s1", "c1", "user_correction", "Use `to_utc` on the timestamp columns.", 5, None),
        Correction("s2", "c2", "user_correction", "Unrelated: revenue is gross.", 5, None),
    ]
    return versions, exposures, corrections
