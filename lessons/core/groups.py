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
    both = anchors_a & anchors_b
    return bool(both) and any(shared - {anchor} for anchor in both)


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

    Only candidate pairs are compared, each then by the full rule, so the components are those of the
    rule over every pair. With t = 3/5 and o = |A & B| for members A, B (|B| <= |A|):
    - the Jaccard rule, o >= t |A | B|, needs o >= t (|A| + |B|) / (1 + t), so o >= ceil(t |A|) (as
      |A | B| >= |A|) and o >= ceil(2t / (1 + t) |B|) = ceil(3/4 |B|) (as |A| >= |B|). With each member's
      tokens sorted rarest first (one order over the pile), the rarest shared token is then among the
      first ``|A| - ceil(t |A|) + 1`` tokens of A (A's probe) and the first ``|B| - ceil(3/4 |B|) + 1``
      of B (B's index entry): were it later, fewer than o shared tokens would follow it. Prefix
      filtering: members are taken smallest first, each probes the index of the earlier (smaller) ones;
    - the anchor rule needs a full anchor of both: every full anchor is probed and indexed.
    A pair already in one component is not compared at all (joining it would change nothing).
    """
    parent = list(range(len(profiles)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    frequency = Counter(token for tokens, _anchors in profiles for token in tokens)
    rank = {token: n for n, token in enumerate(sorted(frequency, key=lambda t: (frequency[t], t)))}
    holders: dict[str, list[int]] = {}  # an index entry (prefix token or anchor) -> the members so far
    for i in sorted(range(len(profiles)), key=lambda i: len(profiles[i][0])):
        tokens, full_anchors = profiles[i]
        rarest = sorted(tokens, key=rank.__getitem__)
        size = len(tokens)
        probe = rarest[: size - _ceil_share(size, JACCARD_NUMERATOR, JACCARD_DENOMINATOR) + 1]
        index = rarest[
            : size - _ceil_share(size, 2 * JACCARD_NUMERATOR, JACCARD_DENOMINATOR + JACCARD_NUMERATOR) + 1
        ]
        # "\0" marks an anchor apart from a content token (no run holds it).
        marked = ["\0" + anchor for anchor in full_anchors]
        earlier: set[int] = set()
        for key in (*probe, *marked):
            if key in holders:
                earlier.update(holders[key])
        for key in (*index, *marked):
            holders.setdefault(key, []).append(i)
        mine = i  # i's root: nothing joined it before its turn
        for j in earlier:
            other = root(j)
            if other != mine and _restate(profiles[i], profiles[j]):
                parent[max(mine, other)] = min(mine, other)
                mine = min(mine, other)
    return [root(i) for i in range(len(profiles))]


def _ceil_share(size: int, numerator: int, denominator: int) -> int:
    """``ceil(size * numerator / denominator)`` in integers."""
    return -(-size * numerator // denominator)


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
