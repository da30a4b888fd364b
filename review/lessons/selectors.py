"""Reads for the lesson page: one lesson version with its versions, verdicts, recurrence and decisions.

Five queries whatever the size of its entity (the page tests assert it). docs/interchange.md ("lesson",
"latest verdict"), docs/decisions.md (``restore``).
"""

from __future__ import annotations

from dataclasses import dataclass

from lessons.core.piles import PENDING, draft_state, pile_target
from lessons.models import Draft, Lesson
from lessons.recurrence.versions import Version, key_of, key_versions
from lessons.selectors.piles import pile_version
from lessons.serializers import recurrence_dict
from review.models import Decision
from review.piles.selectors import verdict_history


@dataclass(frozen=True)
class LessonDetail:
    """One lesson version with what the lesson page shows about it.

    ``versions``: every version of its recurrence key on the host (the same ``lesson_id`` in the same
    store, a missing store being the empty one: docs/piles-and-recurrence.md, "Recurrence"), oldest first
    (just this one when it has no ``lesson_id``), as ``lessons.recurrence.versions.Version``.
    ``lesson.history``: its verdicts, newest first; ``lesson.counts``: its recurrence counts.
    ``decisions``: the decision records naming it, in ``seq`` order, each with ``ack`` joined.
    ``version``: the entity's pile version (for a restore); ``live_count``: the entity's live lessons
    (a retire of its only one asks for a confirmation: docs/reviewing.md, "Retiring every live lesson").
    """

    lesson: Lesson
    versions: tuple[Version, ...]
    decisions: tuple[Decision, ...]
    version: str
    live_count: int = 0

    @property
    def last_live(self) -> bool:
        """Whether the lesson is live and the only live lesson of its entity."""
        return self.lesson.status == Lesson.Status.LIVE and self.live_count == 1

    @property
    def target(self) -> str:
        return pile_target(self.lesson.namespace, self.lesson.subject)

    @property
    def retracted_by_retire(self) -> bool:
        """docs/decisions.md, ``restore``: retracted, and the latest decision naming it is a ``retire``."""
        return (
            self.lesson.status == Lesson.Status.RETRACTED
            and bool(self.decisions)
            and self.decisions[-1].action == "retire"
        )


def lesson_detail(*, host_name: str, lesson_hash: str) -> LessonDetail | None:
    """The lesson ``(host, hash)`` or ``None``. Five queries, whatever the size of its entity."""
    lesson = (
        Lesson.objects.select_related("host", "recurrence")
        .prefetch_related(verdict_history())
        .filter(host__name=host_name, hash=lesson_hash)
        .first()
    )
    if lesson is None:
        return None
    lesson.counts = recurrence_dict(lesson)
    # The versions of its recurrence key, read once for the versions table and the recurrence section
    # (issue 10: one query fewer). A lesson without a lesson_id is its key's only version.
    key_rows = key_versions(host_id=lesson.host_id, keys=[key_of(lesson)])
    versions = tuple(sorted(key_rows, key=lambda v: (v.created_at, v.hash)))
    entity = Lesson.objects.filter(host=lesson.host_id, namespace=lesson.namespace, subject=lesson.subject)
    decisions = tuple(
        Decision.objects.filter(host=lesson.host.name, lesson_hash=lesson.hash)
        .select_related("ack")
        .order_by("seq")
    )
    # rows with .hash and .status, not model instances: a pile may have hundreds of members
    rows = list(entity.values_list("hash", "status", named=True))
    return LessonDetail(
        lesson=lesson,
        versions=versions,
        decisions=decisions,
        version=pile_version(rows),
        live_count=sum(1 for row in rows if row.status == Lesson.Status.LIVE),
    )


def drafts_made_stale(lesson: Lesson) -> list[str]:
    """The ids of the drafts of ``lesson``'s entity that retiring it (just now) made stale, ordered by id:
    pending ones that supersede it and whose other members are all live (``draft_status`` with it live
    again is pending; one already stale before is not named again). Two queries; the supersedes lists are
    read in Python (a JSON "contains" is not on SQLite)."""
    entity = {"host_id": lesson.host_id, "namespace": lesson.namespace, "subject": lesson.subject}
    pending = Draft.objects.filter(**entity, status=Draft.Status.PENDING).order_by("ext_id")
    drafts = [(ext_id, supersedes) for ext_id, supersedes in pending.values_list("ext_id", "supersedes")]
    drafts = [(ext_id, supersedes) for ext_id, supersedes in drafts if lesson.hash in supersedes]
    if not drafts:
        return []
    live = set(Lesson.objects.filter(**entity, status=Lesson.Status.LIVE).values_list("hash", flat=True))
    before = live | {lesson.hash}
    return [
        ext_id
        for ext_id, supersedes in drafts
        if draft_state(status=Draft.Status.PENDING, supersedes=supersedes, live_hashes=before) == PENDING
    ]
