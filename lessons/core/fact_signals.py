"""What the facts grouping reads of one lesson text: its words, the anchors it names, and the evidence
that can set two lessons apart (negated instructions, quantities, numbered names).

Pure functions over strings, no ORM. ``profile(text)`` is computed once per text (cached). Words are
folded to lower case and lightly stemmed (``stem``), identifiers split at ``_``, ``-``, ``.``, ``/`` and
camelCase humps, so that ``monthly_rent``, "Monthly Rent" and "monthly rent" are the same words.
docs: docs/piles-and-recurrence.md ("Facts: which members state the same fact").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from lessons.core.tokens import STOP_WORDS

Phrase = tuple[str, ...]  # an anchor: its stemmed, lower-case words

# A word of a text: letters and digits (camelCase humps split later), or a number with its decimals.
_WORD = re.compile(r"\d+(?:[.,]\d+)*|[A-Za-z][A-Za-z0-9]*")
_HUMP = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# Where a clause ends: the negation of an instruction does not reach past it.
_CLAUSE = re.compile(r"[,;:.!?()\[\]{}—–]+\s|[;:!?()\[\]{}—–]|\.\s*$")
_BACKTICK = re.compile(r"`([^`]+)`")
_QUOTED = re.compile(r"(?:(?<=[\s(\[])|^)[\"“']([^\"”'\n]{1,40})[\"”'](?=[\s,.;:)\]!?]|$)")
_HEADER = re.compile(r"\b[A-Z][a-z0-9]+(?:-[A-Z][A-Za-z0-9]*)+\b")
# Config keys and identifiers written without backticks: snake_case, dotted.keys, camelCase, /paths.
_IDENTIFIER = re.compile(
    r"(?<![\w/])(?:[A-Za-z][A-Za-z0-9]*(?:[_.][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*|/[A-Za-z0-9_{}.-]+(?:/[A-Za-z0-9_{}.-]+)+)"
)
_CAPITAL = re.compile(r"[A-Z][a-z0-9]+|[A-Z]{2,}[0-9]*s?|[A-Z][0-9]+")
_ACRONYM = re.compile(r"[A-Z]{2,}[0-9]*s?|[A-Z][0-9]+")
_SENTENCE_END = re.compile(r"(?:^|[.!?:;(\[\"“'—–-]\s*)$")
_NAME = re.compile(r"\b([A-Za-z]{1,3})([0-9]{1,3})\b")
# A numbered name in two words: a capitalized word and a number of one or two digits ("Section 2", "Box 1").
_NAME_WORD = re.compile(r"\b([A-Z][a-z]+) ([0-9]{1,2})\b(?![.,:/-][0-9])")
# A setting written in backticks: a key, ":" or "=", and one value ("timeout-minutes: 20",
# "materialized='view'").
_SETTING = re.compile(r"^\s*([A-Za-z_][\w.\-]*)\s*[:=]\s*[\"']?([\w.\-/]+)[\"']?\s*$")
# A quantity: a number and its unit, or a number a comparison bounds.
_QUANTITY = re.compile(
    r"(?:(at least|at most|no more than|no less than|more than|less than|up to|within|over|under|"
    r"minimum|maximum|max|min|>=|<=|≥|≤|>|<)\s*)?"
    r"(\d+(?:\.\d+)?)\s*(%|percent\b|ms\b|milliseconds?\b|s\b|secs?\b|seconds?\b|mins?\b|minutes?\b|"
    r"h\b|hrs?\b|hours?\b|business hours?\b|days?\b|business days?\b|weeks?\b|months?\b|years?\b|"
    r"times\b|retries\b|attempts\b|characters\b|chars\b|rows\b|items\b)?",
    re.IGNORECASE,
)
# A time written in words: a number or an ordinal from one to ten, then the unit ("two months", "the
# third working day", "by the end of the first day").
_NUMBER_WORDS = {
    word: k % 10 + 1
    for k, word in enumerate(
        "one two three four five six seven eight nine ten "
        "first second third fourth fifth sixth seventh eighth ninth tenth".split()
    )
}
_WORDED_TIME = re.compile(
    r"\b(" + "|".join(_NUMBER_WORDS) + r")\s+(?:(?:working|business|calendar)\s+)?"
    r"(minutes?|hours?|days?|weeks?|months?|years?)\b",
    re.IGNORECASE,
)
_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "mo": 2592000, "y": 31536000}
_UNITS = {
    "%": ("percent", 1),
    "percent": ("percent", 1),
    "ms": ("time", _SECONDS["ms"]),
    "millisecond": ("time", _SECONDS["ms"]),
    "s": ("time", 1),
    "sec": ("time", 1),
    "second": ("time", 1),
    "min": ("time", _SECONDS["m"]),
    "minute": ("time", _SECONDS["m"]),
    "h": ("time", _SECONDS["h"]),
    "hr": ("time", _SECONDS["h"]),
    "hour": ("time", _SECONDS["h"]),
    "business hour": ("time", _SECONDS["h"]),
    "day": ("time", _SECONDS["d"]),
    "business day": ("time", _SECONDS["d"]),
    "week": ("time", _SECONDS["w"]),
    "month": ("time", _SECONDS["mo"]),
    "year": ("time", _SECONDS["y"]),
    "time": ("count", 1),
    "retrie": ("count", 1),
    "attempt": ("count", 1),
    "character": ("length", 1),
    "char": ("length", 1),
    "row": ("count", 1),
    "item": ("count", 1),
}
# Words that negate the instruction word right after them (within NEGATION_REACH words).
NEGATORS = frozenset("never not no don dont doesn didn isn aren won cannot nothing none avoid stop".split())
# Words that negate their whole clause ("Deploying with the latest tag is forbidden").
CLAUSE_NEGATORS = frozenset("forbidden prohibited banned disallowed".split())
NEGATION_REACH = 3
# Not words of an instruction: the recurrence stop words, short function words, and contraction tails.
FUNCTION_WORDS = STOP_WORDS | frozenset(
    "a an as at be by do go if in is it of on or so to up we us me my i t s e g eg ie etc via per".split()
)
MIN_WORD = 3  # a content word has at least this many characters


def stem(word: str) -> str:
    """A light stem of a lower-case word: the plural, ``-ing``, ``-ed`` and a final ``e`` taken off, so
    that "computes", "computed", "computing" and "compute" are one word."""
    if len(word) > 5 and word.endswith("ing"):
        word = word[:-3]
    elif len(word) > 4 and word.endswith("ied"):
        word = word[:-3] + "y"
    elif len(word) > 4 and word.endswith("ed"):
        word = word[:-2]
    elif len(word) > 4 and word.endswith("ies"):
        word = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    if len(word) > 3 and word.endswith("e"):
        word = word[:-1]
    return word


def words_of(text: str) -> list[str]:
    """The stemmed lower-case words of ``text`` in order, identifiers split at their humps."""
    out: list[str] = []
    for match in _WORD.finditer(text):
        token = match.group()
        if token[0].isdigit():
            out.append(token.replace(",", ""))
            continue
        for hump in _HUMP.findall(token) or [token]:
            out.append(stem(hump.lower()))
    return out


def phrase(text: str) -> Phrase:
    """An anchor's words (``words_of``) without function words at its ends; ``()`` when none is left."""
    found = words_of(text)
    while found and found[0] in FUNCTION_WORDS:
        found.pop(0)
    while found and found[-1] in FUNCTION_WORDS:
        found.pop()
    return tuple(found)


