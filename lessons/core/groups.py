"""Restatement groups: which live members of a pile say the same thing, without a model.

Two members restate one another when their content tokens (docs/piles-and-recurrence.md, "Which lesson a
correction is about") have a Jaccard
index of at least 0.6, or when they share a full anchor and at least one other content token. Groups
are the connected components of that relation (union-find), so the result does not depend on the
order pairs are compared in. Pure functions over ``PileMember`` and texts, no ORM.
docs/piles-and-recurrence.md, "Piles" (members, rule 5; extra JSON keys allowed), docs/piles-and-recurrence.md
("Which lesson a correction is about").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from lessons.core.piles import PileMember, member_order_key
from lessons.core.tokens import _RUN, anchors, content_tokens  # _RUN: marked words are token runs
from lessons.core.verdicts import HELD

# Jaccard >= 3/5, compared in integers so exactly 0.6 counts.
JACCARD_NUMERATOR = 3
JACCARD_DENOMINATOR = 5
# n / (|A| + |B| - n) >= 3/5 is 8n >= 3 (|A| + |B|)
_JACCARD_SUM = JACCARD_NUMERATOR + JACCARD_DENOMINATOR
# docs/interchange.md's "unmeasured" verdict says the gate did not measure it: ranked with no verdict at all.
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
    parent = list(range(len(ordered)))
    # Each text's tokens once, not once per pair: a pile of 200 members has 19,900 pairs.
    profiles = [_profile(texts[m.hash]) for m in ordered]

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    # Members with the same tokens and anchors restate one another (Jaccard 1) and any third member
    # alike, so each such set joins its oldest and only that one is compared: a pile of 1,000 members
    # differing only in numbers is one comparison, not 499,500. A text without content tokens restates
    # nothing.
    first: dict[tuple[frozenset[str], frozenset[str]], int] = {}
    distinct: list[int] = []
    for i, profile in enumerate(profiles):
        if not profile[0]:
            continue
        oldest = first.setdefault(profile, i)
        if oldest == i:
            distinct.append(i)
        else:
            parent[i] = oldest
    for a, b in _restating_pairs([profiles[i] for i in distinct]):
        ri, rj = root(distinct[a]), root(distinct[b])
        if ri != rj:
            # The smaller index (older member) stays the root, so a group's root is its oldest; the
            # components do not depend on the order the pairs are joined in.
            parent[max(ri, rj)] = min(ri, rj)

    components: dict[int, list[int]] = {}
    for i in range(len(ordered)):
        components.setdefault(root(i), []).append(i)
    return tuple(
        _group([ordered[i] for i in part], [profiles[i][0] for i in part])
        for _, part in sorted(components.items())
    )


def _restating_pairs(profiles: Sequence[tuple[frozenset[str], frozenset[str]]]) -> Iterator[tuple[int, int]]:
    """Every pair ``(a, b)``, ``a < b``, of indexes into ``profiles`` whose profiles restate one another
    (``_restate``), ``a`` ascending, then ``b``.

    Bit-parallel: one bit per member. For each member ``a``, the number of content tokens each later
    member shares with it is counted for all of them at once, in bit planes (plane ``i`` holds bit ``i``
    of every member's count): one binary addition of each of ``a``'s tokens' holders (the members that
    have the token), a few big-integer operations per token. Then the rule is applied to every member at
    once: the Jaccard index ``n / (|A| + |B| - n) >= 3/5`` is ``8n >= 3(|A| + |B|)``, a comparison of the
    counts with one threshold per size ``|B|``; the anchor rule takes the holders of each shared full
    anchor whose count is at least 2, or exactly 1 when that one shared token is not the anchor itself.
    Work per member grows with its tokens and the pile's sizes, not with how many pairs share a word
    (issue 10: the bench's 200-member pile, 46 words, had 7,700 candidate pairs, 41 restating, and its
    groups took ~7 ms of the pile page; prefix filtering cannot skip words a quarter of the pile shares).
    """
    holders: dict[str, int] = {}
    anchored: dict[str, int] = {}
    sized: dict[int, int] = {}
    for i, (tokens, full) in enumerate(profiles):
        bit = 1 << i
        for token in tokens:
            holders[token] = holders.get(token, 0) | bit
        for anchor in full:
            anchored[anchor] = anchored.get(anchor, 0) | bit
        sized[len(tokens)] = sized.get(len(tokens), 0) | bit
    sizes = sorted(sized.items())
    for a, (tokens, full) in enumerate(profiles):
        later = a + 1  # every mask shifted right by this: bit j is member a + 1 + j
        planes: list[int] = []
        for token in tokens:
            _add(planes, holders[token] >> later)
        if not planes:  # no later member shares a content token: neither rule can hold
            continue
        found = 0
        for size, members in sizes:
            among = members >> later
            if among:
                # ceil(3 (|A| + |B|) / 8): the fewest shared tokens at a Jaccard index of 3/5
                least = -(-JACCARD_NUMERATOR * (len(tokens) + size) // _JACCARD_SUM)
                found |= _at_least(planes, least, among)
        if full:
            some = _at_least(planes, 1, -1)
            two = _at_least(planes, 2, -1)
            for anchor in full:
                with_anchor = anchored[anchor] >> later
                if anchor in tokens:  # a single shared token must be another than the anchor
                    found |= with_anchor & (two | (some & ~(holders[anchor] >> later)))
                else:
                    found |= with_anchor & some
        b = a
        while found:
            step = (found & -found).bit_length()  # the lowest set bit: the next restating member
            b += step
            found >>= step
            yield a, b


def _add(planes: list[int], bits: int) -> None:
    """Add 1 to the bit-plane count of every member set in ``bits`` (ripple carry, low plane first)."""
    for i, plane in enumerate(planes):
        if not bits:
            return
        planes[i] = plane ^ bits
        bits &= plane
    if bits:
        planes.append(bits)


def _at_least(planes: list[int], least: int, among: int) -> int:
    """The members of ``among`` whose bit-plane count is at least ``least`` (``least >= 1``), as a mask;
    ``-1`` is every member. Compared from the highest plane down: above so far, or equal so far."""
    if least >> len(planes):  # more than any count the planes can hold
        return 0
    above, equal = 0, among
    for i in range(len(planes) - 1, -1, -1):
        if least >> i & 1:
            equal &= planes[i]
        else:
            above |= equal & planes[i]
            equal &= ~planes[i]
    return above | equal


def _group(part: list[PileMember], tokens: list[frozenset[str]]) -> RestatementGroup:
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
    a run (docs/piles-and-recurrence.md, "Which lesson a correction is about") whose lowercase is in ``words``
    is a piece with ``True``; the text
    between is kept as it is. Joining the pieces gives ``text`` back."""
    if not words:  # a group of one shares nothing: the text is one piece (no run is looked at)
        return ((text, False),) if text else ()
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
