"""The facts of a pile: which live members state one fact, and which state several (umbrellas).

Pure functions over ``PileMember`` and texts, no ORM. A ``Fact`` is one group of a pile: the members
that state one fact (a reviewer could keep one of them without losing an instruction), or one umbrella
lesson that states two or more of the pile's facts. The facts are grouped over the entity's lessons
whatever their status (``grouped_over``) and show the live ones: every live member is in exactly one
``Fact``, and a retire or a restore changes no fact but its own. Facts are ordered by their oldest live
member (docs/piles-and-recurrence.md, "Piles", rule 5). A reviewer's ``Mark`` (same fact / different
facts) wins over the automatic grouping. docs: docs/piles-and-recurrence.md ("Facts: which members state
the same fact", "Retire and restore").
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from lessons.core.embedding import vectors
from lessons.core.fact_signals import Phrase, Profile, profile
from lessons.core.groups import _profile as _rules_profile
from lessons.core.groups import _restating_pairs, keep_choice
from lessons.core.piles import LIVE, PileMember, member_order_key

# Bumped whenever the method changes: stored with the groups, a stored set of another version is stale.
# 12: two lessons that each name an object of their own, and not each other's, score OTHER_OBJECTS lower.
# 13: an item of a listing lesson states a fact at a similarity of 0.3 with its member (was 0.45).
# 14: a quantity one lesson gives and the other lacks lowers their score by QUANTITY_ALONE.
# 15: a time written in words is a quantity ("the third working day", "two months").
# 16: today's word rules keep a pair only at a similarity of 0.4 (RULES_SIMILARITY, was 0.2).
# 17: grouped over the entity's lessons whatever their status (grouped_over), the live ones shown: a
#     retire or a restore changes no fact but the one holding that lesson.
# 18: a consolidation that states only facts whose every member it consolidated is their one rule, a fact
#     of its own (not an umbrella over facts left without a live member, "0 facts").
FACTS_VERSION = 18
# The version stored with a pile left not grouped yet (a bulk ingest's, for the background regroup).
FACTS_PENDING = 0
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

    ``name``: its oldest live member's hash (a stable id while that member is live); ``label``: a short
    label from the shared anchors or words; ``members``: the live members' hashes, oldest first;
    ``keep``: the suggested keeper (held, else measured, else newest:
    ``lessons.core.groups.keep_choice``); ``umbrella``: one lesson stating several of the pile's facts,
    whose names are ``covers`` (the facts shown, in the order they were grouped; ``()`` otherwise);
    ``anchors`` and ``words``: the shared anchors and content words (the "why"), sorted;
    ``similarity``: the lowest pairwise semantic similarity in the group (0..1), ``None`` for a group of
    one; ``marked``: a reviewer's mark decided this group or part of it.
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


RETRACTED = "retracted"
CONSOLIDATION = "consolidation"


def grouped_over(lessons: Iterable[tuple[str, str, str, Sequence[str]]]) -> set[str]:
    """The hashes of the entity's lessons its facts are grouped over, from ``(hash, status, kind,
    consolidates)`` of each of its lessons: every one, whatever its status (live, retired by a reviewer
    or its host, superseded by a newer version or by an approved consolidation), but a rolled-back
    consolidation (retracted, and one of the members it consolidates live again: as before its
    approval, the members are back and it is not).

    So a retire or a restore leaves the lessons grouped over as they were; an approved consolidation
    adds one (its members stay), and its rollback takes that one out again; an ingest adds its new
    lessons. docs/piles-and-recurrence.md, "Facts", "Retire and restore".
    """
    rows = list(lessons)
    live = {digest for digest, status, _kind, _of in rows if status == LIVE}
    return {
        digest
        for digest, status, kind, consolidates in rows
        if not (status == RETRACTED and kind == CONSOLIDATION and live.intersection(consolidates))
    }


def consolidations(lessons: Iterable[tuple[str, str, str, Sequence[str]]]) -> dict[str, frozenset[str]]:
    """The members each consolidation of the entity consolidates, ``{hash: frozenset of hashes}``, from
    ``(hash, status, kind, consolidates)`` of its lessons (``grouped_over``'s rows): ``pile_facts``'s
    ``consolidated``. docs/piles-and-recurrence.md, "Retire and restore"."""
    return {digest: frozenset(of) for digest, _status, kind, of in lessons if kind == CONSOLIDATION and of}


class Grouping(NamedTuple):
    """What ``pile_facts`` groups one entity over (``grouped``): ``members``, ``texts`` and
    ``consolidated`` as its arguments."""

    members: list[PileMember]
    texts: dict[str, str]
    consolidated: dict[str, frozenset[str]]


def grouped(lessons: Iterable[tuple[int, str, str | None, str, str, str, Sequence[str]]]) -> Grouping:
    """The arguments of ``pile_facts`` for one entity from each of its lessons as ``(created_at_ms, hash,
    verdict, text, status, kind, consolidates)``: the lessons ``grouped_over`` keeps as members, their
    texts, and what each consolidation consolidates (``consolidations``). docs/piles-and-recurrence.md,
    "Facts", "Retire and restore"."""
    rows = list(lessons)
    kinds = [(digest, status, kind, of) for _ms, digest, _v, _t, status, kind, of in rows]
    basis = grouped_over(kinds)
    members, texts = [], {}
    for ms, digest, verdict, text, status, _kind, _of in rows:
        if digest in basis:
            members.append(PileMember(hash=digest, created_at_ms=ms, status=status, verdict=verdict))
            texts[digest] = text
    return Grouping(members, texts, consolidations(kinds))


def fact_counts(facts: Sequence[Fact]) -> tuple[int, int]:
    """``(facts, restatements)`` of a pile: the groups that are not umbrellas, and their members minus
    that: the lessons "keep one of each fact" selects, umbrellas left alone (the queue's "Facts" and
    "Restatements" columns)."""
    distinct = [f for f in facts if not f.umbrella]
    return len(distinct), sum(len(f.members) for f in distinct) - len(distinct)


def pile_facts(
    *,
    members: Sequence[PileMember],
    texts: Mapping[str, str],
    marks: Sequence[Mark] = (),
    consolidated: Mapping[str, frozenset[str]] | None = None,
) -> tuple[Fact, ...]:
    """The facts of a pile's live members, ordered by their oldest live member; every live member in
    exactly one ``Fact``. ``texts`` maps each member's hash to its text (``KeyError`` when one is
    missing). ``marks`` about two members of this pile win over the automatic grouping (others are
    ignored).

    ``members`` are the entity's lessons the facts are grouped over (``grouped_over``: whatever their
    status, but a rolled-back consolidation), and only the live ones are shown: the others are grouped
    like them, then left out of their facts, and a fact left without a live member is not returned
    (an umbrella covers the facts it states that are shown). So a retire (live to retracted) or a
    restore changes no fact but the one holding that lesson, and a restore gives back the facts from
    before the retire (docs/piles-and-recurrence.md, "Facts", "Retire and restore"). With only live
    members, the facts are those of the live members.

    ``consolidated`` maps a consolidation's hash to the members it consolidates (``consolidations``). A
    consolidation that would be an umbrella over facts whose every member it consolidated (an approved
    consolidation of them: none of them live) is their one rule: a fact of its own, labelled with their
    labels, not an umbrella (it would cover no fact shown: "0 facts"). Whether it is depends on the
    grouping and the consolidation alone, not on which other lesson is live, so a retire or a restore
    still changes no fact but its own.

    The method (docs: docs/piles-and-recurrence.md, "Facts: which members state the same fact"): a score for
    every pair of members from the
    semantic similarity of their embeddings (``lessons.core.embedding``, centred on the pile's mean),
    their shared content words and their shared anchors (both weighted by how rare they are in the
    pile), lowered for two lessons about other objects and for a quantity one of them gives alone
    (``OTHER_OBJECTS``, ``QUANTITY_ALONE``), set to "different" by evidence that splits (``_splits``) and
    kept "same" for today's word rules where the model finds the two close; umbrellas taken out
    (``_umbrellas``); the rest clustered by average linkage (``_cluster``), so a group never chains
    through one bridging lesson. Deterministic: the same members and texts give
    the same facts.
    """
    ordered = sorted(members, key=member_order_key)
    if not any(m.status == LIVE for m in ordered):
        return ()
    index = {m.hash: i for i, m in enumerate(ordered)}
    pile = _Pile([texts[m.hash] for m in ordered])
    scores = pile.scores.copy()
    marked: set[int] = set()
    same: list[tuple[int, int]] = []
    for mark in sorted(marks, key=lambda m: (m.a, m.b)):
        i, j = index.get(mark.a), index.get(mark.b)
        if i is None or j is None or i == j:
            continue
        if mark.same:
            same.append((min(i, j), max(i, j)))
        else:
            scores[i, j] = scores[j, i] = CANNOT
        marked |= {i, j}
    signature = [("marked", i) if i in marked else sig for i, sig in enumerate(pile.signature)]
    umbrellas, clusters = _umbrellas(pile, scores, marked, signature)
    base = scores
    while umbrellas:
        scores, clusters = _without(pile, base, umbrellas, signature)
        # An umbrella whose facts the final clusters no longer show as two or more is a member like the
        # others ("If there is no Due Date, compute it from the Invoice Date" names two fields, one fact).
        released = {u for u in umbrellas if len(_states(pile, scores, u, clusters)) < 2}
        if not released:
            break
        umbrellas = umbrellas - released
        if not umbrellas:
            scores, clusters = base, _cluster(base, list(range(len(ordered))), signature)
    clusters = _join_marked(clusters, scores, same)
    # Only the live members are shown: each cluster's live part, a cluster without one left out.
    shown = [[i for i in cluster if ordered[i].status == LIVE] for cluster in clusters]
    facts: list[tuple[int, Fact]] = []
    whole: dict[int, Fact] = {}  # each cluster's fact with every member it groups, by its first
    for cluster, part in zip(clusters, shown, strict=True):
        whole[cluster[0]] = _fact(pile, ordered, cluster, marked=bool(marked & set(cluster)))
        if part == cluster:
            facts.append((part[0], whole[cluster[0]]))
        elif part:
            # Its live members, with the label of the fact as grouped (the same fact, one member less).
            own = _fact(pile, ordered, part, marked=whole[cluster[0]].marked)
            facts.append((part[0], replace(own, label=whole[cluster[0]].label)))
    for u in sorted(umbrellas):
        if ordered[u].status != LIVE:
            continue
        # The facts it states that are shown (not one whose members are all retired), in the order they
        # were grouped (by their oldest member, whatever its status); its label and anchors are of the
        # whole facts: a retire inside one of them does not change it.
        every = sorted(_states(pile, scores, u, clusters), key=lambda k: clusters[k][0])
        own = (consolidated or {}).get(ordered[u].hash, frozenset())
        # The one rule of the facts it consolidated (every member of each): a fact of its own.
        theirs = bool(every) and all({ordered[i].hash for i in clusters[k]} <= own for k in every)
        stated = every if theirs else [k for k in every if shown[k]]
        covered = [whole[clusters[k][0]] for k in stated]
        label = _short(", ".join(fact.label for fact in covered if fact.label))
        anchors = tuple(sorted({a for fact in covered for a in fact.anchors} & pile.spelled(u)))
        if theirs:
            own_fact = _fact(pile, ordered, [u], marked=u in marked)
            facts.append((u, replace(own_fact, label=label, anchors=anchors)))
            continue
        facts.append(
            (
                u,
                Fact(
                    name=ordered[u].hash,
                    label=label,
                    members=(ordered[u].hash,),
                    keep=ordered[u].hash,
                    umbrella=True,
                    covers=tuple(ordered[shown[k][0]].hash for k in stated),
                    anchors=anchors,
                    words=(),
                    similarity=None,
                    marked=u in marked,
                ),
            )
        )
    return tuple(fact for _first, fact in sorted(facts, key=lambda pair: pair[0]))


# The pair score: a weighted sum of the signals (each about 0..1), compared with SAME_FACT.
# Chosen on the development set (tests/data/restatements/) by leave-one-pile-out cross-validation
# (bench/restatements_score.py --cross-validate; docs/benchmarks.md, "Restatements").
SIMILARITY_WEIGHT = 1.0
WORDS_WEIGHT = 0.0  # cross-validation weighed the shared words at nothing beside the sentence model
ANCHORS_WEIGHT = 0.15
SAME_FACT = 0.2
CENTRE_PRIOR = 0  # how many members the pile's mean is discounted by (see _shift)
# A pair today's word rules join scores at least this (the rules keep their restatements), when its
# semantic similarity reaches RULES_SIMILARITY: a shared name and a word do not join two lessons the
# sentence model sets apart ("`timeout-minutes: 20` on every job" and "the e2e job may take
# `timeout-minutes: 45`"; 0.13 for "`monthly_rent` is base rent only" and "… annual rent divided by 12").
# Since version 16 the model must find the two close (0.4), not merely not apart (0.2): the score of 1
# outweighs every lowering, and a shared name and one word ("`start_date`", "day") are no restatement
# where the model finds little else alike ("`start_date` is the first day worked" and "Don't set
# `start_date` on a weekend…; move it to the next business day", 0.39).
WORD_RULES_SCORE = 1.0
RULES_SIMILARITY = 0.4
# Two lessons that each name an object of their own (a field, key, header or label that at most half
# of the pile names) and neither names the other's are about different objects: their score is lowered
# by this ("Write Invoice Date as YYYY-MM-DD" and "Leave Due Date empty…"; "PO Number must match
# PO-NNNNNN" and "Invoice Number: keep letters and dashes as printed"). A lowering, not a split: two
# lessons that call one object by two names may still meet on the sentence model's similarity.
OTHER_OBJECTS = 0.2
# A lesson that gives a quantity (a number with its unit, or a number a comparison bounds: "within 24
# hours", "at least 30") where the other gives none adds an instruction the other lacks (a limit, a
# period, a count): their score is lowered by this ("Idempotency keys are honoured for 24 hours only" and
# "On a timeout, retry with the same Idempotency-Key"). Restatements that both give the number keep it.
QUANTITY_ALONE = 0.5
CANNOT = -1e6  # a "different" mark, and evidence that splits
LABEL_CHARS = 60
UMBRELLA_ROUNDS = 8  # at most this many umbrellas a pile
# A member whose semantic similarity with another member reaches this is not an umbrella.
UMBRELLA_SIMILARITY = 0.45
# An item of a listing lesson states a cluster's fact when its similarity with a member reaches this: an
# item is a few words, so its similarity with a whole lesson stating its fact is lower than two lessons'
# (0.45, UMBRELLA_SIMILARITY, until version 13, found 10 of the development set's 13 umbrellas; 0.3, 12).
ITEM_SIMILARITY = 0.3
LIST_ITEMS = 3  # a lesson lists its instructions when it has at least this many items
# Where a lesson's list of items breaks: a comma, semicolon or colon, "and" / "or" / "then", a dash.
_ITEM_BREAK = re.compile(r"[;,:]\s+|\s+(?:and|or|then)\s+|\s+[—–]\s+")


def _short(label: str) -> str:
    return label if len(label) <= LABEL_CHARS else label[: LABEL_CHARS - 1].rstrip(", ") + "…"


class _Pile:
    """The signals of one pile's texts (in pile order): profiles, the anchors each member names (the
    pile's anchors found in its words, case-folded), term weights and the pair scores."""

    def __init__(self, texts: list[str]) -> None:
        n = len(texts)
        self.texts = texts
        self.profiles = [profile(t) for t in texts]
        named: dict[Phrase, int] = {}
        for p in self.profiles:
            for found in p.anchors:
                named[found] = named.get(found, 0) + 1
        # "Write Gross Amount" starts a sentence: when another lesson names "Gross Amount" as often, the
        # leading word is the instruction's verb, not part of the name.
        vocabulary = frozenset(a for a in named if not (len(a) > 1 and named.get(a[1:], 0) >= named[a]))
        longest = max((len(a) for a in vocabulary), default=0)
        self.vocabulary = vocabulary
        self.anchors = [_ngrams(p.sequence, longest) & vocabulary for p in self.profiles]
        self.spellings: dict[Phrase, str] = {}
        for p in self.profiles:
            for found, spelling in p.spellings:
                self.spellings.setdefault(found, spelling)
        self.forms: dict[str, str] = {}
        for p in self.profiles:
            for word, form in p.forms:
                self.forms.setdefault(word, form)
        counts: dict[object, int] = {}
        for p, found in zip(self.profiles, self.anchors, strict=True):
            for word in p.words:
                counts[word] = counts.get(word, 0) + 1
            for anchor in found:
                counts[anchor] = counts.get(anchor, 0) + 1
        self.count = counts
        # How rare a term is in the pile: a word every member has says nothing about which fact.
        self.weight = {term: math.log((n + 1) / (count + 0.5)) for term, count in counts.items()}
        raw = vectors(texts)
        self.shift = _shift(raw)
        self.embedding = _unit(raw - self.shift)
        self._items: dict[int, np.ndarray | None] = {}
        # Members that score alike with everyone: the same words, anchors, evidence and embedding.
        self.signature = [
            (
                p.words,
                frozenset(found),
                p.negated,
                p.commanded,
                p.quantities,
                p.names,
                p.settings,
                vector.tobytes(),
            )
            for p, found, vector in zip(self.profiles, self.anchors, raw, strict=True)
        ]
        self.scores = self._scores()

    def items(self, i: int) -> np.ndarray | None:
        """The embeddings of the items member ``i`` lists ("Before a listing goes live: title under 150
        chars, a real GTIN only, colour from our palette"), centred as the members' are: one row an
        item of two or more content words; ``None`` when it lists fewer than ``LIST_ITEMS`` (a sentence
        with one comma is not a list, and its parts would be encoded for nothing)."""
        if i not in self._items:
            parts = [part for part in _ITEM_BREAK.split(self.texts[i]) if len(profile(part).words) >= 2]
            self._items[i] = _unit(vectors(parts) - self.shift) if len(parts) >= LIST_ITEMS else None
        return self._items[i]

    def spelled(self, i: int) -> set[str]:
        return {self.spellings.get(a, " ".join(a)) for a in self.anchors[i]}

    def terms(self, i: int) -> set:
        return set(self.profiles[i].words) | set(self.anchors[i])

    def _other_objects(self) -> np.ndarray:
        """1 for a pair of members that each name an object of their own (``Profile.objects``, named by
        at most half of the pile's members) and neither names (in its words) one of the other's; else 0."""
        n = len(self.texts)
        own = [
            {a for a in found if a in p.objects and self.count[a] * 2 <= n}
            for p, found in zip(self.profiles, self.anchors, strict=True)
        ]
        at = {a: k for k, a in enumerate({a for mine in own for a in mine})}  # the order does not matter
        if not at:
            return np.zeros((n, n))
        mine = np.zeros((n, len(at)))
        named = np.zeros((n, len(at)))
        for i in range(n):
            mine[i, [at[a] for a in own[i]]] = 1.0
            named[i, [at[a] for a in self.anchors[i] if a in at]] = 1.0
        meets = (mine @ named.T) > 0
        has = mine.any(axis=1)
        return (np.outer(has, has) & ~(meets | meets.T)).astype(float)

    def _scores(self) -> np.ndarray:
        n = len(self.texts)
        similarity = self.embedding @ self.embedding.T
        # The words of a member's anchors count once, with its anchors, not again as words.
        plain = [
            p.words - {w for a in found for w in a}
            for p, found in zip(self.profiles, self.anchors, strict=True)
        ]
        words = _weighted_cosine(plain, self.weight)
        anchors = _weighted_cosine([frozenset(found) for found in self.anchors], self.weight)
        scores = SIMILARITY_WEIGHT * similarity + WORDS_WEIGHT * words + ANCHORS_WEIGHT * anchors
        # Today's word rules, counted for all pairs at once (lessons.core.groups, in bit planes).
        for i, j in _restating_pairs([_rules_profile(t) for t in self.texts]):
            if similarity[i, j] >= RULES_SIMILARITY:  # not where the sentence model sets the two apart
                scores[i, j] = scores[j, i] = max(scores[i, j], WORD_RULES_SCORE)
        positive = scores > 0
        scores -= OTHER_OBJECTS * self._other_objects()
        # A quantity one lesson gives and the other lacks: a limit, a period or a count of its own.
        measured = np.array([bool(p.quantities) for p in self.profiles], dtype=bool)
        scores -= QUANTITY_ALONE * (np.outer(measured, ~measured) | np.outer(~measured, measured))
        # Evidence that splits, looked for only where it can be: a pair that scored above 0 before the
        # lowerings (so a lowered pair still cannot join through an average), one negating
        # and the other commanding, or both with quantities, or both with numbered names or settings.
        flags = np.array(
            [
                [bool(p.negated), bool(p.commanded), bool(p.quantities), bool(p.names or p.settings)]
                for p in self.profiles
            ]
        ).reshape(n, 4)
        neg, cmd, qty, named = flags[:, 0], flags[:, 1], flags[:, 2], flags[:, 3]
        maybe = (
            np.outer(neg, cmd) | np.outer(cmd, neg) | np.outer(qty, qty) | np.outer(named, named)
        ) & positive
        for i, j in zip(*np.nonzero(np.triu(maybe, 1)), strict=True):
            if _splits(self.profiles[i], self.profiles[j]):
                scores[i, j] = scores[j, i] = CANNOT
        np.fill_diagonal(scores, 0.0)
        self.similarity = similarity
        return scores


def _without(
    pile: _Pile, scores: np.ndarray, umbrellas: set[int], signature: Sequence
) -> tuple[np.ndarray, list[list[int]]]:
    """The pair scores and the clusters of the members but ``umbrellas``: the signals computed again
    without them (a term every umbrella repeats is rarer than it looked), "different" kept."""
    rest = [i for i in range(len(pile.texts)) if i not in umbrellas]
    scores = scores.copy()
    if len(rest) > 1:
        block = np.ix_(rest, rest)
        again = _Pile([pile.texts[i] for i in rest]).scores
        again[scores[block] == CANNOT] = CANNOT
        scores[block] = again
    return scores, _cluster(scores, rest, signature)


def _ngrams(sequence: tuple[str, ...], longest: int) -> set[Phrase]:
    return {sequence[i : i + k] for k in range(1, longest + 1) for i in range(len(sequence) - k + 1)}


def _shift(vectors: np.ndarray) -> np.ndarray:
    """The share of the pile's mean embedding taken off each member's (what every member of a pile shares
    is its topic, not a fact): ``(n - 1) / (n + CENTRE_PRIOR)``, growing with the pile (the mean of a few
    members is mostly those members themselves: of three, full centring would set every pair apart);
    nothing for a pile of one."""
    n = len(vectors)
    if n < 2:
        return np.zeros(vectors.shape[1:], dtype=vectors.dtype)
    return vectors.mean(axis=0) * ((n - 1) / (n + CENTRE_PRIOR))


def _unit(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-9)


def _weighted_cosine(sets: list[frozenset], weight: Mapping) -> np.ndarray:
    """The cosine of every pair of term sets, each term weighted by ``weight``."""
    vocabulary = sorted({t for s in sets for t in s}, key=repr)
    at = {t: k for k, t in enumerate(vocabulary)}
    matrix = np.zeros((len(sets), len(vocabulary)))
    for i, terms in enumerate(sets):
        for t in terms:
            matrix[i, at[t]] = weight[t]
    norms = np.linalg.norm(matrix, axis=1)
    norms[norms == 0] = 1.0
    matrix /= norms[:, None]
    return matrix @ matrix.T


def _splits(a: Profile, b: Profile) -> bool:
    """Evidence that two lessons state different facts: one negates an instruction the other gives and
    does not negate itself ("never compute it" / "compute it as ..."; "don't code X; code Y" and "X is
    not coded; code Y" both negate "code", so that splits nothing), a quantity of one dimension with
    other values ("within 15 minutes" / "within 4 hours"), the same numbered name with another number
    ("P1" / "P2"), or the same backticked setting with another value ("`timeout-minutes: 20`" / "`45`")."""
    if ((a.negated & b.commanded) - b.negated) or ((b.negated & a.commanded) - a.negated):
        return True
    for left, right in ((a.quantities, b.quantities), (a.names, b.names), (a.settings, b.settings)):
        if left and right:
            mine: dict = {}
            theirs: dict = {}
            for key, value in left:
                mine.setdefault(key, set()).add(value)
            for key, value in right:
                theirs.setdefault(key, set()).add(value)
            if any(mine[k].isdisjoint(theirs[k]) for k in mine.keys() & theirs.keys()):
                return True
    return False


def _cluster(scores: np.ndarray, among: list[int], signature: Sequence | None = None) -> list[list[int]]:
    """Average-linkage clusters of ``among`` (pile indexes): repeatedly join the two clusters whose
    average pair score is highest, while it is at least ``SAME_FACT`` (ties: the lowest indexes). Each
    cluster sorted, clusters ordered by their first member.

    The same clusters, computed in parts: members with the same ``signature`` (the same words, anchors,
    evidence and embedding: they score the same with everyone) start as one cluster, and each connected
    part of the graph of pairs scoring at least ``SAME_FACT`` is clustered on its own (two clusters whose
    average reaches it have a pair that reaches it)."""
    if not among:
        return []
    nodes: dict[object, list[int]] = {}
    for i in among:
        nodes.setdefault(i if signature is None else signature[i], []).append(i)
    parts = sorted(nodes.values())
    order = [i for part in parts for i in part]
    sums = scores[np.ix_(order, order)]
    sizes = np.array([len(part) for part in parts], dtype=float)
    if len(parts) < len(order):  # sum the rows and columns of each part
        starts = np.cumsum([0] + [len(part) for part in parts[:-1]])
        sums = np.add.reduceat(np.add.reduceat(sums, starts, axis=0), starts, axis=1)
    linked = sums / np.outer(sizes, sizes) >= SAME_FACT
    out: list[list[int]] = []
    for component in _components(linked):
        out += _average_linkage(
            sums[np.ix_(component, component)], sizes[component], [parts[k] for k in component]
        )
    return sorted(out)


def _components(linked: np.ndarray) -> list[list[int]]:
    """The connected parts of a boolean adjacency matrix, each sorted, in order of their first node."""
    seen = np.zeros(len(linked), dtype=bool)
    out = []
    for start in range(len(linked)):
        if seen[start]:
            continue
        part, stack = [], [start]
        seen[start] = True
        while stack:
            node = stack.pop()
            part.append(node)
            for nxt in np.nonzero(linked[node] & ~seen)[0]:
                seen[nxt] = True
                stack.append(int(nxt))
        out.append(sorted(part))
    return out


def _average_linkage(sums: np.ndarray, sizes: np.ndarray, members: list[list[int]]) -> list[list[int]]:
    """Average linkage over starting clusters ``members`` (``sums``: the sum of pair scores between two
    of them; ``sizes``: their sizes), while the best average is at least ``SAME_FACT``. The matrix of
    averages is kept up to date row by row: a join changes one row and one column."""
    if len(members) == 1:
        return [sorted(members[0])]
    sums, sizes, members = sums.astype(float).copy(), sizes.astype(float).copy(), [list(m) for m in members]
    average = sums / np.outer(sizes, sizes)
    np.fill_diagonal(average, -np.inf)
    alive = np.ones(len(members), dtype=bool)
    while True:
        i, j = divmod(int(np.argmax(average)), len(members))
        if average[i, j] < SAME_FACT:
            break
        i, j = min(i, j), max(i, j)
        sums[i, :] += sums[j, :]
        sums[:, i] += sums[:, j]
        sizes[i] += sizes[j]
        members[i] += members[j]
        alive[j] = False
        row = np.where(alive, sums[i, :] / (sizes[i] * sizes), -np.inf)
        row[i] = -np.inf
        average[i, :] = row
        average[:, i] = row
        average[j, :] = -np.inf
        average[:, j] = -np.inf
    return [sorted(members[k]) for k in range(len(members)) if alive[k]]


def _join_marked(
    clusters: list[list[int]], scores: np.ndarray, same: list[tuple[int, int]]
) -> list[list[int]]:
    """The clusters with every "same" mark honoured: the two clusters holding its lessons become one
    (a reviewer marked two groups as one fact), unless a "different" mark or evidence that splits is
    between them."""
    joined = [list(c) for c in clusters]
    for i, j in same:
        if not any(i in c for c in joined) or not any(j in c for c in joined):
            continue  # an umbrella keeps its own group
        a = next(k for k, c in enumerate(joined) if i in c)
        b = next(k for k, c in enumerate(joined) if j in c)
        if a != b and not (scores[np.ix_(joined[a], joined[b])] <= CANNOT).any():
            joined[min(a, b)] = sorted(joined[a] + joined[b])
            del joined[max(a, b)]
    return sorted(joined)


def _keys(pile: _Pile, cluster: list[int], pool: Mapping) -> set:
    """The key terms of a cluster: the anchors at least half of its members name (every anchor of a
    single member) that are specific to it: at least half of the members of the pool (``pool``: how many
    of them name each anchor) that name the anchor are in the cluster."""
    counts: dict = {}
    for c in cluster:
        for term in pile.anchors[c]:
            counts[term] = counts.get(term, 0) + 1
    return {t for t, count in counts.items() if count * 2 >= len(cluster) and count * 2 >= pool.get(t, 0)}


def _covered(
    pile: _Pile,
    scores: np.ndarray,
    u: int,
    clusters: list[list[int]],
    *,
    everyone: bool = False,
    besides: frozenset[int] = frozenset(),
) -> list[int]:
    """The indexes of the clusters (``u`` not in them) whose facts lesson ``u`` states, when it states
    two or more: ``u`` names a key term (``_keys``, the pool being the clusters' members) of one cluster
    and another key term of another, no cluster has both terms as keys (two facts, not one fact named
    twice), nothing splits ``u`` from a member of either (``_splits``, a "different" mark), and at least
    half of what ``u`` names are keys of the facts it states. ``[]`` when ``u`` states fewer than two.
    ``everyone``: the pool is every member of the pile but ``u`` and ``besides`` (the umbrellas found so
    far: a name an umbrella repeats does not make it less a fact's key).
    Only the clusters that name one of ``u``'s anchors are looked at: no other can have a key it names."""
    mine = pile.anchors[u]
    if len(mine) < 2:
        return []
    pool: dict = {}
    if everyone:
        pool = {
            t: pile.count.get(t, 0) - (t in mine) - sum(t in pile.anchors[b] for b in besides)
            for t in pile.vocabulary
        }
    else:
        for cluster in clusters:
            for c in cluster:
                for term in pile.anchors[c]:
                    pool[term] = pool.get(term, 0) + 1
    keys: dict[int, set] = {
        k: _keys(pile, cluster, pool)
        for k, cluster in enumerate(clusters)
        if cluster and any(pile.anchors[c] & mine for c in cluster)
    }
    named = [
        (k, held & mine)
        for k, held in sorted(keys.items())
        if held & mine and not any(scores[u, c] <= CANNOT / 2 for c in clusters[k])
    ]
    covered: set[int] = set()
    for x, (k1, terms1) in enumerate(named):
        for k2, terms2 in named[x + 1 :]:
            if any(
                t1 != t2 and not any(t1 in held and t2 in held for held in keys.values())
                for t1 in terms1
                for t2 in terms2
            ):
                covered |= {k1, k2}
    # An umbrella restates: most of what it names is the key of a fact it states.
    stated = set().union(*(keys[k] for k in covered)) if covered else set()
    if len(mine & stated) * 2 < len(mine):
        return []
    return sorted(covered)


def _states(pile: _Pile, scores: np.ndarray, u: int, clusters: list[list[int]], **pool: object) -> list[int]:
    """The indexes of the clusters whose facts lesson ``u`` states, when it states two or more: by the
    anchors it names (``_covered``; ``pool`` is passed on), else by the items it lists
    (``_items_covered``); ``[]`` when it states fewer than two."""
    return _covered(pile, scores, u, clusters, **pool) or _items_covered(pile, scores, u, clusters)


def _items_covered(pile: _Pile, scores: np.ndarray, u: int, clusters: list[list[int]]) -> list[int]:
    """The indexes of the clusters (``u`` not in them) whose facts the items lesson ``u`` lists state,
    when they are two or more: each item's closest member (``Pile.items``, similarity at least
    ``ITEM_SIMILARITY``) names its cluster, unless something splits ``u`` from that cluster. ``[]`` for a
    lesson that lists fewer than ``LIST_ITEMS`` items, or whose items state fewer than two facts."""
    items = pile.items(u)
    members = [c for cluster in clusters for c in cluster if c != u]
    if items is None or not members:
        return []
    at = {c: k for k, cluster in enumerate(clusters) for c in cluster}
    similarity = items @ pile.embedding[members].T
    covered: set[int] = set()
    for row in similarity:
        best = int(np.argmax(row))
        if row[best] >= ITEM_SIMILARITY:
            k = at[members[best]]
            if not any(scores[u, c] <= CANNOT / 2 for c in clusters[k]):
                covered.add(k)
    return sorted(covered) if len(covered) >= 2 else []


def _umbrellas(
    pile: _Pile, scores: np.ndarray, marked: set[int], signature: Sequence
) -> tuple[set[int], list[list[int]]]:
    """The members that state two or more of the pile's facts, taken out one at a time: of the members
    (no mark on them) that state (``_covered``) the facts of two or more clusters of the others, the one
    that states the most (then the oldest); then the same again without it, until none is left or
    ``UMBRELLA_ROUNDS`` are taken. Returns the umbrellas and the last clusters of the others."""
    n = len(pile.texts)
    found: set[int] = set()
    clusters: list[list[int]] = []
    # A lesson that states several facts is close to none of their restatements on its own: one that is
    # restates that member (the diagonal is 1: itself is not counted).
    near = pile.similarity >= UMBRELLA_SIMILARITY
    np.fill_diagonal(near, False)
    restates = near.any(axis=1)
    for _round in range(UMBRELLA_ROUNDS + 1):
        rest = [i for i in range(n) if i not in found]
        clusters = _cluster(scores, rest, signature)
        if _round == UMBRELLA_ROUNDS:
            break
        best, most = None, 1
        for u in rest:
            if u in marked or restates[u] or (len(pile.anchors[u]) < 2 and pile.items(u) is None):
                continue
            others = [[c for c in cluster if c != u] for cluster in clusters]
            covered = len(_states(pile, scores, u, others, everyone=True, besides=frozenset(found)))
            if covered > most:
                best, most = u, covered
        if best is None:
            break
        found.add(best)
    return found, clusters


def _fact(pile: _Pile, ordered: list[PileMember], part: list[int], *, marked: bool) -> Fact:
    """The ``Fact`` of one cluster: the anchors and words at least two members share (all of a single
    member's, for its label only), the lowest pairwise similarity, the label."""
    counts: dict = {}
    for i in part:
        for term in pile.terms(i):
            counts[term] = counts.get(term, 0) + 1
    least = 2 if len(part) > 1 else 1
    shared = [t for t, c in counts.items() if c >= least]
    anchors = [t for t in shared if isinstance(t, tuple)]
    words = [t for t in shared if isinstance(t, str)]

    # The most shared and rarest first; then the longer name ("is_internal" over "false"), then the text.
    def rank_key(t: object) -> tuple:
        return (
            -round(counts[t] * pile.weight[t], 9),
            -len(pile.spellings.get(t, "")) if isinstance(t, tuple) else 0,
            repr(t),
        )

    rank = sorted(shared, key=rank_key)
    top_anchor = next((t for t in rank if isinstance(t, tuple)), None)
    if top_anchor is None:
        # No name the members share: a name one of them gives that holds a word they share ("Gross
        # Amount" of "Write Gross Amount as ..." and "... the gross total ...").
        named = {t for t, c in counts.items() if isinstance(t, tuple) and c < least}
        top_anchor = next((a for a in sorted(named, key=rank_key) if set(a) & set(words)), None)
    if top_anchor is not None:
        label = pile.spellings.get(top_anchor, " ".join(top_anchor))
    else:
        label = " ".join(pile.forms.get(t, t) for t in [t for t in rank if isinstance(t, str)][:LABEL_WORDS])
    similarity = None
    if len(part) > 1:
        block = pile.similarity[np.ix_(part, part)]
        low = float(min(block[a, b] for a in range(len(part)) for b in range(a + 1, len(part))))
        similarity = round(min(1.0, max(0.0, low)), 2)
    members = [ordered[i] for i in part]
    return Fact(
        name=members[0].hash,
        label=_short(label),
        members=tuple(m.hash for m in members),
        keep=keep_choice(members),
        umbrella=False,
        covers=(),
        anchors=tuple(sorted(pile.spellings.get(a, " ".join(a)) for a in anchors)) if len(part) > 1 else (),
        words=tuple(sorted(pile.forms.get(w, w) for w in words)) if len(part) > 1 else (),
        similarity=similarity,
        marked=marked,
    )