@dataclass(frozen=True)
class Profile:
    """One text as the grouping reads it.

        ``sequence``: every word (``words_of``), in order, for finding anchors in it; ``words``: the content
        words (3+ characters, no function word, not a number); ``anchors``: the phrases it names as anchors
        (backticked names, Title Case field names, quoted labels, HTTP headers, config keys, acronyms), each
        with its first spelling in ``spellings``; ``negated``: content words an instruction negates ("never
        compute"); ``commanded``: the content words an instruction starts with, not negated ("compute it as
    ...", "must compute"); ``quantities``: ``(dimension, value)`` pairs, times in seconds ("15 minutes" is
        ``("time", 900.0)``); ``names``: numbered names as ``(letters, number)`` ("P1" is ``("p", 1)``,
        "Section 2" is ``("section", 2)``); ``settings``: backticked settings as ``(key, value)``, folded to
        lower case ("`timeout-minutes: 20`" is ``("timeout-minutes", "20")``, "`materialized='view'`" is
        ``("materialized", "view")``); ``objects``: the anchors that name an object (a field, key, header or
        label: every anchor but a lone capitalized word or acronym, "Invoice Date" and `amount` but not
        "EUR" or "Mar"), with a run's name without its first word too ("Write Gross Amount" names "Gross
        Amount").
    """

    sequence: tuple[str, ...]
    words: frozenset[str]
    forms: tuple[tuple[str, str], ...]
    anchors: frozenset[Phrase]
    spellings: tuple[tuple[Phrase, str], ...]
    negated: frozenset[str]
    commanded: frozenset[str]
    quantities: frozenset[tuple[str, float]]
    names: frozenset[tuple[str, int]]
    settings: frozenset[tuple[str, str]]
    objects: frozenset[Phrase] = frozenset()


