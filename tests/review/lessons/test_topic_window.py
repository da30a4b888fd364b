"""A lesson page looks for corrections on its topic among the host's ``TOPIC_WINDOW`` newest user
corrections (issue 10: at 190,000 corrections the look-up read them all, 430 ms on SQLite)."""

from __future__ import annotations

from lessons.models import Lesson
from lessons.recurrence import lesson as lesson_module
from lessons.recurrence.lesson import lesson_recurrence
from tests.builders import correction, host, lesson
from tests.lessons.recurrence.builders import ENTITY, HOST, OCT_1, clock, correction_id, hash_of

TEXT = "Convert `*_at` timestamp columns with `to_utc` in staging models."
ON_TOPIC = "No, convert the `created_at` timestamps with `to_utc`."
OFF_TOPIC = "Please write shorter commit messages."


def corrected(ingest, texts: list[str]) -> Lesson:
    """The lesson ``TEXT`` and one user correction a session of each of ``texts`` (``s0``, ``s1``, ...;
    an hour apart, oldest first); returns the lesson."""
    records = [host(name=HOST), lesson(host=HOST, **ENTITY, text=TEXT, created_at=OCT_1)]
    for i, text in enumerate(texts):
        at = clock(f"1{i}:00")
        records.append(
            correction(host=HOST, session=f"s{i}", id=correction_id(f"s{i}", at), text=text, corrected_at=at)
        )
    report = ingest(records)
    assert report.ok, report.error_lines()
    return Lesson.objects.select_related("host").get(hash=hash_of(TEXT))


def test_only_the_newest_user_corrections_are_looked_among(ingest, monkeypatch):
    # oldest first: two on topic, then three off topic, then one on topic (the newest)
    shown = corrected(ingest, [ON_TOPIC, ON_TOPIC, OFF_TOPIC, OFF_TOPIC, OFF_TOPIC, ON_TOPIC])
    assert [c.session for c in lesson_recurrence(lesson=shown).on_topic] == ["s5", "s1", "s0"]
    monkeypatch.setattr(lesson_module, "TOPIC_WINDOW", 4)  # s2..s5: one on topic
    assert [c.session for c in lesson_recurrence(lesson=shown).on_topic] == ["s5"]
    monkeypatch.setattr(lesson_module, "TOPIC_WINDOW", 5)  # s1..s5
    assert [c.session for c in lesson_recurrence(lesson=shown).on_topic] == ["s5", "s1"]


CORRECTIONS = [
    "No, convert the `created_at` timestamps with `to_utc`.",  # rule A: the anchor and another word
    "Use `to_utc`.",  # the anchor alone: no match
    "Convert timestamp columns in staging models, please.",  # rule B: 5 of the 6 content tokens
    "Convert the staging tables.",  # 2 content tokens: no match
    "convert TIMESTAMP COLUMNS",  # 3 of 6: under 60%, no match
    "Convert timestamp columns in staging.",  # 4 of 6: 67%, a match
    "to_utcx and convertible staging",  # substrings of words, not the tokens: no match
    "Write shorter commit messages.",
]


def test_the_look_up_finds_what_the_rules_find_among_every_correction(ingest):
    from lessons.core.tokens import text_matches

    shown = corrected(ingest, CORRECTIONS)
    expected = [f"s{i}" for i in reversed(range(len(CORRECTIONS))) if text_matches(TEXT, CORRECTIONS[i])]
    assert expected == ["s5", "s2", "s0"]
    assert [c.session for c in lesson_recurrence(lesson=shown).on_topic] == expected
