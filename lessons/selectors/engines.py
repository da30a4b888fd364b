"""Which engine a host's lessons came from, for the rules a written consolidation follows (its length and
anchors: lessons/core/written.py). docs/reviewing.md, "Writing a consolidation"."""

from __future__ import annotations

from collections.abc import Sequence

from lessons.models import AreevCursor, Host, Lesson

ALTIMATE, AREEV, INTERCHANGE = "altimate", "areev", "interchange"


def host_engine(*, host: Host, members: Sequence[Lesson]) -> str:
    """``altimate`` when a member came from an altimate store (it has a store and a lesson id), ``areev``
    when the host syncs an areev memory file, else ``interchange``. At most one query."""
    if any(m.store and m.lesson_id for m in members):
        return ALTIMATE
    if AreevCursor.objects.filter(host=host).exists():
        return AREEV
    return INTERCHANGE