@lru_cache(maxsize=16384)
def profile(text: str) -> Profile:
    """The ``Profile`` of one text (cached: a pile's texts are profiled once per process)."""
    sequence = words_of(text)
    words = frozenset(
        w for w in sequence if len(w) >= MIN_WORD and w not in FUNCTION_WORDS and not w[0].isdigit()
    )
    forms: dict[str, str] = {}
    for match in _WORD.finditer(text):
        for hump in _HUMP.findall(match.group()) or [match.group()]:
            forms.setdefault(stem(hump.lower()), hump.lower())
    spelled: dict[Phrase, str] = {}
    for found, spelling in _anchor_candidates(text):
        if found and any(w not in FUNCTION_WORDS for w in found) and (len(found) > 1 or len(found[0]) >= 2):
            spelled.setdefault(found, spelling)
    objects = {a for a, spelling in spelled.items() if not _CAPITAL.fullmatch(spelling)}
    return Profile(
        sequence=tuple(sequence),
        words=words,
        forms=tuple(sorted((w, forms.get(w, w)) for w in words)),
        anchors=frozenset(spelled),
        spellings=tuple(sorted(spelled.items())),
        negated=_negated(text),
        commanded=_commanded(text),
        quantities=_quantities(text),
        names=frozenset(
            (letters.lower(), int(number))
            for letters, number in (*_NAME.findall(text), *_NAME_WORD.findall(text))
        ),
        settings=frozenset(
            (key.lower(), value.lower())
            for span in _BACKTICK.findall(text)
            for key, value in _SETTING.findall(span)
        ),
        objects=frozenset(objects | {a[1:] for a in objects if len(a) > 1}),
    )


def _anchor_candidates(text: str):
    """``(phrase, spelling)`` of every anchor ``text`` names explicitly (see ``Profile``)."""
    for span in _BACKTICK.findall(text):
        for ident in re.findall(r"[A-Za-z_][A-Za-z0-9_.\-]*[A-Za-z0-9]|[A-Za-z]{2,}", span):
            yield phrase(ident), ident
    for quoted in _QUOTED.findall(text):
        if len(quoted.split()) <= 5:
            yield phrase(quoted), quoted
    for header in _HEADER.findall(text):
        yield phrase(header), header
    plain = _BACKTICK.sub(" ", text)
    for ident in _IDENTIFIER.findall(plain):
        yield phrase(ident), ident
    yield from _title_case(plain)


def _title_case(text: str):
    """Runs of capitalized words ("Contract Number", "Flight From"), and single capitalized words or
    acronyms that do not start a sentence ("Fill Advertiser with", "VAT"). A run that starts a sentence
    is also given without its first word ("Write Gross Amount" names "Gross Amount")."""
    run: list[str] = []
    starts = False
    for match in re.finditer(r"\S+", text):
        core = _TOKEN.match(match.group())
        word = core.group(2) if core else ""
        if core and not core.group(1) and _CAPITAL.fullmatch(word):
            if not run:
                starts = _SENTENCE_END.search(text[: match.start()]) is not None
            run.append(word)
            if not core.group(3):
                continue
        elif core and core.group(1) and _CAPITAL.fullmatch(word):  # an opening quote or bracket
            yield from _runs(run, starts)
            run, starts = [word], False
            if not core.group(3):
                continue
        yield from _runs(run, starts)
        run = []
    yield from _runs(run, starts)


_TOKEN = re.compile(r"([\"“'(\[]*)([A-Za-z0-9]+)([\"”'),.;:!?\]]*)$")


