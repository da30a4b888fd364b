"""Resolving a pile by its facts: keep one member of each fact, select the others to retire, leave the
umbrellas alone. Pure functions over ``lessons.core.facts.Fact``, no ORM. Nothing here retires anything:
the pile page pre-selects what ``resolve_by_facts`` gives, and the reviewer still writes the reason and
confirms (docs/reviewing.md, "Resolve by facts").
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from lessons.core.facts import Fact


@dataclass(frozen=True)
class Resolution:
    """What resolving by facts selects. ``keep``: one member of each fact (umbrellas not counted), in the
    facts' order; ``retire``: every other member of the facts, fact by fact, oldest first; ``umbrellas``:
    the umbrella lessons, left alone, in the facts' order."""

    keep: tuple[str, ...]
    retire: tuple[str, ...]
    umbrellas: tuple[str, ...]


def keeper_of(fact: Fact, picked: Iterable[str] = ()) -> str:
    """The member of ``fact`` to keep: the first of ``picked`` that is one of its members (the reviewer's
    choice), else its suggested keeper (``Fact.keep``)."""
    members = set(fact.members)
    return next((h for h in picked if h in members), fact.keep)


def resolve_by_facts(facts: Sequence[Fact], picked: Iterable[str] = ()) -> Resolution:
    """Every member of ``facts`` but each fact's keeper (``keeper_of`` with the reviewer's ``picked``
    hashes: hashes in no fact, or in an umbrella, are ignored), umbrellas left alone.

    ``facts`` are one pile's (``lessons.core.facts.pile_facts``), every member in exactly one of them.
    """
    chosen = list(picked)
    keep: list[str] = []
    retire: list[str] = []
    umbrellas: list[str] = []
    for fact in facts:
        if fact.umbrella:
            umbrellas.extend(fact.members)
            continue
        kept = keeper_of(fact, chosen)
        keep.append(kept)
        retire.extend(h for h in fact.members if h != kept)
    return Resolution(keep=tuple(keep), retire=tuple(retire), umbrellas=tuple(umbrellas))
