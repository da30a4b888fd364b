"""Reading piles: over-budget entities counted in SQL, members and drafts. spec: piles.md.

The rules themselves live in ``lessons.core.piles``; these selectors find the candidate entities
with one aggregate query and hand members to the rules, so the JSON and the pages agree.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from dataclasses import dataclass

from django.db import connection
from django.db.models import BooleanField, F, Q, QuerySet
from django.db.models.expressions import RawSQL

from lessons.core.piles import Pile, PileMember, draft_state, entity_pile
from lessons.models import ENTITY_FTS_TABLE as FTS_TABLE
from lessons.models import Draft, EntityCount, Host, Lesson
from lessons.serializers import pile_as_json

KNOWN_MIX = ("held", "regressed", "drifted")


def live_lessons() -> QuerySet[Lesson]:
    return Lesson.objects.filter(status=Lesson.Status.LIVE)


# A queue row: the entity and its stored counts (lessons.models.EntityCount), without the search document.
QUEUE_FIELDS = (
    "host_name",
    "host_id",
    "namespace",
    "subject",
    *(
        f.name
        for f in EntityCount._meta.concrete_fields
        if f.name not in ("id", "host", "host_name", "namespace", "subject", "over_budget", "document")
    ),
)
# Text queries shorter than a trigram cannot use the text index: they scan the over-budget rows.
TRIGRAM = 3


def pile_queue(*, host: str | None = None, namespace: str | None = None, text: str | None = None) -> QuerySet:
    """Every over-budget entity as one row, read from the stored counts (``EntityCount``; one query).

    Rows are dicts: ``host_name``, ``host_id``, ``namespace``, ``subject``, ``max_active``, ``count``
    (live lessons; also as ``live``), ``overage``, ``held``, ``regressed``, ``drifted``, ``other``,
    ``not_applied``, ``oldest`` (datetime, UTC), ``recurring`` (members with recurred_sessions >=
    ``RECURRING_MIN_SESSIONS``), ``pending_drafts``, ``groups`` (restatement groups of the live members).
    ``namespace`` keeps the entities whose namespace contains it (case-insensitive); ``text`` keeps the
    entities whose host, namespace or subject contains it, or that have a live lesson whose text does
    (through the database's trigram index, ``entity_text_filter``). Sorted by host, namespace, subject.
    spec: piles.md, rules 2-4.
    """
    rows = EntityCount.objects.filter(over_budget=True)
    if host:
        rows = rows.filter(host_name=host)
    if namespace:
        rows = rows.filter(namespace__icontains=namespace)
    if text:
        rows = entity_text_filter(rows, text)
    return rows.values(*QUEUE_FIELDS, count=F("live"), max_active=F("live") - F("overage")).order_by(
        "host_name", "namespace", "subject"
    )


def entity_text_filter(rows: QuerySet[EntityCount], text: str) -> QuerySet[EntityCount]:
    """``rows`` whose search ``document`` (host, namespace, subject, live members' texts) contains
    ``text``, case-insensitively: SQLite's FTS5 trigram table, PostgreSQL's pg_trgm GIN index
    (``ILIKE``); shorter than ``TRIGRAM`` characters, or on another database, a LIKE over ``rows``.
    The document is filled only while over budget, so only piles match."""
    vendor = connection.vendor
    if len(text) < TRIGRAM or vendor not in ("sqlite", "postgresql"):
        return rows.filter(document__icontains=text)
    if vendor == "sqlite":
        phrase = '"' + text.replace('"', '""') + '"'
        matching = RawSQL(f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s", [phrase])
        return rows.filter(id__in=matching)
    pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    table = connection.ops.quote_name(EntityCount._meta.db_table)
    return rows.alias(
        matches=RawSQL(f"{table}.document ILIKE %s", [pattern], output_field=BooleanField())
    ).filter(matches=True)


def entity_lessons(*, host: Host, namespace: str, subject: str) -> QuerySet[Lesson]:
    """Every lesson of an entity (all statuses), oldest first, with recurrence counts joined."""
    return (
        Lesson.objects.filter(host=host, namespace=namespace, subject=subject)
        .select_related("recurrence")
        .order_by("created_at", "hash")
    )


def pile_version(lessons: list[Lesson]) -> str:
    """The version a pile action carries: a digest of every lesson's hash and status on the entity.

    Any retire, restore, approval or import that changes a status changes it. spec: decisions.md,
    "Stale views are refused, not merged".
    """
    digest = hashlib.sha256()
    for lesson in sorted(lessons, key=lambda x: x.hash):
        digest.update(f"{lesson.hash}:{lesson.status}\n".encode())
    return digest.hexdigest()[:16]


def to_member(lesson: Lesson) -> PileMember:
    return PileMember(
        hash=lesson.hash,
        created_at_ms=int(lesson.created_at.timestamp() * 1000),
        status=lesson.status,
        verdict=lesson.latest_verdict,
    )


def draft_status(draft: Draft, live_hashes: set[str]) -> str:
    """``pending``, ``approved``, ``rejected``, or ``stale`` (pending while a superseded member is not
    live)."""
    return draft_state(status=draft.status, supersedes=draft.supersedes, live_hashes=live_hashes)


@dataclass(frozen=True)
class EntityPile:
    """A pile with its rows: ``pile`` (the rules' view), the live ``lessons`` in order, ``drafts``."""

    host: Host
    pile: Pile
    lessons: tuple[Lesson, ...]
    drafts: tuple[Draft, ...]
    live_hashes: frozenset[str]


def piles_list(*, host: str | None = None) -> list[EntityPile]:
    """Every pile, sorted by host, namespace, subject; members oldest first. Four queries in all."""
    rows = list(pile_queue(host=host))
    if not rows:
        return []
    entity_filter = Q()
    for row in rows:
        entity_filter |= Q(host_id=row["host_id"], namespace=row["namespace"], subject=row["subject"])
    hosts = {h.id: h for h in Host.objects.filter(id__in={r["host_id"] for r in rows})}
    members: dict[tuple, list[Lesson]] = defaultdict(list)
    for lesson in (
        live_lessons().filter(entity_filter).select_related("recurrence").order_by("created_at", "hash")
    ):
        members[(lesson.host_id, lesson.namespace, lesson.subject)].append(lesson)
    drafts: dict[tuple, list[Draft]] = defaultdict(list)
    for draft in Draft.objects.filter(entity_filter).order_by("created_at", "ext_id"):
        drafts[(draft.host_id, draft.namespace, draft.subject)].append(draft)
    result = []
    for row in rows:
        key = (row["host_id"], row["namespace"], row["subject"])
        host_obj = hosts[row["host_id"]]
        pile = entity_pile(
            namespace=row["namespace"],
            subject=row["subject"],
            max_active=host_obj.max_active,
            budget_enabled=host_obj.budget_enabled,
            lessons=[to_member(m) for m in members[key]],
        )
        if pile is None:  # changed between the two queries; the next read shows it
            continue
        result.append(
            EntityPile(
                host=host_obj,
                pile=pile,
                lessons=tuple(members[key]),
                drafts=tuple(drafts[key]),
                live_hashes=frozenset(m.hash for m in members[key]),
            )
        )
    return result


def piles_json(*, host: str | None = None) -> dict:
    """``{"piles": [...]}`` for ``manage.py piles --format json`` and ``GET /api/v1/piles``."""
    return {"piles": [pile_as_json(p) for p in piles_list(host=host)]}
