"""Restatement groups: which live members of a pile say the same thing, without a model.

Two members restate one another when their content tokens (recurrence.md, "Tokens") have a Jaccard
index of at least 0.6, or when they share a full anchor and at least one other content token. Groups
are the connected components of that relation (union-find), so the result does not depend on the
order pairs are compared in. Pure functions over ``PileMember`` and texts, no ORM.
spec: piles.md (members, rule 5; extra JSON keys allowed), recurrence.md ("Tokens").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lessons.core.piles import PileMember, member_order_key
from lessons.core.tokens import _RUN, anchors, content_tokens  # _RUN: marked words are token runs

# Jaccard >= 3/5, compared in integers so exactly 0.6 counts.
JACCARD_NUMERATOR = 3
JACCARD_DENOMINATOR = 5
HELD = "held"
# interchange.md's "unmeasured" verdict says the gate did not measure it: ranked with no verdict at all.
UNMEASURED = "unmeasured"


@dataclass(frozen=True)
class RestatementGroup:
    """One group: ``name`` is its oldest member's hash; ``members`` its hashes in rule-5 order;
    ``shared`` the content tokens at least two of its members have (empty for a group of one);
    ``keep`` the member "keep one of this group" keeps (see ``keep_choice``)."""

    name: str
    members: tuple[str, ...]
    shared: frozenset[str]
    keep: str

    @property
    def others(self) -> tuple[str, ...]:
        """The members the "keep one" action selects: every member but ``keep``, in rule-5 order."""
        return tuple(h for h in self.members if h != self.keep)


def restate(*, a: str, b: str) -> bool:
    """Whether two lesson texts restate one another (the rule of this module's docstring)."""
    return _restate(_profile(a), _profile(b))


def _profile(text: str) -> tuple[frozenset[str], frozenset[str]]:
    """What ``restate`` compares of a text: its content tokens and its full anchors."""
    return frozenset(content_tokens(text)), frozenset(anchors(text)[0])


def _restate(a: tuple[frozenset[str], frozenset[str]], b: tuple[frozenset[str], frozenset[str]]) -> bool:
    (ca, anchors_a), (cb, anchors_b) = a, b
    shared = ca & cb
    if not shared:  # neither rule holds without a shared content token
        return False
    union = len(ca) + len(cb) - len(shared)
    if len(shared) * JACCARD_DENOMINATOR >= union * JACCARD_NUMERATOR:
        return True
    return any(shared - {anchor} for anchor in anchors_a & anchors_b)


def keep_choice(members: Sequence[PileMember]) -> str:
    """The hash to keep of a group: ``held`` over any other verdict over not measured (no verdict, or
    ``unmeasured``), then the newest (greatest ``created_at_ms``, then greatest hash: a total order)."""

    def rank(m: PileMember) -> tuple[int, int, str]:
        tier = 2 if m.verdict == HELD else 0 if m.verdict in (None, UNMEASURED) else 1
        return (tier, m.created_at_ms, m.hash)

    return max(members, key=rank).hash


def restatement_groups(
    *, members: Sequence[PileMember], texts: Mapping[str, str]
) -> tuple[RestatementGroup, ...]:
    """The restatement groups of a pile's live members, ordered by their oldest member (rule 5).

    ``texts`` maps each member's hash to its text (a missing text is an error: ``KeyError``). Every
    member is in exactly one group; a member that restates none is a group of one.
    """
    ordered = sorted(members, key=member_order_key)
    # Each text's tokens once, not once per pair (a pile of 200 members has 19,900 pairs), and not again
    # for the group's shared words.
    profiles = [_profile(texts[m.hash]) for m in ordered]
    components: dict[int, list[int]] = {}
    for i, root in enumerate(_component_roots(profiles)):
        components.setdefault(root, []).append(i)
    return tuple(
        _group([ordered[i] for i in part], [profiles[i][0] for i in part])
        for _, part in sorted(components.items())
    )


def _component_roots(profiles: Sequence[tuple[frozenset[str], frozenset[str]]]) -> list[int]:
    """For each profile (``_profile``, in rule-5 order), the index of the oldest member of its component
    under ``_restate`` (union-find, the smaller index kept as root, so the result does not depend on the
    order pairs are met in).

    Only candidate pairs are compared, and each is then tested by the full rule, so the components are
    those of the rule over every pair:
    - the Jaccard rule needs ``|A & B| >= 3/5 |A | B| >= need(|A|) = ceil(3/5 |A|)`` shared tokens, so with
      each member's tokens sorted rarest first (a fixed order over the pile) the first
      ``|A| - need(|A|) + 1`` tokens of A and of B share one (the rarest shared token lies in both: were
      it later, fewer than ``need`` shared tokens would follow it): prefix filtering;
    - the anchor rule needs a full anchor of both: pairs sharing an anchor.
    A pair already in one component is not compared at all (joining it would change nothing).
    """
    parent = list(range(len(profiles)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    frequency = Counter(token for tokens, _anchors in profiles for token in tokens)
    holders: dict[str, list[int]] = {}  # a prefix token or an anchor -> the members holding it
    keys: list[list[str]] = []
    for i, (tokens, full_anchors) in enumerate(profiles):
        need = -(-len(tokens) * JACCARD_NUMERATOR // JACCARD_DENOMINATOR)
        prefix = sorted(tokens, key=lambda t: (frequency[t], t))[: len(tokens) - need + 1]
        # "\0" marks an anchor apart from a content token (no run holds it).
        mine = [*prefix, *("\0" + anchor for anchor in full_anchors)]
        keys.append(mine)
        for key in mine:
            holders.setdefault(key, []).append(i)
    for i, mine in enumerate(keys):
        later: set[int] = set()
        for key in mine:
            later.update(holders[key])
        for j in later:
            if j <= i:
                continue
            ri, rj = root(i), root(j)
            if ri != rj and _restate(profiles[i], profiles[j]):
                parent[max(ri, rj)] = min(ri, rj)
    return [root(i) for i in range(len(profiles))]


def _group(part: list[PileMember], tokens: list[frozenset[str]]) -> RestatementGroup:
    """A group of ``part`` (rule-5 order) whose content tokens are ``tokens``, member for member."""
    if len(part) == 1:  # most members restate none: nothing shared, and the one member is kept
        (only,) = part
        return RestatementGroup(name=only.hash, members=(only.hash,), shared=frozenset(), keep=only.hash)
    seen: set[str] = set()
    shared: set[str] = set()
    for member_tokens in tokens:
        shared |= seen & member_tokens
        seen |= member_tokens
    return RestatementGroup(
        name=part[0].hash,
        members=tuple(m.hash for m in part),
        shared=frozenset(shared),
        keep=keep_choice(part),
    )


def group_of(groups: Sequence[RestatementGroup]) -> dict[str, str]:
    """Each member hash -> its group's name (the ``group`` key of the piles JSON)."""
    return {h: g.name for g in groups for h in g.members}


def marked_pieces(text: str, words: frozenset[str]) -> tuple[tuple[str, bool], ...]:
    """``text`` cut into ``(piece, shared)`` pieces, in order, so a page can mark the shared words:
    a run (recurrence.md, "Tokens") whose lowercase is in ``words`` is a piece with ``True``; the text
    between is kept as it is. Joining the pieces gives ``text`` back."""
    pieces: list[tuple[str, bool]] = []
    at = 0
    for match in _RUN.finditer(text):
        if match.group().lower() in words:
            if match.start() > at:
                pieces.append((text[at : match.start()], False))
            pieces.append((match.group(), True))
            at = match.end()
    if at < len(text):
        pieces.append((text[at:], False))
    return tuple(pieces)
