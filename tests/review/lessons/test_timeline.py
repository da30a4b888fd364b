"""The lesson's recurrence timeline: a server-rendered SVG whose texts are all escaped.

spec: docs/piles-and-recurrence.md; CONTRIBUTING.md ("Lesson text is untrusted").
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
    html = render(hostile)
    assert html.startswith('<svg class="recurrence-timeline rt-wide"')
    assert html.count('<svg class="recurrence-timeline rt-narrow"') == 1
    # the marker in each drawing, and its legend entry
    assert html.count('<g class="m-recurred">') == 3
    assert html.count('<g class="m-on_topic">') == 3  # the unseen session's correction, and the legend
    legend = html[html.index('<ul class="timeline-legend"') :]
    labels = re.findall(r"</svg>([^<]+)</li>", legend)
    assert labels == [
        "shown current text",
        "shown an earlier text only",
        "recurred",
        "during the turn",
        "unknown timing",
        "earlier version shown",
        "ambiguous",
        "on its topic, not shown it",
    ]


def test_every_text_of_both_drawings_is_12_units(hostile):
    """At 390 px the narrow drawing's 360 units are about 360 px: 12-unit texts are about 12 px (the
    wide drawing's 11-unit texts, scrolled in a box, were 9 px)."""
    html = render(hostile)
    sizes = set(re.findall(r'<text [^>]*font-size="([\d.]+)"', html))
    assert sizes == {"12"}
    assert re.findall(r'class="recurrence-timeline rt-(\w+)"[^>]*viewBox="0 0 (\d+) \d+"', html) == [
        ("wide", "880"),
        ("narrow", "360"),
    ]


def test_close_verdicts_put_their_labels_on_two_rows(db, ingest):
    """Two verdicts a day apart sit a few units apart: the second label goes a row lower, not on top."""
    report = ingest(
        [
            host(name=HOST),
            lesson(host=HOST, **ENTITY, text=TEXT, created_at=OCT_1),
            {
                "type": "verdict",
                "host": HOST,
                "lesson": hash_of(TEXT),
                "verdict": "held",
                "measured_at": clock("10:00"),
            },
            {
                "type": "verdict",
                "host": HOST,
                "lesson": hash_of(TEXT),
                "verdict": "regressed",
                "measured_at": clock("12:00"),
            },
        ]
    )
    assert report.ok, report.error_lines()
    html = render(lesson_recurrence(lesson=Lesson.objects.select_related("host").get(hash=hash_of(TEXT))))
    narrow = html[html.index("rt-narrow") : html.index("timeline-legend")]
    rows = re.findall(
        r'<g class="m-verdict"><title>[^<]*</title><circle [^>]*/><text x="[\d.]+" y="(\d+)\.0"', narrow
    )
    assert rows == ["184", "198"]  # the verdicts lane at 164, labels 20 and 34 below it


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
