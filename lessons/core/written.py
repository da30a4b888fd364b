"""A consolidation written by a reviewer: its prefilled text, its limits and the anchors it must waive.

Pure functions, no ORM. A reviewer may write one consolidating lesson for any pile (issue 22, Build 4):
the editor starts with one line per fact (the keeper's text of each fact that is not an umbrella), the
text is normalized as every lesson text is (docs/interchange.md, "Text normalization and hashes": the lines
become one line, joined by spaces) and must be 1..1000 characters long, or shorter when the engine the
members came from delivers less (altimate: 140). Every anchor of a superseded member that the text drops
must be waived with a reason, so nothing a member anchored leaves the prompt unnoticed: its backticked
full anchors (docs/piles-and-recurrence.md, "Which lesson a correction is about"; dropped when the text's runs
lack them, as the coverage matrix
says) and the names it anchors without backticks (``lessons.core.fact_signals``: Title Case field names,
quoted labels, HTTP headers, config keys; dropped when the text's words lack the phrase).
spec: docs/reviewing.md, "Writing a consolidation".
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lessons.core.fact_signals import Phrase, profile
from lessons.core.interchange import MAX_TEXT
from lessons.core.text import normalize, sha256_hex
from lessons.core.tokens import anchors, runs

WRITTEN_ID_PREFIX = "written-"
USER_LABEL = "user:{username}"
# What each engine delivers at most (characters of the normalized text); a plain interchange host takes
# what the interchange takes. altimate's curator refuses longer new lessons (review.apply.altimate_store).
ENGINE_TEXT_MAX = {"altimate": 140, "interchange": MAX_TEXT}

TEXT_EMPTY = "Write the consolidation: its text is empty."
TEXT_TOO_LONG = "The text is {n} characters long once its lines are joined; {engine} takes at most {max}."
TEXT_HAS_NUL = "The text contains a NUL character; remove it."
NO_MEMBERS = "Choose at least one live member for the consolidation to supersede."
WAIVER_MISSING = "The text drops the anchor {anchor}: put it back, or waive it with a reason."
WAIVER_TOO_LONG = "The reason for waiving {anchor} is {n} characters long; at most {max} are allowed."
WAIVER_MAX = 500


@dataclass(frozen=True)
class FactLine:
    """One fact of the pile as the editor's prefill uses it: the keeper's hash and text; ``umbrella``
    when it is a lesson that states several of the pile's facts (left out: its facts have lines)."""

    keep: str
    text: str
    umbrella: bool = False


def prefill(facts: Sequence[FactLine]) -> str:
    """The editor's first text: one line per fact that is not an umbrella, in the facts' order (their
    oldest member first), each the keeper's text. ``""`` for no fact."""
    return "\n".join(f.text for f in facts if not f.umbrella)


def text_limit(engine: str) -> int:
    """The most characters a consolidation for a host of ``engine`` may have (``ENGINE_TEXT_MAX``)."""
    return ENGINE_TEXT_MAX.get(engine, MAX_TEXT)


def check_text(text: str, *, engine: str) -> tuple[str, list[str]]:
    """``(normalized text, errors)``: the text as it would be stored, and what is wrong with it (empty,
    a NUL, longer than ``text_limit(engine)``)."""
    if "\x00" in text:
        return "", [TEXT_HAS_NUL]
    normalized = normalize(text)
    if not normalized:
        return "", [TEXT_EMPTY]
    limit = text_limit(engine)
    if len(normalized) > limit:
        return normalized, [TEXT_TOO_LONG.format(n=len(normalized), engine=engine, max=limit)]
    return normalized, []


_BACKTICKED = re.compile(r"`([^`]*)`")
_KEY_GAPS = re.compile(r"[^a-z0-9_]+")


