"""Token rules of recurrence: which lesson text a correction is about.

Pure functions over strings, no ORM. docs/piles-and-recurrence.md, "Which lesson a correction is about".
"""

from __future__ import annotations

import re
from functools import lru_cache

_RUN = re.compile(r"[A-Za-z0-9_]+")
# Single-backtick pairs, as in the spec's `like_this`; an unpaired trailing backtick opens nothing.
_BACKTICK_SPAN = re.compile(r"`([^`]*)`")

# Copied verbatim from docs/piles-and-recurrence.md, "Which lesson a correction is about". Runs are lowercased
# before the lookup.
STOP_WORDS: frozenset[str] = frozenset(
    """
    and are but can did does doing don dont for from had has have here how its into just
    more most must never not now only other our out own please same should some such than that the their
    them then there these they this those too use used uses using very was were what when where which
    while who why will with without would you your always every each also again any all instead make
    sure yes wrong right correct okay
    """.split()
)

MIN_CONTENT_TOKEN_LENGTH = 3
# Rule (B): at least 3 shared content tokens covering at least 60% of the lesson's content tokens.
RULE_B_MIN_SHARED = 3
RULE_B_MIN_SHARE_NUMERATOR = 3
RULE_B_MIN_SHARE_DENOMINATOR = 5


def runs(text: str) -> list[str]:
    """Every maximal run of ``[A-Za-z0-9_]`` in ``text``, lowercased, in order (repeats kept).

    docs/piles-and-recurrence.md, "Which lesson a correction is about".
    """
    return [run.lower() for run in _RUN.findall(text)]


def content_tokens(text: str) -> frozenset[str]:
    """A lesson text's content tokens: runs of 3+ characters, not all digits, not starting or ending
    with ``_``, not in ``STOP_WORDS``.

    docs/piles-and-recurrence.md, "Which lesson a correction is about".
    """
    # The rule inlined (no call per run): the piles JSON tokenizes every member of every pile.
    return frozenset(
        run
        for run in map(str.lower, _RUN.findall(text))
        if len(run) >= MIN_CONTENT_TOKEN_LENGTH
        and run[0] != "_"
        and run[-1] != "_"
        and run not in STOP_WORDS
        and not run.isdigit()
    )


def _is_affix(run: str) -> bool:
    return run.startswith("_") or run.endswith("_")


_NO_ANCHORS: tuple[frozenset[str], frozenset[str]] = (frozenset(), frozenset())


def anchors(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """``(full anchors, affix anchors)``: the runs inside the backtick spans of ``text``.

    A run starting or ending with ``_`` (`` `_at` ``, `` `stg_` ``, `` `*_at` ``) is an affix anchor,
    which never matches on its own; every other run in a span is a full anchor (the stop list and the
    length rule do not apply to anchors). docs/piles-and-recurrence.md, "Which lesson a correction is about".
    """
    if "`" not in text:  # most texts have no span
        return _NO_ANCHORS
    spans = [run for span in _BACKTICK_SPAN.findall(text) for run in runs(span)]
    full = frozenset(run for run in spans if not _is_affix(run))
    affix = frozenset(run for run in spans if _is_affix(run))
    return full, affix


def correction_tokens(text: str) -> frozenset[str]:
    """A correction's tokens: the set of all ``runs(text)``. docs/piles-and-recurrence.md, "Which lesson a
    correction is about".

    An ASCII text is lowered once, whole (the same runs: lowering ASCII maps letters to letters); another
    is lowered run by run, since lowering some characters outside ASCII yields ASCII letters (``"İ"``)
    that would join runs."""
    if text.isascii():
        return frozenset(_RUN.findall(text.lower()))
    return frozenset(runs(text))


def correction_tokens_in(text: str, vocabulary: frozenset[str]) -> set[str] | frozenset[str]:
    """``correction_tokens(text) & vocabulary``, without building the set of all the text's tokens first
    (an ASCII text's runs are looked up in ``vocabulary`` as they are found): what an index over many
    corrections for a few lessons' words keeps of each (``lessons.core.outcomes.TopicIndex``)."""
    if text.isascii():
        return vocabulary.intersection(_RUN.findall(text.lower()))
    return correction_tokens(text) & vocabulary


def correction_topics(text: str) -> frozenset[str]:
    """The full anchors of a correction's own text: its candidate "unmatched topics".

    docs/piles-and-recurrence.md, "Unmatched topics".
    """
    return anchors(text)[0]


@lru_cache(maxsize=4096)
def _lesson_profile(lesson_text: str) -> tuple[frozenset[str], frozenset[str]]:
    # Lesson texts are few and matched against every correction of every session that saw them.
    return content_tokens(lesson_text), anchors(lesson_text)[0]


def tokens_match(*, content: frozenset[str], full_anchors: frozenset[str], tokens: frozenset[str]) -> bool:
    """Rules (A) and (B) over precomputed token sets (see ``text_matches``).

    docs/piles-and-recurrence.md, "Which lesson a correction is about".
    """
    shared = content & tokens
    for anchor in full_anchors & tokens:
        # (A) needs a second content token besides the anchor: an identifier alone is not a topic.
        if shared - {anchor}:
            return True
    # (B) in integers: shared / content >= 3 / 5, so exactly 60% matches.
    return (
        len(shared) >= RULE_B_MIN_SHARED
        and len(shared) * RULE_B_MIN_SHARE_DENOMINATOR >= len(content) * RULE_B_MIN_SHARE_NUMERATOR
    )


def text_matches(lesson_text: str, correction_text: str) -> bool:
    """Whether a correction is on the topic of one lesson text.

    (A) a full anchor of the lesson is among the correction's tokens and so is another of the
    lesson's content tokens; or (B) at least 3 of the lesson's content tokens are among the
    correction's tokens and they are at least 60% of its content tokens.
    docs/piles-and-recurrence.md, "Which lesson a correction is about".
    """
    content, full_anchors = _lesson_profile(lesson_text)
    return tokens_match(content=content, full_anchors=full_anchors, tokens=correction_tokens(correction_text))
