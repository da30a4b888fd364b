"""The facts of a pile: which live members state one fact, and which state several (umbrellas).

Pure functions over ``PileMember`` and texts, no ORM. A ``Fact`` is one group of a pile: the members
that state one fact (a reviewer could keep one of them without losing an instruction), or one umbrella
lesson that states two or more of the pile's facts. Every member is in exactly one ``Fact``; facts are
ordered by their oldest member (piles.md, rule 5). A reviewer's ``Mark`` (same fact / different facts)
wins over the automatic grouping. docs: piles-and-recurrence.md ("Facts").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from lessons.core.groups import keep_choice, restatement_groups
from lessons.core.piles import PileMember, member_order_key
from lessons.core.tokens import anchors, content_tokens

# Bumped whenever the method changes: stored with the groups, a stored set of another version is stale.
FACTS_VERSION = 1
LABEL_WORDS = 3  # a label made of shared words names at most this many


@dataclass(frozen=True)
class Mark:
    """A reviewer's correction of the grouping, per host: lessons ``a`` and ``b`` (64-hex hashes) state
    one fact (``same``) or different facts (not ``same``)."""

    a: str
    b: str
    same: bool


@dataclass(frozen=True)
class Fact:
    """One group of a pile: one fact, or one umbrella lesson.

    ``name``: its oldest member's hash (a stable id); ``label``: a short label from the shared anchors or
    words; ``members``: hashes oldest first; ``keep``: the suggested keeper (held, else measured, else
    newest: ``lessons.core.groups.keep_choice``); ``umbrella``: one lesson stating several of the pile's
    facts, whose names are ``covers`` (in pile order; ``()`` otherwise); ``anchors`` and ``words``: the
    shared anchors and content words (the "why"), sorted; ``similarity``: the lowest pairwise semantic
    similarity in the group (0..1), ``None`` for a group of one; ``marked``: a reviewer's mark decided
    this group or part of it.
    """

    name: str
    label: str
    members: tuple[str, ...]
    keep: str
    umbrella: bool
    covers: tuple[str, ...]
    anchors: tuple[str, ...]
    words: tuple[str, ...]
    similarity: float | None
    marked: bool

    @property
    def others(self) -> tuple[str, ...]:
        """Every member but ``keep``, oldest first (what "keep one of this fact" selects)."""
        return tuple(h for h in self.members if h != self.keep)

    def as_dict(self) -> dict:
        """The stored (JSON) form: every field, tuples as lists."""
        return {
            "name": self.name,
            "label": self.label,
            "members": list(self.members),
            "keep": self.keep,
            "umbrella": self.umbrella,
            "covers": list(self.covers),
            "anchors": list(self.anchors),
            "words": list(self.words),
            "similarity": self.similarity,
            "marked": self.marked,
        }

    @classmethod
    def from_dict(cls, data: Mapping) -> Fact:
        """A ``Fact`` from ``as_dict``'s form (``KeyError`` when a field is missing)."""
        return cls(
            name=data["name"],
            label=data["label"],
            members=tuple(data["members"]),
            keep=data["keep"],
            umbrella=bool(data["umbrella"]),
            covers=tuple(data["covers"]),
            anchors=tuple(data["anchors"]),
            words=tuple(data["words"]),
            similarity=data["similarity"],
            marked=bool(data["marked"]),
        )


def fact_counts(facts: Sequence[Fact]) -> tuple[int, int]:
    """``(facts, restatements)`` of a pile: the groups that are not umbrellas, and the members minus
    that (the queue's "facts" and "restatements" columns)."""
    members = sum(len(f.members) for f in facts)
    distinct = sum(1 for f in facts if not f.umbrella)
    return distinct, members - distinct


def pile_facts(
    *, members: Sequence[PileMember], texts: Mapping[str, str], marks: Sequence[Mark] = ()
) -> tuple[Fact, ...]:
    """The facts of a pile's live members, ordered by their oldest member; every member in exactly one
    ``Fact``. ``texts`` maps each member's hash to its text (``KeyError`` when one is missing). ``marks``
    about members of this pile win over the automatic grouping (others are ignored)."""
    ordered = sorted(members, key=member_order_key)
    index = {m.hash: i for i, m in enumerate(ordered)}
    group_of = [0] * len(ordered)
    for g, group in enumerate(restatement_groups(members=ordered, texts=texts)):
        for h in group.members:
            group_of[index[h]] = g
    labels, marked = _apply_marks(group_of, index, marks)
    parts: dict[int, list[int]] = {}
    for i, label in enumerate(labels):
        parts.setdefault(label, []).append(i)
    return tuple(
        _fact([ordered[i] for i in part], texts, marked=bool(marked & set(part)))
        for part in sorted(parts.values())
    )


def _apply_marks(
    group_of: list[int], index: Mapping[str, int], marks: Sequence[Mark]
) -> tuple[list[int], set[int]]:
    """The groups after the marks, as one label per member, and the members a mark moved.

    A "different" mark takes the newer of its two members out of the older one's group (to a group of
    its own); then "same" marks join the two members' groups. Marks are applied in a fixed order (hash
    pair), so the result does not depend on the order they are given in."""
    labels = list(group_of)
    fresh = max(labels, default=-1) + 1
    moved: set[int] = set()
    relevant = sorted(
        (tuple(sorted((index[m.a], index[m.b]))), m.same)
        for m in marks
        if m.a in index and m.b in index and m.a != m.b
    )
    for (i, j), same in relevant:
        if not same and labels[i] == labels[j]:
            labels[j], fresh = fresh, fresh + 1
            moved |= {i, j}
    for (i, j), same in relevant:
        if same and labels[i] != labels[j]:
            old, new = max(labels[i], labels[j]), min(labels[i], labels[j])
            labels = [new if x == old else x for x in labels]
            moved |= {i, j}
    return labels, moved


def _fact(part: list[PileMember], texts: Mapping[str, str], *, marked: bool) -> Fact:
    seen_words: set[str] = set()
    shared_words: set[str] = set()
    seen_anchors: set[str] = set()
    shared_anchors: set[str] = set()
    for m in part:
        words = content_tokens(texts[m.hash])
        full = anchors(texts[m.hash])[0]
        shared_words |= seen_words & words
        seen_words |= words
        shared_anchors |= seen_anchors & full
        seen_anchors |= full
    anchor_list = tuple(sorted(shared_anchors))
    word_list = tuple(sorted(shared_words))
    if anchor_list:
        label = anchor_list[0]
    elif word_list:
        label = " ".join(word_list[:LABEL_WORDS])
    else:
        label = ""
    return Fact(
        name=part[0].hash,
        label=label,
        members=tuple(m.hash for m in part),
        keep=keep_choice(part),
        umbrella=False,
        covers=(),
        anchors=anchor_list,
        words=word_list,
        similarity=None,
        marked=marked,
    )
