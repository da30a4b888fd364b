"""A consolidation written by a reviewer: its prefilled text, its limits and the anchors it must waive.

Pure functions, no ORM. A reviewer may write one consolidating lesson for any pile (issue 22, Build 4):
the editor starts with one line per fact (the keeper's text of each fact that is not an umbrella), the
text is normalized as every lesson text is (interchange.md, "Text normalization and hashes": the lines
become one line, joined by spaces) and must be 1..1000 characters long, or shorter when the engine the
members came from delivers less (altimate: 140). Every full anchor (recurrence.md, "Tokens") of a
superseded member that the text drops must be waived with a reason, so nothing a member anchored leaves
the prompt unnoticed. spec: docs/reviewing.md, "Writing a consolidation".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lessons.core.coverage import MemberCoverage
from lessons.core.interchange import MAX_TEXT
from lessons.core.text import normalize, sha256_hex

WRITTEN_ID_PREFIX = "written-"
USER_LABEL = "user:{username}"
# What each engine delivers at most (characters of the normalized text); a plain interchange host takes
# what the interchange takes. altimate's curator refuses longer new lessons (review.apply.altimate_store).
ENGINE_TEXT_MAX = {"altimate": 140, "interchange": MAX_TEXT}

TEXT_EMPTY = "Write the consolidation: its text is empty."
TEXT_TOO_LONG = "The text is {n} characters long once its lines are joined; {engine} takes at most {max}."
TEXT_HAS_NUL = "The text contains a NUL character; remove it."
NO_MEMBERS = "Choose at least one live member for the consolidation to supersede."
WAIVER_MISSING = "The text drops the anchor `{anchor}`: put it back, or waive it with a reason."
WAIVER_TOO_LONG = "The reason for waiving `{anchor}` is {n} characters long; at most {max} are allowed."
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


def dropped_anchors(coverage: Sequence[MemberCoverage]) -> list[str]:
    """Every full anchor some member has and the text drops: sorted, unique."""
    return sorted({anchor for member in coverage for anchor in member.dropped_anchors})


def check_waivers(dropped: Sequence[str], waivers: Mapping[str, str]) -> tuple[dict[str, str], list[str]]:
    """``(waivers kept, errors)``: each dropped anchor needs a reason (1..500 characters after trimming);
    a waiver of an anchor the text keeps (or no member has) is dropped, not an error. The kept waivers
    are ``{anchor: reason}`` in anchor order."""
    kept: dict[str, str] = {}
    errors = []
    for anchor in sorted(dropped):
        reason = (waivers.get(anchor) or "").strip()
        if not reason:
            errors.append(WAIVER_MISSING.format(anchor=anchor))
        elif len(reason) > WAIVER_MAX:
            errors.append(WAIVER_TOO_LONG.format(anchor=anchor, n=len(reason), max=WAIVER_MAX))
        else:
            kept[anchor] = reason
    return kept, errors


def written_draft_id(
    *, namespace: str, subject: str, text: str, supersedes: Sequence[str], author: str, created_at_ms: int
) -> str:
    """The id of a reviewer-written draft: ``written-`` + 16 hex of sha256 over the entity, the text, the
    superseded hashes (sorted), the author and the creation time (ms), joined by U+001F."""
    parts = [namespace, subject, normalize(text), " ".join(sorted(supersedes)), author, str(created_at_ms)]
    return WRITTEN_ID_PREFIX + sha256_hex("\u001f".join(parts))[:16]
