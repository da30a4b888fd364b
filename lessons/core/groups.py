"""Restatement groups: which live members of a pile say the same thing, without a model.

Two members restate one another when their content tokens (recurrence.md, "Tokens") have a Jaccard
index of at least 0.6, or when they share a full anchor and at least one other content token. Groups
are the connected components of that relation (union-find), so the result does not depend on the
order pairs are compared in. Pure functions over ``PileMember`` and texts, no ORM.
spec: piles.md (members, rule 5; extra JSON keys allowed), recurrence.md ("Tokens").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
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
    compared = [profiles[i] for i in distinct]
    restates = _mask_rule(compared)
    for a, candidates in enumerate(_candidates(compared)):
        for b in candidates:
            if b <= a:
                continue
            ri, rj = root(distinct[a]), root(distinct[b])
            if ri != rj and restates(a, b):
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


def _mask_rule(profiles: Sequence[tuple[frozenset[str], frozenset[str]]]) -> Callable[[int, int], bool]:
    """``_restate`` of two profiles by their indexes, on integer bit masks (one bit per word of the pile):
    ``a & b`` and ``int.bit_count`` instead of building sets for each compared pair. The same rule: the
    Jaccard index in integers, or a shared full anchor ``x`` with a shared content token other than ``x``
    (with exactly one shared token ``t``, that is a shared anchor other than ``t``)."""
    bits: dict[str, int] = {}

    def mask(words: frozenset[str]) -> int:
        value = 0
        for word in words:
            value |= 1 << bits.setdefault(word, len(bits))
        return value

    tokens = [mask(t) for t, _a in profiles]
    full = [mask(a) for _t, a in profiles]
    sizes = [len(t) for t, _a in profiles]

    def restates(i: int, j: int) -> bool:
        shared = tokens[i] & tokens[j]
        if not shared:
            return False
        n = shared.bit_count()
        if n * JACCARD_DENOMINATOR >= (sizes[i] + sizes[j] - n) * JACCARD_NUMERATOR:
            return True
        common = full[i] & full[j]
        return bool(common) and (n >= 2 or bool(common & ~shared))

    return restates


def _candidates(profiles: Sequence[tuple[frozenset[str], frozenset[str]]]) -> list[set[int]]:
    """For each member, the members that may restate it: a superset of those ``_restate`` accepts, so
    comparing only these changes no group.

    The Jaccard rule needs an overlap of at least ``ceil(3/5 * |A|)`` tokens of ``A`` (the union is at
    least ``|A|``), so with every text's tokens in one order (rarest in the pile first, then the token) two
    such texts share a token among the first ``|A| - ceil(3|A|/5) + 1`` of each: prefix filtering
    (Bayardo, Ma and Srikant, "Scaling up all pairs similarity search", 2007). Words most members share
    ("check", "when") fall outside the prefixes, so a pile of 200 members with a few common words compares
    a few thousand pairs instead of all 19,900 (issue 10: the groups took ~40 ms of the pile page at 1M).
    The anchor rule needs a shared full anchor: members sharing one are all candidates.
    """
    frequency: dict[str, int] = {}
    for tokens, _anchors in profiles:
        for token in tokens:
            frequency[token] = frequency.get(token, 0) + 1
    prefixes: list[list[str]] = []
    by_prefix: dict[str, list[int]] = {}
    by_anchor: dict[str, list[int]] = {}
    for i, (tokens, anchors_) in enumerate(profiles):
        needed = (len(tokens) * JACCARD_NUMERATOR + JACCARD_DENOMINATOR - 1) // JACCARD_DENOMINATOR
        prefix = sorted(tokens, key=lambda t: (frequency[t], t))[: len(tokens) - needed + 1]
        prefixes.append(prefix)
        for token in prefix:
            by_prefix.setdefault(token, []).append(i)
        for anchor in anchors_:
            by_anchor.setdefault(anchor, []).append(i)
    found: list[set[int]] = []
    for prefix, (_tokens, anchors_) in zip(prefixes, profiles, strict=True):
        candidates: set[int] = set()
        for token in prefix:
            candidates.update(by_prefix[token])
        for anchor in anchors_:
            candidates.update(by_anchor[anchor])
        found.append(candidates)
    return found


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
