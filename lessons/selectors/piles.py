"""Reading piles: over-budget entities counted in SQL, members and drafts. docs/piles-and-recurrence.md,
"Piles".

The rules themselves live in ``lessons.core.piles``; these selectors find the candidate entities
with one aggregate query and hand members to the rules, so the JSON and the pages agree.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

import orjson
from django.db import connection
from django.db.models import BooleanField, F, Q, QuerySet
from django.db.models.expressions import RawSQL

from lessons.core.facts import FACTS_VERSION, Fact, pile_facts
from lessons.core.piles import Pile, PileMember, draft_state, entity_pile
from lessons.core.recurrence import COUNT_FIELDS
from lessons.core.text import search_lower
from lessons.models import ENTITY_FTS_TABLE as FTS_TABLE
from lessons.models import Draft, EntityCount, Host, Lesson
from lessons.selectors.embeddings import vectors_stored
from lessons.selectors.facts import compute_facts, host_marks
from lessons.serializers import pile_as_json

_NO_COUNTS = (0,) * len(COUNT_FIELDS)


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
        if f.name
        not in ("id", "host", "host_name", "namespace", "subject", "over_budget", "document", "fact_groups")
    ),
)
# Text queries shorter than a trigram cannot use the text index: they scan the over-budget rows.
TRIGRAM = 3


def pile_queue(
    *, host: str | None = None, namespace: str | None = None, text: str | None = None, facts: bool = False
) -> QuerySet:
    """Every over-budget entity as one row, read from the stored counts (``EntityCount``; one query).

    Rows are dicts: ``host_name``, ``host_id``, ``namespace``, ``subject``, ``max_active``, ``count``
    (live lessons; also as ``live``), ``overage``, ``held``, ``regressed``, ``drifted``, ``other``,
    ``not_applied``, ``oldest`` (datetime, UTC), ``recurring`` (members with recurred_sessions >=
    ``RECURRING_MIN_SESSIONS``), ``pending_drafts``, ``groups`` (restatement groups of the live members).
    ``namespace`` keeps the entities whose namespace contains it (case-insensitive); ``text`` keeps the
    entities whose host, namespace or subject contains it, or that have a live lesson whose text does
    (through the database's trigram index, ``entity_text_filter``). Sorted by host, namespace, subject.
    ``facts`` adds the stored ``fact_groups`` (``lessons.core.facts``) to each row (for the JSON).
    docs/piles-and-recurrence.md, "Piles", rules 2-4.
    """
    rows = EntityCount.objects.filter(over_budget=True)
    if host:
        rows = rows.filter(host_name=host)
    if namespace:
        rows = rows.filter(namespace__icontains=namespace)
    if text:
        rows = entity_text_filter(rows, text)
    fields = (*QUEUE_FIELDS, "fact_groups") if facts else QUEUE_FIELDS
    return rows.values(*fields, count=F("live"), max_active=F("live") - F("overage")).order_by(
        "host_name", "namespace", "subject"
    )


def entity_text_filter(rows: QuerySet[EntityCount], text: str) -> QuerySet[EntityCount]:
    """``rows`` whose search ``document`` (host, namespace, subject, live members' texts) contains
    ``text``, case-insensitively: the document is stored in lower case (``search_lower``) and ``text`` is
    lowered the same way; SQLite's FTS5 trigram table, PostgreSQL's pg_trgm GIN index (``LIKE``, which
    reads a document several times faster than ``ILIKE``); shorter than ``TRIGRAM`` characters, or on
    another database, a LIKE over ``rows``. The document is filled only while over budget, so only piles
    match."""
    vendor = connection.vendor
    text = search_lower(text)
    if len(text) < TRIGRAM or vendor not in ("sqlite", "postgresql"):
        return rows.filter(document__contains=text)
    if vendor == "sqlite":
        phrase = '"' + text.replace('"', '""') + '"'
        matching = RawSQL(f"SELECT rowid FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s", [phrase])
        return rows.filter(id__in=matching)
    pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    table = connection.ops.quote_name(EntityCount._meta.db_table)
    return rows.alias(
        matches=RawSQL(f"{table}.document LIKE %s", [pattern], output_field=BooleanField())
    ).filter(matches=True)


def entity_lessons(*, host: Host, namespace: str, subject: str) -> QuerySet[Lesson]:
    """Every lesson of an entity (all statuses), oldest first, with recurrence counts joined."""
    return (
        Lesson.objects.filter(host=host, namespace=namespace, subject=subject)
        .select_related("recurrence")
        .order_by("created_at", "hash")
    )


def pile_version(lessons: list[Lesson]) -> str:
    """The version a pile action carries: a digest of every lesson's hash and status on the entity
    (``lessons``: anything with ``.hash`` and ``.status``, model instances or named rows).

    Any retire, restore, approval or import that changes a status changes it. docs/decisions.md,
    "Stale views are refused, not merged".
    """
    digest = hashlib.sha256()
    for lesson in sorted(lessons, key=lambda x: x.hash):
        digest.update(f"{lesson.hash}:{lesson.status}\n".encode())
    return digest.hexdigest()[:16]


def to_member(lesson: Lesson | PileLesson) -> PileMember:
    """The rules' view of a lesson (a model instance or a ``PileLesson``): ``created_at`` in epoch ms."""
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


class PileLesson(NamedTuple):
    """A live member of a pile as the piles JSON and the ``piles`` command read it, straight from its row
    (no model instance): ``created_at`` an aware datetime (UTC), ``status`` always live, ``recurrence``
    the seven counts in spec order (zeros before any analysis, as ``recurrence_dict`` gives them)."""

    hash: str
    lesson_id: str | None
    store: str | None
    kind: str
    text: str
    created_at: datetime
    status: str
    latest_verdict: str | None
    recurrence: dict[str, int]


# What a chunk's member query reads: the entity key, then PileLesson's columns but the recurrence counts,
# then the counts (a LEFT JOIN on the stored count row: None when the lesson has none).
_KEY_FIELDS = ("host_id", "namespace", "subject")
_MEMBER_FIELDS = (
    *_KEY_FIELDS,
    *(f for f in PileLesson._fields if f != "recurrence"),
    *(f"recurrence__{f}" for f in COUNT_FIELDS),
)


@dataclass(frozen=True)
class EntityPile:
    """A pile with its rows: ``pile`` (the rules' view), the live ``lessons`` in order, ``drafts``, and its
    ``facts`` (``lessons.core.facts``; the stored ones; ``None``: computed when serialized)."""

    host: Host
    pile: Pile
    lessons: tuple[PileLesson, ...]
    drafts: tuple[Draft, ...]
    live_hashes: frozenset[str]
    facts: tuple[Fact, ...] | None = None


# Entities whose members and drafts are read with one query each: a bound on every query's size (the
# old single OR-ed condition per pile broke SQLite from ~990 piles: "Expression tree is too large").
PILE_CHUNK = 100
PileKey = tuple[str, str, str]  # (host name, namespace, subject): the order of the JSON and the keyset


def _queue_in_key_order(*, host: str | None, after: PileKey | None) -> QuerySet:
    """``pile_queue`` rows sorted by host name, namespace, subject, starting after the key ``after``."""
    # The stored facts come with the row (lessons.core.facts): the JSON reads them, it does not regroup.
    rows = pile_queue(host=host, facts=True).order_by("host_name", "namespace", "subject")
    if after is not None:
        h, n, s = after
        rows = rows.filter(
            Q(host_name__gt=h) | Q(host_name=h, namespace__gt=n) | Q(host_name=h, namespace=n, subject__gt=s)
        )
    return rows


def _entity_rows(model, chunk: list[dict], **within) -> QuerySet:
    """Rows of ``model`` (``Lesson`` or ``Draft``) that may belong to the entities of ``chunk``: per host,
    its namespaces and subjects (one condition per host of the chunk, each an index seek on host,
    namespace, subject); the caller keeps the exact (namespace, subject) pairs. ``within`` (a lesson's
    ``status``) joins each host's condition, so the seek covers it too: ANDed outside the OR, SQLite's
    planner read every live lesson through the status index for a chunk of many hosts."""
    namespaces: dict[int, set[str]] = defaultdict(set)
    subjects: dict[int, set[str]] = defaultdict(set)
    for row in chunk:
        namespaces[row["host_id"]].add(row["namespace"])
        subjects[row["host_id"]].add(row["subject"])
    where = Q()
    for host_id, names in subjects.items():
        where |= Q(
            host_id=host_id, namespace__in=sorted(namespaces[host_id]), subject__in=sorted(names), **within
        )
    return model.objects.filter(where)


def _chunk_piles(chunk: list[dict], hosts: dict[int, Host]) -> list[EntityPile]:
    """The piles of one chunk of ``pile_queue`` rows, in the chunk's order: two queries (members, drafts),
    plus one for hosts not met yet (``hosts`` is the cache, filled here)."""
    missing = {r["host_id"] for r in chunk} - hosts.keys()
    if missing:
        hosts.update((h.id, h) for h in Host.objects.filter(id__in=missing))
    wanted = {(r["host_id"], r["namespace"], r["subject"]) for r in chunk}
    members: dict[tuple, list[PileLesson]] = defaultdict(list)
    lessons = _entity_rows(Lesson, chunk, status=Lesson.Status.LIVE).order_by("created_at", "hash")
    keyed, counted = len(_KEY_FIELDS), len(_MEMBER_FIELDS) - len(COUNT_FIELDS)
    for row in lessons.values_list(*_MEMBER_FIELDS):
        key = row[:keyed]
        if key in wanted:
            counts = row[counted:]
            recurrence = dict(zip(COUNT_FIELDS, counts if counts[0] is not None else _NO_COUNTS, strict=True))
            members[key].append(PileLesson(*row[keyed:counted], recurrence))
    drafts: dict[tuple, list[Draft]] = defaultdict(list)
    for draft in _entity_rows(Draft, chunk).order_by("created_at", "ext_id"):
        key = (draft.host_id, draft.namespace, draft.subject)
        if key in wanted:
            drafts[key].append(draft)
    result = []
    for row in chunk:
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
        live = frozenset(m.hash for m in members[key])
        result.append(
            EntityPile(
                host=host_obj,
                pile=pile,
                lessons=tuple(members[key]),
                drafts=tuple(drafts[key]),
                live_hashes=live,
                facts=_stored_facts(row, pile, members[key], live),
            )
        )
    return result


def _stored_facts(row: dict, pile: Pile, lessons: list[PileLesson], live: frozenset[str]) -> tuple[Fact, ...]:
    """The facts stored with a queue row, when they are of this ``FACTS_VERSION`` and of exactly these
    live members; else computed now over the entity's lessons (any status), with their stored text
    vectors and the host's marks (``lessons.selectors.facts.compute_facts``, three more queries: the
    row changed between the two reads, the method changed and ``piles --regroup`` has not run, or a
    bulk ingest left the pile to the background regroup). When the lessons changed again since the
    members were read, the facts of those members alone (so every member is in one fact)."""
    if row.get("facts_version") == FACTS_VERSION:
        facts = tuple(Fact.from_dict(f) for f in row.get("fact_groups") or ())
        if _cover(facts, live):
            return facts
    facts = compute_facts(host_id=row["host_id"], namespace=pile.namespace, subject=pile.subject)
    if _cover(facts, live):
        return facts
    texts = {m.hash: m.text for m in lessons}
    vectors_stored(texts.values())  # encode only what was never stored
    return pile_facts(members=pile.members, texts=texts, marks=host_marks(host=row["host_id"]))


def _cover(facts: tuple[Fact, ...], live: frozenset[str]) -> bool:
    """Whether ``facts`` hold each of ``live`` once, and nothing else."""
    return {h for f in facts for h in f.members} == live and sum(len(f.members) for f in facts) == len(live)


def _chunks(rows: Iterator[dict], size: int) -> Iterator[list[dict]]:
    chunk: list[dict] = []
    for row in rows:
        chunk.append(row)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk


def iter_piles(*, host: str | None = None) -> Iterator[EntityPile]:
    """Every pile, sorted by host, namespace, subject; members oldest first (docs/piles-and-recurrence.md,
    "Piles", rule 5).

    A generator with flat memory: the queue's rows are read with a database iterator, and members and
    drafts for each ``PILE_CHUNK`` entities (no query grows with the number of piles). For a few piles:
    four queries (queue rows, hosts, members, drafts); then two more per chunk and one per host first
    met. docs/piles-and-recurrence.md, "Piles".
    """
    hosts: dict[int, Host] = {}
    rows = _queue_in_key_order(host=host, after=None).iterator(chunk_size=PILE_CHUNK)
    for chunk in _chunks(rows, PILE_CHUNK):
        yield from _chunk_piles(chunk, hosts)


def piles_list(*, host: str | None = None) -> list[EntityPile]:
    """``iter_piles`` as a list (every pile held at once: for pages and tests, not for the whole set)."""
    return list(iter_piles(host=host))


def piles_page(
    *, host: str | None = None, after: PileKey | None = None, limit: int
) -> tuple[list[EntityPile], PileKey | None]:
    """Up to ``limit`` piles after the key ``after`` (None: from the first), sorted as ``iter_piles``.

    Returns ``(piles, next_key)``: ``next_key`` is the key of the last entity read when more follow, else
    None. A keyset page: its cost does not grow with how far it is, and a pile written or retired meanwhile
    never shifts the next page. ``limit`` is 1.. (the API bounds it). docs/piles-and-recurrence.md ("How the
    piles JSON is built").
    """
    rows = list(_queue_in_key_order(host=host, after=after)[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    hosts: dict[int, Host] = {}
    piles = [p for chunk in _chunks(iter(rows), PILE_CHUNK) for p in _chunk_piles(chunk, hosts)]
    last = rows[-1] if rows else None
    next_key = (last["host_name"], last["namespace"], last["subject"]) if more and last else None
    return piles, next_key


def piles_json(*, host: str | None = None) -> dict:
    """``{"piles": [...]}``, every pile held at once (``manage.py piles --format json`` streams the same
    bytes with ``write_piles_json``)."""
    return {"piles": [pile_as_json(p) for p in iter_piles(host=host)]}


def write_piles_json(write: Callable[[str], object], piles: Iterable[EntityPile]) -> int:
    """Write ``{"piles": [...]}`` through ``write`` one pile at a time, byte for byte as
    ``json.dumps(piles_json(...), indent=2, ensure_ascii=False)`` (no final newline); returns the number
    of piles. Memory holds one pile's JSON at a time. docs/piles-and-recurrence.md ("How the piles JSON is
    built"); issue 10."""
    n = 0
    for entity in piles:
        body = pile_json_text(pile_as_json(entity)).replace("\n", "\n    ")
        write(('{\n  "piles": [\n    ' if n == 0 else ",\n    ") + body)
        n += 1
    write("\n  ]\n}" if n else '{\n  "piles": []\n}')
    return n


def pile_json_text(pile: dict) -> str:
    """``json.dumps(pile, indent=2, ensure_ascii=False)`` for a ``pile_as_json`` dict, the same string,
    through orjson (a C-speed encoder; Python's json has none for ``indent``) where its bytes are the
    same: strings (UTF-8, the same escapes), ints of 64 bits, None, booleans, key order and indentation
    agree; floats only where orjson writes them as ``repr`` does (it writes ``1e-05`` as ``0.00001`` and
    NaN as ``null``). The only floats of a pile are its drafts' ``confidence``; any other pile (such a
    float, an int beyond 64 bits, a lone surrogate) goes through ``json.dumps`` itself."""
    if all(_float_as_repr(draft["confidence"]) for draft in pile["drafts"]):
        try:
            return orjson.dumps(pile, option=orjson.OPT_INDENT_2).decode()
        except orjson.JSONEncodeError:  # an int beyond 64 bits, a lone surrogate
            pass
    return json.dumps(pile, indent=2, ensure_ascii=False)


def _float_as_repr(value: object) -> bool:
    """Whether orjson writes ``value`` as ``json.dumps`` does: anything but a float, or a float that
    orjson writes as its ``repr`` (so never NaN or an infinity)."""
    return not isinstance(value, float) or orjson.dumps(value) == repr(value).encode()
