"""The lesson's recurrence timeline: a server-rendered SVG whose texts are all escaped.

spec: recurrence.md; style.md ("Lesson text is untrusted").
"""

from __future__ import annotations

import re

import pytest
from django.template import Context, Template

from lessons.models import Lesson
from lessons.recurrence.lesson import lesson_recurrence
from tests.builders import correction, exposure, host, lesson
from tests.lessons.recurrence.builders import (
    ENTITY,
    HOST,
    OCT_1,
    clock,
    correction_id,
    hash_of,
)

TEXT = "Convert `*_at` timestamp columns with `to_utc` in staging models."
HOSTILE = "<script>alert(1)</script> No, convert the `created_at` timestamps with `to_utc`."


def render(rec) -> str:
    return Template("{% load recurrence_svg %}{% recurrence_timeline rec %}").render(Context({"rec": rec}))


@pytest.fixture
def hostile(ingest):
    report = ingest(
        [
            host(name=HOST),
            lesson(host=HOST, **ENTITY, text=TEXT, created_at=OCT_1),
            exposure(
                host=HOST, session='s"><script>x()</script>', shown_at=clock("10:00"), lesson=hash_of(TEXT)
            ),
            correction(
                host=HOST,
                session='s"><script>x()</script>',
                id=correction_id('s"><script>x()</script>', "10:01"),
                text=HOSTILE,
                corrected_at=clock("10:01"),
                turn_started_at=clock("10:00:30"),
            ),
            correction(
                host=HOST,
                session="s-unseen",
                id=correction_id("s-unseen", "09:00"),
                text=HOSTILE,
                corrected_at=clock("09:00"),
            ),
        ]
    )
    assert report.ok, report.error_lines()
    return lesson_recurrence(lesson=Lesson.objects.select_related("host").get(hash=hash_of(TEXT)))


def test_a_correction_text_with_a_script_tag_is_escaped_in_the_svg(hostile):
    svg = render(hostile)
    assert "<script" not in svg
    assert (
        "&lt;script&gt;alert(1)&lt;/script&gt; No, convert the `created_at` timestamps with `to_utc`." in svg
    )
    assert "s&quot;&gt;&lt;script&gt;x()&lt;/script&gt;" in svg


def test_each_outcome_has_its_own_marker_and_the_legend_names_them(hostile):
    svg = render(hostile)
    assert svg.startswith('<svg class="recurrence-timeline"')
    assert svg.count('<g class="m-recurred">') == 2  # the marker and its legend entry
    assert svg.count('<g class="m-on_topic">') == 2  # the unseen session's correction, and the legend
    for label in ("recurred", "during the turn", "unknown timing", "earlier version shown", "ambiguous"):
        assert f">{label}</text>" in svg


def test_the_recurred_correction_sits_after_the_first_exposure_on_the_time_axis(hostile):
    svg = render(hostile)
    shown_x = float(re.search(r'<g class="m-shown_current"><title>[^<]*</title><line x1="([\d.]+)"', svg)[1])
    recurred_x = float(re.search(r'<g class="m-recurred"><title>[^<]*</title><circle cx="([\d.]+)"', svg)[1])
    unseen_x = float(re.search(r'<g class="m-on_topic"><title>[^<]*</title><path d="M([\d.]+)', svg)[1])
    assert unseen_x + 4 < shown_x < recurred_x


def test_nothing_to_draw_still_renders_an_axis_around_the_creation_date(db, ingest):
    assert ingest([host(name=HOST), lesson(host=HOST, **ENTITY, text=TEXT, created_at=OCT_1)]).ok
    rec = lesson_recurrence(lesson=Lesson.objects.select_related("host").get(hash=hash_of(TEXT)))
    svg = render(rec)
    assert "0 sessions shown it, 0 corrections charged, 0 verdicts" in svg
    assert ">created</text>" in svg
