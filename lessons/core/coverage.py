"""What a consolidation draft keeps and drops of the lessons it would supersede.

Pure functions, no ORM. A member's full anchors and content tokens (docs/piles-and-recurrence.md, "Which
lesson a correction is about") are
"kept" when they are among the runs of the draft's text (anywhere in it, backticked or not) and
"dropped" otherwise. Approving a draft that drops a full anchor of a member whose latest verdict is
``held`` needs an explicit confirmation: that anchor is what recurrence matches corrections on, and
the Verify gate said the lesson worked. docs/decisions.md, "The actions" (``approve_consolidation``);
docs/piles-and-recurrence.md, "Which lesson a correction is about".
"""

from __future__ import annotations

from dataclasses import dataclass

from lessons.core.tokens import anchors, content_tokens, runs
from lessons.core.verdicts import HELD


@dataclass(frozen=True)
class MemberCoverage:
    """One member's coverage by the draft text; every tuple is sorted ascending."""

    hash: str
    verdict: str | None
    kept_anchors: tuple[str, ...]
    dropped_anchors: tuple[str, ...]
    kept_tokens: tuple[str, ...]
    dropped_tokens: tuple[str, ...]

    @property
    def held(self) -> bool:
        return self.verdict == HELD


def draft_coverage(*, draft_text: str, members: list[tuple[str, str, str | None]]) -> list[MemberCoverage]:
    """Coverage of each member ``(hash, text, latest verdict or None)`` by ``draft_text``, in input order.

    Full anchors only (affix anchors never match on their own, docs/piles-and-recurrence.md, "Recurrence");
    content tokens as
    ``lessons.core.tokens.content_tokens``.
    """
    present = frozenset(runs(draft_text))
    result = []
    for member_hash, text, verdict in members:
        full, _affix = anchors(text)
        tokens = content_tokens(text)
        result.append(
            MemberCoverage(
                hash=member_hash,
                verdict=verdict,
                kept_anchors=tuple(sorted(full & present)),
                dropped_anchors=tuple(sorted(full - present)),
                kept_tokens=tuple(sorted(tokens & present)),
                dropped_tokens=tuple(sorted(tokens - present)),
            )
        )
    return result


def requires_confirmation(coverage: list[MemberCoverage]) -> list[str]:
    """The full anchors the draft drops from members whose latest verdict is ``held``: sorted, unique."""
    return sorted({anchor for member in coverage if member.held for anchor in member.dropped_anchors})
