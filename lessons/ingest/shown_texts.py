"""Texts shown to sessions that are no stored version of their lesson key. docs/piles-and-recurrence.md,
"Recurrence",
"Attributing one correction" (step 2: a candidate matches on any version the session was shown).

An exposure may carry the exact text the session saw (docs/interchange.md, "exposure: a session was shown a
lesson"; altimate's session
snapshots do). When no stored version of the lesson key has that text, the text is kept in ``ShownText``
so recurrence can still match a correction against it (as ``earlier_version``); without it the text
would be lost and such a correction would count as unmatched.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from lessons.models import ShownText

CHUNK = 400  # keys per lookup: well under SQLite's 999 parameters


@dataclass(frozen=True)
class ShownTextItem:
    """One exposure's text that no stored version has: ``(host_id, lesson_key, text_hash)`` and the
    session that saw it (to re-attribute when the text is new to the database)."""

    host_id: int
    lesson_key: str
    text_hash: str
    text: str
    session: str


def shown_texts_keep(items: Iterable[ShownTextItem]) -> set[tuple[int, str]]:
    """Store the texts not stored yet (one row per ``(host, lesson key, text_hash)``), in the caller's
    transaction. Returns the ``(host_id, session)`` pairs that saw a text new to the database: their
    corrections must be attributed again (an exposure stored before its text was kept gains a version).
    Queries: one lookup per ``CHUNK`` keys and one insert per ``CHUNK`` new texts.
    """
    wanted: dict[tuple[int, str, str], ShownTextItem] = {}
    sessions: dict[tuple[int, str, str], set[str]] = defaultdict(set)
    for item in items:
        ident = (item.host_id, item.lesson_key, item.text_hash)
        wanted.setdefault(ident, item)
        sessions[ident].add(item.session)
    if not wanted:
        return set()
    by_host: dict[int, list[tuple[int, str, str]]] = defaultdict(list)
    for ident in sorted(wanted):
        by_host[ident[0]].append(ident)
    stored: set[tuple[int, str, str]] = set()
    for host_id, idents in by_host.items():
        for start in range(0, len(idents), CHUNK):
            part = idents[start : start + CHUNK]
            rows = ShownText.objects.filter(
                host_id=host_id, lesson_key__in={k for _h, k, _d in part}
            ).values_list("lesson_key", "text_hash")
            stored |= {(host_id, key, digest) for key, digest in rows}
    new = [ident for ident in sorted(wanted) if ident not in stored]
    for start in range(0, len(new), CHUNK):
        ShownText.objects.bulk_create(
            [
                ShownText(host_id=h, lesson_key=k, text_hash=d, text=wanted[(h, k, d)].text)
                for h, k, d in new[start : start + CHUNK]
            ],
            ignore_conflicts=True,
        )
    return {(ident[0], session) for ident in new for session in sessions[ident]}
