"""Keeping the per-entity counts (``EntityCount``) and per-host totals (``HostCount``) current.

Every writer that moves a count calls ``entity_counts_refresh`` with the entity keys it touched, in its
own transaction and under the locks it already holds (then the host's ``HostCount`` row, always last):
ingest once per batch (``CountChanges``), the status service, draft decisions, verdicts, recurrence.
A budget change calls ``entity_counts_budget_changed``. ``entity_counts_recount`` rebuilds the rows
from the lessons (``manage.py piles --recount``, after a restore from a backup); ``entity_counts_check``
recounts into memory and lists every difference (``manage.py piles --check``).

The refresh reads its entities ``ENTITY_CHUNK`` subjects at a time (host + ``subject IN``, then the
exact keys in Python), so no query grows with the number of keys. The recount and the check count in
SQL, independently of the refresh's Python tally, so a check also catches a refresh that counts wrong.
docs/piles-and-recurrence.md, "Piles", rules 2-5 (what a pile is and counts); docs/piles-and-recurrence.md
("The seven counts").
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import NamedTuple

from django.db import connection, transaction
from django.db.models import Case, F, Q, Value, When
from django.utils.dateparse import parse_datetime

from lessons.core.embedding import cached
from lessons.core.facts import FACTS_PENDING, FACTS_VERSION, Mark, fact_counts, grouped, pile_facts
from lessons.core.piles import is_over_budget
from lessons.core.recurrence import RECURRING_MIN_SESSIONS
from lessons.core.text import search_lower, to_ms
from lessons.core.verdicts import VERDICT_MIX
from lessons.models import Draft, EntityCount, Host, HostCount, Lesson, RecurrenceCount
from lessons.selectors.embeddings import vectors_stored
from lessons.selectors.facts import host_marks
from lessons.services.embeddings import defer_pile, deferring, embeddings_load

# The columns of each lesson the facts are grouped over (lessons.core.facts.grouped_over), after its
# namespace, subject and status.
GROUPED_COLUMNS = ("hash", "created_at", "latest_verdict", "text", "kind", "consolidates")
ENTITY_CHUNK = 400  # subjects per IN (...): well under SQLite's 999 parameters with the other terms
WRITE_BATCH = 500
EntityKey = tuple[str, str]  # (namespace, subject)
MIX = VERDICT_MIX
# The stored fields besides the entity's key, in the model's order (the recount's SELECT gives them so).
COUNT_FIELDS = tuple(
    f.name
    for f in EntityCount._meta.concrete_fields
    if f.name not in ("id", "host", "host_name", "namespace", "subject")
)
TOTAL_FIELDS = ("live_lessons", "entity_count", "pile_count")
DIFFERENCE = "host {host} entity {namespace}/{subject}: {field} is {stored}, recounted {expected}"
TOTAL_DIFFERENCE = "host {host} totals: {field} is {stored}, recounted {expected}"


@dataclass
class CountChanges:
    """What one transaction touched, for ONE refresh at its end: ``entities`` per host id, and ``hosts``
    to recount whole (a recurrence recompute moves every member's counts)."""

    entities: dict[int, set[EntityKey]] = field(default_factory=lambda: defaultdict(set))
    hosts: set[int] = field(default_factory=set)

    def add(self, host_id: int, namespace: str, subject: str) -> None:
        self.entities[host_id].add((namespace, subject))

    def add_lessons(self, lessons: Iterable[Lesson]) -> None:
        for lesson in lessons:
            self.entities[lesson.host_id].add((lesson.namespace, lesson.subject))

    def update(self, other: CountChanges) -> None:
        for host_id, keys in other.entities.items():
            self.entities[host_id] |= keys
        self.hosts |= other.hosts

    def clear(self) -> None:
        self.entities.clear()
        self.hosts.clear()

    def apply(self) -> int:
        """Recount the noted hosts and refresh the noted entities of the others, hosts in id order (the
        order of the host locks); then clear. Returns the rows written."""
        written = 0
        for host_id in sorted(self.hosts | set(self.entities)):
            if host_id in self.hosts:
                written += entity_counts_recount(host=Host.objects.get(id=host_id)).entities
            elif self.entities[host_id]:
                written += entity_counts_refresh(host=host_id, keys=self.entities[host_id])
        self.clear()
        return written


@dataclass(frozen=True)
class _Budget:
    id: int
    name: str
    max_active: int
    budget_enabled: bool


def _lock_totals(host_id: int) -> _Budget:
    """Take the host's ``HostCount`` row FOR UPDATE (created empty when missing) and read its budget with
    it (one query when the row exists).

    The budget is read under the lock: a budget change holds the same row until it commits, so the
    budget read here is the one the rows are counted against.
    """
    locked = HostCount.objects.select_for_update(of=("self",)).select_related("host").filter(host_id=host_id)
    row = locked.first()
    if row is None:
        HostCount.objects.bulk_create([HostCount(host_id=host_id)], ignore_conflicts=True)
        row = locked.get()
    return _Budget(host_id, row.host.name, row.host.max_active, row.host.budget_enabled)


def _chunks(items: list, size: int) -> Iterator[list]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _subject_chunks(keys: Iterable[EntityKey]) -> Iterator[tuple[list[str], set[EntityKey]]]:
    """``(subjects, keys)`` pairs: up to ``ENTITY_CHUNK`` subjects and the wanted keys with them."""
    by_subject: dict[str, set[EntityKey]] = defaultdict(set)
    for key in keys:
        by_subject[key[1]].add(key)
    for subjects in _chunks(sorted(by_subject), ENTITY_CHUNK):
        yield subjects, set().union(*(by_subject[s] for s in subjects))


def _blank() -> dict:
    return {f: 0 for f in COUNT_FIELDS} | {"oldest": None, "over_budget": False} | NO_EXTRAS._asdict()


def _finish(row: dict, budget: _Budget) -> dict:
    """Derive ``other``, ``over_budget`` and ``overage`` from the tallies (docs/piles-and-recurrence.md,
    "Piles" rules 3-4)."""
    row["other"] = row["live"] - sum(row[m] for m in MIX) - row["not_applied"]
    over = is_over_budget(
        live_count=row["live"], max_active=budget.max_active, budget_enabled=budget.budget_enabled
    )
    row["over_budget"] = over
    row["overage"] = row["live"] - budget.max_active if over else 0
    return row


def _pile_extras(
    budget: _Budget, keys: Iterable[EntityKey], *, store: bool = True
) -> dict[EntityKey, Extras]:
    """``{key: Extras}`` of over-budget entities: the facts of the live members, grouped over the
    entity's lessons whatever their status (``lessons.core.facts``, ``grouped_over``, with the host's marks),
    and the text-search document (host, namespace, subject, live texts in rule-5 order, one a line).
    ``store``: the members' text vectors encoded are stored (``embeddings_load``); else only read
    (``entity_counts_check`` writes nothing)."""
    members: dict[EntityKey, list[tuple]] = defaultdict(list)
    for subjects, wanted in _subject_chunks(keys):
        rows = Lesson.objects.filter(host_id=budget.id, subject__in=subjects)
        for (
            namespace,
            subject,
            status,
            digest,
            created_at,
            verdict,
            text,
            kind,
            consolidates,
        ) in rows.values_list("namespace", "subject", "status", *GROUPED_COLUMNS):
            if (namespace, subject) in wanted:
                members[(namespace, subject)].append(
                    (to_ms(created_at), digest, verdict, text, status, kind, consolidates)
                )
    marks = _Marks(budget.id)
    texts = (row[3] for found in members.values() for row in found)
    embeddings_load(texts) if store else vectors_stored(texts)
    return {key: _extras(budget, key, found, marks) for key, found in members.items()}


class Extras(NamedTuple):
    """What an over-budget entity stores beyond its counts (``EntityCount``'s fields of these names)."""

    groups: int
    document: str
    facts: int
    restatements: int
    fact_groups: list[dict]
    facts_version: int


# A not-over-budget entity's extras: none.
NO_EXTRAS = Extras(0, "", 0, 0, [], 0)
# The check does not compare these fields of a pile left not grouped yet (FACTS_PENDING).
FACT_FIELDS = frozenset({"groups", "facts", "restatements", "fact_groups", "facts_version"})


class _Marks:
    """The host's restatement marks, read once (one query) when a pile first needs them."""

    def __init__(self, host_id: int) -> None:
        self.host_id = host_id
        self._marks: list[Mark] | None = None

    def get(self) -> list[Mark]:
        if self._marks is None:
            self._marks = host_marks(host=self.host_id)
        return self._marks


def _extras(budget: _Budget, key: EntityKey, found: list[tuple], marks: _Marks) -> Extras:
    """``Extras`` of one pile from its lessons, any status, ``(created_at_ms, hash, verdict, text,
    status, kind, consolidates)`` (the facts are grouped over ``grouped`` of them, the document is
    of the live ones); within ``facts_deferred``, a pile with a text not encoded yet gets no facts
    (``FACTS_PENDING``) and is noted for the background regroup."""
    found = sorted(found)
    # Lower case, as the text filter lowers its words: PostgreSQL then matches with LIKE, which reads a
    # document several times faster than ILIKE (lessons.selectors.piles.entity_text_filter).
    live = [t for _ms, _h, _v, t, status, *_rest in found if status == Lesson.Status.LIVE]
    document = search_lower("\n".join([budget.name, key[0], key[1], *live]))
    members, texts, consolidated = grouped(found)
    if deferring() and len(cached(set(texts.values()))) < len(set(texts.values())):
        defer_pile(budget.id, key[0], key[1])
        return Extras(0, document, 0, 0, [], FACTS_PENDING)
    facts = pile_facts(members=members, texts=texts, marks=marks.get(), consolidated=consolidated)
    distinct, restatements = fact_counts(facts)
    return Extras(len(facts), document, distinct, restatements, [f.as_dict() for f in facts], FACTS_VERSION)


def _tally(budget: _Budget, subjects: list[str], wanted: set[EntityKey]) -> dict[EntityKey, dict]:
    """The counts of the ``wanted`` entities that have a lesson (any status), from their lessons, with
    the ``Extras`` filled for those over budget. Two queries (lessons, pending drafts)."""
    rows: dict[EntityKey, dict] = {}
    members: dict[EntityKey, list[tuple]] = defaultdict(list)
    lessons = Lesson.objects.filter(host_id=budget.id, subject__in=subjects)
    columns = (
        "namespace",
        "subject",
        "status",
        "latest_verdict",
        "created_at",
        "recurrence__recurred_sessions",
    )
    for (
        namespace,
        subject,
        status,
        verdict,
        created_at,
        recurred,
        digest,
        text,
        kind,
        of,
    ) in lessons.values_list(*columns, "hash", "text", "kind", "consolidates"):
        key = (namespace, subject)
        if key not in wanted:
            continue
        row = rows.get(key) or rows.setdefault(key, _blank())
        row["total"] += 1
        # Every lesson's text: the facts are grouped over them all (lessons.core.facts.grouped_over).
        members[key].append((to_ms(created_at), digest, verdict, text, status, kind, of))
        if status != Lesson.Status.LIVE:
            continue
        row["live"] += 1
        if verdict in MIX:
            row[verdict] += 1
        elif verdict is None:
            row["not_applied"] += 1
        if recurred is not None and recurred >= RECURRING_MIN_SESSIONS:
            row["recurring"] += 1
        if row["oldest"] is None or created_at < row["oldest"]:
            row["oldest"] = created_at
    drafts = Draft.objects.filter(host_id=budget.id, subject__in=subjects, status=Draft.Status.PENDING)
    for key in drafts.values_list("namespace", "subject"):
        if key in rows:
            rows[key]["pending_drafts"] += 1
    marks = _Marks(budget.id)
    for row in rows.values():
        _finish(row, budget)
    piles = [key for key, row in rows.items() if row["over_budget"]]
    embeddings_load(row[3] for key in piles for row in members[key])
    for key in piles:
        rows[key].update(_extras(budget, key, members[key], marks)._asdict())
    return rows


def entity_counts_refresh(*, host: Host | int, keys: Iterable[EntityKey]) -> int:
    """Recompute the ``EntityCount`` rows of ``keys`` (``(namespace, subject)`` pairs of ``host``) from
    their lessons and drafts, and move the host's ``HostCount`` totals by the difference.

    Runs in the caller's transaction (its own when there is none); takes the ``HostCount`` row lock. An
    entity without any lesson has no row (a stale one is deleted). Queries: a few per ``ENTITY_CHUNK``
    subjects, whatever the number of lessons. Returns how many rows were written.
    docs/piles-and-recurrence.md, "Piles", rules 2-5.
    """
    host_id = host if isinstance(host, int) else host.id
    keys = set(keys)
    if not keys:
        return 0
    written = 0
    # No savepoint of its own: a failure here fails the caller's transaction, which is atomic with it.
    with transaction.atomic(savepoint=False):
        budget = _lock_totals(host_id)
        delta = dict.fromkeys(TOTAL_FIELDS, 0)
        for subjects, wanted in _subject_chunks(keys):
            rows = _tally(budget, subjects, wanted)
            stored = EntityCount.objects.filter(host_id=host_id, subject__in=subjects)
            old = {
                (ns, subj): (live, over)
                for ns, subj, live, over in stored.values_list("namespace", "subject", "live", "over_budget")
                if (ns, subj) in wanted
            }
            for live, over in old.values():
                _count_into(delta, live, over, sign=-1)
            for row in rows.values():
                _count_into(delta, row["live"], row["over_budget"], sign=1)
            gone = [key for key in old if key not in rows]
            for key in gone:
                EntityCount.objects.filter(host_id=host_id, namespace=key[0], subject=key[1]).delete()
            EntityCount.objects.bulk_create(
                [
                    EntityCount(host_id=host_id, host_name=budget.name, namespace=k[0], subject=k[1], **r)
                    for k, r in sorted(rows.items())
                ],
                batch_size=WRITE_BATCH,
                update_conflicts=True,
                unique_fields=["host", "namespace", "subject"],
                update_fields=list(COUNT_FIELDS),
            )
            written += len(rows)
        if any(delta.values()):
            HostCount.objects.filter(host_id=host_id).update(**{f: F(f) + d for f, d in delta.items()})
    return written


def _count_into(totals: dict, live: int, over: bool, *, sign: int) -> None:
    totals["live_lessons"] += sign * live
    totals["entity_count"] += sign * (live > 0)
    totals["pile_count"] += sign * bool(over)


def entity_counts_for_lessons(lessons: Iterable[Lesson]) -> int:
    """``entity_counts_refresh`` for the entities of ``lessons`` (any hosts, host id order)."""
    changes = CountChanges()
    changes.add_lessons(lessons)
    return changes.apply()


def entity_counts_budget_changed(*, host: Host) -> int:
    """After ``host``'s ``max_active`` or ``budget_enabled`` changed (already saved, same transaction):
    every row's ``over_budget`` and ``overage`` in one UPDATE; the entities that crossed the budget get
    their groups and search document (or lose them); the pile total follows. Returns the crossings.
    docs/piles-and-recurrence.md, "Piles", rules 3-4; docs/decisions.md.
    """
    with transaction.atomic(savepoint=False):
        budget = _lock_totals(host.id)
        rows = EntityCount.objects.filter(host_id=host.id)
        m = budget.max_active
        if budget.budget_enabled:
            crossing = rows.filter(Q(over_budget=False, live__gt=m) | Q(over_budget=True, live__lte=m))
            over = Case(When(live__gt=m, then=Value(True)), default=Value(False))
            overage = Case(When(live__gt=m, then=F("live") - m), default=Value(0))
        else:
            crossing = rows.filter(over_budget=True)
            over, overage = Value(False), Value(0)
        flipped = list(crossing.values_list("id", "namespace", "subject", "over_budget"))
        rows.update(over_budget=over, overage=overage)
        into = sum(1 for *_k, was in flipped if not was)
        HostCount.objects.filter(host_id=host.id).update(
            pile_count=F("pile_count") + into - (len(flipped) - into)
        )
        for chunk in _chunks(flipped, WRITE_BATCH):
            extras = _pile_extras(budget, [(ns, subj) for _pk, ns, subj, was in chunk if not was])
            _write_extras([(pk, extras.get((ns, subj), NO_EXTRAS)) for pk, ns, subj, _was in chunk])
    return len(flipped)


# --- recount and check ---------------------------------------------------------------------------


def _write_extras(rows: list[tuple[int, Extras]]) -> None:
    """Set the ``Extras`` fields of ``EntityCount`` rows, given as ``(id, extras)``: one ``executemany``
    UPDATE (``bulk_update``'s CASE per row cost more to build than to run)."""
    if not rows:
        return
    quote = connection.ops.quote_name
    meta = EntityCount._meta
    columns = ", ".join(f"{quote(meta.get_field(name).column)} = %s" for name in Extras._fields)
    json_field = meta.get_field("fact_groups")
    at = Extras._fields.index("fact_groups")
    sql = f"UPDATE {_table(EntityCount)} SET {columns} WHERE {quote(meta.get_field('id').column)} = %s"
    params = []
    for pk, extras in rows:
        values = list(extras)
        values[at] = json_field.get_db_prep_save(values[at], connection)
        params.append((*values, pk))
    with connection.cursor() as cursor:
        cursor.executemany(sql, params)


def _table(model) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _aggregate_sql(host_id: int | None) -> tuple[str, list]:
    """SELECT the counts of every entity with a lesson (of one host, or all), columns in
    ``_AGGREGATE_COLUMNS`` order (the model's: ``total`` after ``document``); the ``Extras`` fields come
    out empty (0, "", '[]')."""
    live = "l.status = 'live'"
    where, params = ("WHERE l.host_id = %s", [host_id]) if host_id is not None else ("", [])
    mix = ", ".join(
        f"SUM(CASE WHEN {live} AND l.latest_verdict = '{m}' THEN 1 ELSE 0 END) AS {m}" for m in MIX
    )
    inner = f"""
        SELECT l.host_id AS host_id, h.name AS host_name, h.max_active AS max_active,
               h.budget_enabled AS budget_enabled, l.namespace AS namespace, l.subject AS subject,
               SUM(CASE WHEN {live} THEN 1 ELSE 0 END) AS live, {mix},
               SUM(CASE WHEN {live} AND l.latest_verdict IS NULL THEN 1 ELSE 0 END) AS not_applied,
               SUM(CASE WHEN {live} AND rc.recurred_sessions >= {int(RECURRING_MIN_SESSIONS)}
                   THEN 1 ELSE 0 END) AS recurring,
               MIN(CASE WHEN {live} THEN l.created_at END) AS oldest, COUNT(*) AS total
        FROM {_table(Lesson)} l
        JOIN {_table(Host)} h ON h.id = l.host_id
        LEFT JOIN {_table(RecurrenceCount)} rc ON rc.lesson_id = l.id
        {where}
        GROUP BY l.host_id, h.name, h.max_active, h.budget_enabled, l.namespace, l.subject
    """
    drafts = f"""
        SELECT host_id, namespace, subject, COUNT(*) AS n FROM {_table(Draft)}
        WHERE status = 'pending' {"AND host_id = %s" if host_id is not None else ""}
        GROUP BY host_id, namespace, subject
    """
    over = "a.budget_enabled AND a.live > a.max_active"
    sql = f"""
        SELECT a.host_id, a.host_name, a.namespace, a.subject, a.live, a.held, a.regressed, a.drifted,
               a.live - a.held - a.regressed - a.drifted - a.not_applied, a.not_applied, a.recurring,
               COALESCE(d.n, 0), a.oldest,
               CASE WHEN {over} THEN TRUE ELSE FALSE END,
               CASE WHEN {over} THEN a.live - a.max_active ELSE 0 END, 0, '', a.total, 0, 0, '[]', 0
        FROM ({inner}) a
        LEFT JOIN ({drafts}) d
          ON d.host_id = a.host_id AND d.namespace = a.namespace AND d.subject = a.subject
    """
    return sql, params * 2


_AGGREGATE_COLUMNS = ("host", "host_name", "namespace", "subject", *COUNT_FIELDS)


@dataclass
class RecountStats:
    """What a recount wrote: ``entities`` rows, of which ``piles`` over budget, on ``hosts`` hosts."""

    hosts: int = 0
    entities: int = 0
    piles: int = 0


def entity_counts_recount(*, host: Host | None = None) -> RecountStats:
    """Rebuild ``EntityCount`` and ``HostCount`` from the lessons (one host, or every host), in one
    transaction: one INSERT … SELECT for the counts, then the groups and search documents of the piles
    (a few queries per ``ENTITY_CHUNK`` piles), then the totals. Locks each host's ``HostCount`` row.
    Returns ``RecountStats``. docs/piles-and-recurrence.md, "Piles", rules 2-5.
    """
    host_ids = [host.id] if host else list(Host.objects.order_by("id").values_list("id", flat=True))
    stats = RecountStats()
    with transaction.atomic():
        budgets = [_lock_totals(host_id) for host_id in host_ids]
        scoped = EntityCount.objects.all() if host is None else EntityCount.objects.filter(host=host)
        scoped.delete()
        columns = ", ".join(
            connection.ops.quote_name(EntityCount._meta.get_field(name).column) for name in _AGGREGATE_COLUMNS
        )
        sql, params = _aggregate_sql(host.id if host else None)
        with connection.cursor() as cursor:
            cursor.execute(f"INSERT INTO {_table(EntityCount)} ({columns}) {sql}", params)
        for budget in budgets:
            piles = list(
                EntityCount.objects.filter(host_id=budget.id, over_budget=True).values_list(
                    "namespace", "subject"
                )
            )
            for chunk in _chunks(piles, WRITE_BATCH):
                extras = _pile_extras(budget, chunk)
                _write_extras(
                    [
                        (pk, extras[(ns, subj)])
                        for pk, ns, subj in EntityCount.objects.filter(
                            host_id=budget.id, over_budget=True, subject__in={s for _n, s in chunk}
                        ).values_list("id", "namespace", "subject")
                        if (ns, subj) in extras
                    ]
                )
            stats.piles += len(piles)
            totals = _totals(EntityCount.objects.filter(host_id=budget.id).values_list("live", "over_budget"))
            HostCount.objects.filter(host_id=budget.id).update(**totals)
            stats.hosts += 1
        stats.entities = scoped.count()
    return stats


def _totals(rows: Iterable[tuple[int, bool]]) -> dict[str, int]:
    totals = dict.fromkeys(TOTAL_FIELDS, 0)
    for live, over in rows:
        _count_into(totals, live, over, sign=1)
    return totals


def _as_datetime(value) -> datetime | None:
    """A MIN(created_at) as the database returned it (SQLite: text) as an aware UTC datetime."""
    if value is None or isinstance(value, datetime):
        return value if value is None or value.tzinfo else value.replace(tzinfo=UTC)
    parsed = parse_datetime(value)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _shown(row: dict | None, name: str) -> str:
    if row is None:
        return "missing"
    value = row[name]
    return repr(value[:40] + ("…" if len(value) > 40 else "")) if isinstance(value, str) else str(value)


def entity_counts_check(*, host: Host | None = None) -> list[str]:
    """Recount in memory (one host, or all) and compare with the stored rows: one line per difference
    (``DIFFERENCE`` / ``TOTAL_DIFFERENCE``, sorted by host, entity, field); empty when they agree.
    Reads one host at a time. Writes nothing. A pile a bulk ingest left not grouped yet
    (``FACTS_PENDING``) is compared without its facts. README.md, "Commands" (``piles --check``).
    """
    hosts = Host.objects.order_by("name") if host is None else [host]
    lines: list[str] = []
    for h in hosts:
        budget = _Budget(h.id, h.name, h.max_active, h.budget_enabled)
        sql, params = _aggregate_sql(h.id)
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            found = cursor.fetchall()
        expected: dict[EntityKey, dict] = {}
        for values in found:
            row = dict(zip(COUNT_FIELDS, values[4:], strict=True))
            row["oldest"] = _as_datetime(row["oldest"])
            row["over_budget"] = bool(row["over_budget"])
            row["fact_groups"] = []  # the SELECT's '[]' (text): only a pile has facts
            expected[(values[2], values[3])] = row
        extras = _pile_extras(budget, [k for k, r in expected.items() if r["over_budget"]], store=False)
        for key, found in extras.items():
            expected[key].update(found._asdict())
        stored = {
            (r["namespace"], r["subject"]): r
            for r in EntityCount.objects.filter(host_id=h.id).values("namespace", "subject", *COUNT_FIELDS)
        }
        for key in sorted(set(expected) | set(stored)):
            want, have = expected.get(key), stored.get(key)
            pending = have is not None and have["over_budget"] and have["facts_version"] == FACTS_PENDING
            for name in COUNT_FIELDS:
                if pending and name in FACT_FIELDS:
                    continue  # left to the background regroup: not grouped yet, not wrong
                w = None if want is None else want[name]
                v = None if have is None else have[name]
                if w != v:
                    lines.append(
                        DIFFERENCE.format(
                            host=h.name,
                            namespace=key[0],
                            subject=key[1],
                            field=name,
                            stored=_shown(have, name),
                            expected=_shown(want, name),
                        )
                    )
        want_totals = _totals((r["live"], r["over_budget"]) for r in expected.values())
        have_row = HostCount.objects.filter(host_id=h.id).values(*TOTAL_FIELDS).first()
        have_totals = have_row or dict.fromkeys(TOTAL_FIELDS, 0)
        for name in TOTAL_FIELDS:
            if want_totals[name] != have_totals[name]:
                lines.append(
                    TOTAL_DIFFERENCE.format(
                        host=h.name, field=name, stored=have_totals[name], expected=want_totals[name]
                    )
                )
    return lines