def _runs(run: list[str], starts: bool):
    if len(run) >= 2:
        yield phrase(" ".join(run)), " ".join(run)
        if starts and len(run) >= 3:
            yield phrase(" ".join(run[1:])), " ".join(run[1:])
        if starts and len(run) == 2 and _ACRONYM.fullmatch(run[1]):
            yield phrase(run[1]), run[1]
    elif run and (not starts or _ACRONYM.fullmatch(run[0])):
        yield phrase(run[0]), run[0]


def _clauses(text: str) -> list[str]:
    """``text`` cut at clause punctuation; the punctuation inside a backticked name cuts nothing."""
    plain = _BACKTICK.sub(lambda m: " " + re.sub(r"[^\w\s]", " ", m.group(1)) + " ", text)
    return _CLAUSE.split(plain)


def _negated(text: str) -> frozenset[str]:
    """Content words an instruction of ``text`` negates: the first content word within
    ``NEGATION_REACH`` words after a negator, and every content word of a clause that has a clause
    negator."""
    out: set[str] = set()
    for clause in _clauses(text):
        found = words_of(clause)
        if CLAUSE_NEGATORS & set(found):
            out |= {
                w
                for w in found
                if len(w) >= MIN_WORD and w not in FUNCTION_WORDS and w not in CLAUSE_NEGATORS
            }
            continue
        for i, word in enumerate(found):
            if word in NEGATORS:
                for after in found[i + 1 : i + 1 + NEGATION_REACH]:
                    if len(after) >= MIN_WORD and after not in FUNCTION_WORDS and after not in NEGATORS:
                        if not after[0].isdigit():
                            out.add(after)
                        break
    return frozenset(out)


MODALS = frozenset("must should always shall need needs".split())
# A clause that starts with one of these is a condition, not an instruction.
CONDITIONS = frozenset("if when unless whenever while once before after until".split())
SUBJECT_REACH = 3  # a modal or negator this many words after a clause's first word makes it the subject


def _commanded(text: str) -> frozenset[str]:
    """The first content word of each clause of ``text`` (not a condition: "if ..."), and the first after
    a modal ("must"), unless a negator comes before it in its clause."""
    out: set[str] = set()
    for clause in _clauses(text):
        found = words_of(clause)
        if (found and found[0] in CONDITIONS) or CLAUSE_NEGATORS & set(found):
            continue
        first = True
        for i, word in enumerate(found):
            if word in NEGATORS or word in CLAUSE_NEGATORS:
                break
            if len(word) >= MIN_WORD and word not in FUNCTION_WORDS and not word[0].isdigit():
                # A first word a modal or a negator follows is the clause's subject ("Tier 1 should not
                # answer them", "marts must not divide"), not the instruction.
                subject = first and not (MODALS | NEGATORS).isdisjoint(found[i + 1 : i + 1 + SUBJECT_REACH])
                if (
                    (first and not subject)
                    or (i and found[i - 1] in MODALS)
                    or (i > 1 and found[i - 2] in MODALS)
                ):
                    out.add(word)
                first = False
    return frozenset(out)


def _quantities(text: str) -> frozenset[tuple[str, float]]:
    """The ``(dimension, value)`` quantities of ``text``: numbers with a unit (times in seconds), times
    written in words ("the third working day" is ``("time", 259200.0)``), and bare numbers a comparison
    bounds (dimension "bound")."""
    out: set[tuple[str, float]] = set()
    for match in _QUANTITY.finditer(text):
        bound, number, unit = match.groups()
        before = text[max(0, match.start(2) - 1) : match.start(2)]
        if before and (before.isalnum() or before in "_-/.$€£"):
            continue  # part of a name (P1, v1, sha256) or a price ($18.50)
        if unit:
            key = unit.lower().rstrip("s") if unit.lower() not in ("s", "ms", "%") else unit.lower()
            key = {"sec": "sec", "min": "min", "hr": "hr"}.get(key, key)
            dimension, scale = _UNITS.get(key, _UNITS.get(key.rstrip("s"), ("count", 1)))
            out.add((dimension, round(float(number) * scale, 6)))
        elif bound:
            out.add(("bound", float(number)))
    for match in _WORDED_TIME.finditer(text):
        number, unit = _NUMBER_WORDS[match.group(1).lower()], match.group(2).lower().rstrip("s")
        dimension, scale = _UNITS[unit]
        out.add((dimension, round(float(number) * scale, 6)))
    return frozenset(out)