@dataclass(frozen=True)
class Anchor:
    """An anchor of a member as the editor asks for its waiver: ``label`` as the member spells it (a
    backticked run, or a name such as ``Gross Amount``), ``backticked`` which kind it is, and ``key``
    (``[a-z0-9_-]``, the form field ``waive-<key>``: the run itself for a backticked anchor)."""

    label: str
    backticked: bool

    @property
    def key(self) -> str:
        return self.label if self.backticked else _KEY_GAPS.sub("-", self.label.lower()).strip("-")

    @property
    def shown(self) -> str:
        """How messages name it: ```to_utc``` or ``"Gross Amount"``."""
        return f"`{self.label}`" if self.backticked else f'"{self.label}"'


def _contains(sequence: Phrase, part: Phrase) -> bool:
    n = len(part)
    return any(sequence[i : i + n] == part for i in range(len(sequence) - n + 1))


def _named(text: str) -> dict[Phrase, str]:
    """The names ``text`` anchors without backticks, ``{phrase: first spelling}``: those of
    ``fact_signals.profile`` not written inside backticks, and not containing another of them (the
    shorter one names it: "Write Gross Amount" is "Gross Amount")."""
    spans = " ".join(_BACKTICKED.findall(text))
    found = {p: spelled for p, spelled in profile(text).spellings if spelled not in spans}
    return {
        p: spelled
        for p, spelled in found.items()
        if not any(other != p and _contains(p, other) for other in found)
    }


def dropped_anchors(
    draft_text: str, members: Sequence[tuple[str, str]]
) -> list[tuple[Anchor, tuple[str, ...]]]:
    """Every anchor of the ``members`` (``(hash, text)``, in order) that ``draft_text`` drops, with the
    hashes of the members that have it: backticked anchors first, then named ones, each by label.

    A backticked full anchor is kept when it is among the text's runs (``lessons.core.coverage``); a
    named anchor when its words stand together in the text's words (``fact_signals.profile``)."""
    present = frozenset(runs(draft_text))
    sequence = profile(draft_text).sequence
    holders: dict[Anchor, list[str]] = {}
    for member_hash, text in members:
        for run in sorted(anchors(text)[0] - present):
            holders.setdefault(Anchor(run, True), []).append(member_hash)
        for p, spelled in sorted(_named(text).items()):
            if not _contains(sequence, p):
                holders.setdefault(Anchor(spelled, False), []).append(member_hash)
    # One field per key: the first spelling of a name stands for the others ("Gross amount").
    by_key: dict[str, tuple[Anchor, list[str]]] = {}
    for anchor, hashes in holders.items():
        if anchor.key in by_key:
            by_key[anchor.key][1].extend(h for h in hashes if h not in by_key[anchor.key][1])
        else:
            by_key[anchor.key] = (anchor, hashes)
    ordered = sorted(by_key.values(), key=lambda item: (not item[0].backticked, item[0].key))
    return [(anchor, tuple(hashes)) for anchor, hashes in ordered]


def check_waivers(dropped: Sequence[Anchor], waivers: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """``(waivers kept, errors)``: each dropped anchor needs a reason (``waivers[anchor.key]``, 1..500
    characters after trimming); a waiver of an anchor the text keeps (or no member has) is dropped, not
    an error. The kept waivers are ``{anchor.shown: reason}`` in ``dropped`` order."""
    kept: dict[str, str] = {}
    errors = []
    for anchor in dropped:
        reason = (waivers.get(anchor.key) or "").strip()
        if not reason:
            errors.append(WAIVER_MISSING.format(anchor=anchor.shown))
        elif len(reason) > WAIVER_MAX:
            errors.append(WAIVER_TOO_LONG.format(anchor=anchor.shown, n=len(reason), max=WAIVER_MAX))
        else:
            kept[anchor.shown] = reason
    return kept, errors


def written_draft_id(
    *, namespace: str, subject: str, text: str, supersedes: Sequence[str], author: str, created_at_ms: int
) -> str:
    """The id of a reviewer-written draft: ``written-`` + 16 hex of sha256 over the entity, the text, the
    superseded hashes (sorted), the author and the creation time (ms), joined by U+001F."""
    parts = [namespace, subject, normalize(text), " ".join(sorted(supersedes)), author, str(created_at_ms)]
    return WRITTEN_ID_PREFIX + sha256_hex("\u001f".join(parts))[:16]
