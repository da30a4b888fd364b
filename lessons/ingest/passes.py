"""Ingesting interchange records into the database. spec: interchange.md; cli.md (``ingest``).

Three streaming passes over the sources, inside one transaction:
1. validate every line; write ``host`` records; note each line's kind (one byte a line);
2. write ``lesson`` records (in chunks), parsing only the lines pass 1 found to be lessons;
3. write ``verdict``, ``exposure``, ``correction`` and ``draft`` records, resolving their lesson
   references against the batch (already written in pass 2) and the database.
So each line is parsed at most twice. A batch is atomic: any invalid line rolls everything back unless
``skip_invalid``; ``dry_run`` always rolls back; with ``only_host``, a record of another host refuses
the whole batch. Memory stays bounded by the chunk size plus one byte per line, not the input size.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from django.db import transaction

from lessons.core.interchange import (
    CorrectionRecord,
    DraftRecord,
    ExposureRecord,
    HostRecord,
    LessonRecord,
    Record,
    RecordError,
    VerdictRecord,
    parse_line,
)
from lessons.core.piles import entity_label
from lessons.core.recurrence import current_version
from lessons.core.text import from_ms, sha256_hex, text_hash, to_ms
from lessons.ingest.reading import Source, iter_lines
from lessons.ingest.report import ImportReport, LineError
from lessons.ingest.shown_texts import ShownTextItem, shown_texts_keep
from lessons.ingest.writer import RowKind, insert_new_rows
from lessons.models import Correction, Draft, Exposure, Host, Lesson, Verdict
from lessons.recurrence.refresh import RecurrenceChanges, recurrence_changes_refresh
from lessons.recurrence.versions import key_of
from lessons.services.entity_counts import CountChanges, entity_counts_budget_changed
from lessons.services.principals import draft_principals
from lessons.services.status import lesson_status_set
from lessons.services.verdicts import lesson_latest_verdict_refresh

CHUNK = 500
HASH_CONTENT_DIFFERS = (
    "hash {short}… on host {host} already names a lesson on {entity} with other content; "
    "a hash names one namespace, subject and text"
)
OUTSIDE_HOST = "host {name} is not {only}: this ingest may only write host {only}"
Progress = Callable[[str, int], None]  # (phase, bytes read so far in this phase)

# The kind of each line, noted by pass 1 so that passes 2 and 3 parse only their own lines.
SKIP = 0  # invalid, blank, a host record (written by pass 1), or rejected since
LESSON_LINE = 1
REFERENCE_LINE = 2
REFERENCE_TYPES = ("verdict", "exposure", "correction", "draft")


class _Rollback(Exception):
    """Raised inside the transaction to undo a refused batch or a dry run."""


@dataclass
class _State:
    report: ImportReport
    default_host: str | None
    only_host: str | None = None
    hosts: dict[str, Host] = field(default_factory=dict)
    created_in_batch: set[str] = field(default_factory=set)
    # One bytearray per source: the kind of line ``n`` at index ``n - 1``.
    kinds: list[bytearray] = field(default_factory=list)
    # Sessions that gained exposures or corrections, and the lesson keys (recurrence.md) whose versions
    # were created or changed: only those need attributing again, not the whole host.
    changes: RecurrenceChanges = field(default_factory=RecurrenceChanges)
    # The entities whose counts (EntityCount) the batch may have moved: refreshed once, at its end.
    counts: CountChanges = field(default_factory=CountChanges)


def ingest_sources(
    *,
    sources: list[Source],
    default_host: str | None = None,
    only_host: str | None = None,
    skip_invalid: bool = False,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> ImportReport:
    """Ingest interchange JSON Lines from ``sources``; returns the ``ImportReport``.

    Never raises for bad input: every invalid line is in ``report.errors`` (source, line, field,
    message), and with any error and no ``skip_invalid`` nothing is written. With ``only_host`` (a
    host-scoped API token), a valid record naming another host is an error of its line, listed in
    ``report.outside_host`` as ``"line N: host NAME"``, and nothing is written whatever
    ``skip_invalid`` says. Recurrence is refreshed once, inside the transaction. spec: interchange.md.
    """
    state = _State(
        report=ImportReport(dry_run=dry_run, skip_invalid=skip_invalid),
        default_host=default_host,
        only_host=only_host,
    )
    try:
        with transaction.atomic():
            _pass_validate_hosts(state, sources, progress)
            if state.report.outside_host_count:
                raise _Rollback
            _pass_typed(state, sources, progress, phase="lessons", kind=LESSON_LINE, apply=_apply_lessons)
            _pass_typed(
                state, sources, progress, phase="references", kind=REFERENCE_LINE, apply=_apply_references
            )
            if (state.report.error_count and not skip_invalid) or dry_run:
                raise _Rollback
            _refresh_derived(state)
            state.report.written = True
    except _Rollback:
        state.changes.clear()
        state.counts.clear()
    return state.report


def _refresh_derived(state: _State) -> None:
    """The one refresh of what the batch's rows derive: recurrence, then the entity counts of every
    entity the batch touched (lessons, statuses, verdicts, drafts) or whose recurring members moved.
    Last in the transaction, after every row lock the batch takes."""
    recurrence_changes_refresh(changes=state.changes, counts=state.counts)
    state.counts.apply()


def _peek_type(text: str) -> str | None:
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return value.get("type") if isinstance(value, dict) and isinstance(value.get("type"), str) else None


def _pass_validate_hosts(state: _State, sources: list[Source], progress: Progress | None) -> None:
    report = state.report
    for source in sources:
        kinds = bytearray()
        state.kinds.append(kinds)
        done = 0
        for number, text, size in iter_lines(source):
            done += size
            if progress and number % 1000 == 0:
                progress("validate", done)
            kinds.append(SKIP)
            if text is None:
                report.lines += 1
                report.add_error(LineError(source.name, number, "line", "not valid UTF-8"), None)
                continue
            try:
                record = parse_line(text, default_host=state.default_host)
            except RecordError as exc:
                report.lines += 1
                rtype = _peek_type(text)
                for position, fe in enumerate(exc.errors):
                    line_error = LineError(source.name, number, fe.field, fe.message)
                    if position == 0:
                        report.add_error(line_error, rtype)
                    else:  # one rejected line with several problems: each listed, the line counted once
                        report.add_detail(line_error)
                continue
            if record is None:  # a blank line
                continue
            report.lines += 1
            name = record.name if isinstance(record, HostRecord) else record.host
            if state.only_host is not None and name != state.only_host:
                field_name = "host.name" if isinstance(record, HostRecord) else f"{record.type}.host"
                message = OUTSIDE_HOST.format(name=name, only=state.only_host)
                report.add_error(LineError(source.name, number, field_name, message), record.type)
                report.add_outside_host(f"line {number}: host {name}")
                continue
            if isinstance(record, HostRecord):
                _apply_host(state, record)
            else:
                kinds[-1] = LESSON_LINE if isinstance(record, LessonRecord) else REFERENCE_LINE
        if progress:
            progress("validate", done)


def _pass_typed(
    state: _State,
    sources: list[Source],
    progress: Progress | None,
    *,
    phase: str,
    kind: int,
    apply: Callable[[_State, list[tuple[Source, int, int, Record]]], None],
) -> None:
    """Parse and apply, in chunks of ``CHUNK``, the lines that pass 1 noted as ``kind``."""
    chunk: list[tuple[Source, int, int, Record]] = []
    for index, source in enumerate(sources):
        kinds = state.kinds[index]
        done = 0
        for number, text, size in iter_lines(source):
            done += size
            if progress and number % 1000 == 0:
                progress(phase, done)
            if kinds[number - 1] != kind:
                continue
            # Valid in pass 1, and parsing is deterministic: this cannot raise or give None.
            record = parse_line(text, default_host=state.default_host)
            chunk.append((source, index, number, record))
            if len(chunk) >= CHUNK:
                apply(state, chunk)
                chunk = []
        if progress:
            progress(phase, done)
    if chunk:
        apply(state, chunk)


def _reject(state: _State, src: Source, index: int, number: int, rtype: str, fld: str, message: str) -> None:
    state.kinds[index][number - 1] = SKIP
    state.report.add_error(LineError(src.name, number, fld, message), rtype)


# --- hosts -------------------------------------------------------------------------------------


def _host(state: _State, name: str) -> Host:
    """The host named ``name``, created with the defaults (budget off) when missing."""
    host = state.hosts.get(name)
    if host is None:
        host = Host.objects.filter(name=name).first()
        if host is None:
            host = Host.objects.create(name=name)
            state.created_in_batch.add(name)
            verb = "would be created" if state.report.dry_run else "created"
            state.report.notes.append(f"host {name} {verb} with the defaults (budget off)")
        state.hosts[name] = host
    return host


def _apply_host(state: _State, record: HostRecord) -> None:
    report = state.report
    existing = state.hosts.get(record.name) or Host.objects.filter(name=record.name).first()
    if existing is None or record.name in state.created_in_batch:
        host = existing or Host(name=record.name)
        budget_before = (host.max_active, host.budget_enabled)
        if record.max_active is not None:
            host.max_active = record.max_active
        if record.budget_enabled is not None:
            host.budget_enabled = record.budget_enabled
        if record.description is not None:
            host.description = record.description
        host.save()
        if existing is not None and (host.max_active, host.budget_enabled) != budget_before:
            entity_counts_budget_changed(host=host)
        state.hosts[record.name] = host
        if existing is None:
            state.created_in_batch.add(record.name)
            report.count("host", "created")
        else:
            report.count("host", "unchanged")
        return
    state.hosts[record.name] = existing
    budget_differs = (record.max_active is not None and record.max_active != existing.max_active) or (
        record.budget_enabled is not None and record.budget_enabled != existing.budget_enabled
    )
    if budget_differs:
        report.notes.append(
            f"host {record.name} exists: its budget (max_active {existing.max_active}, "
            f"{'enabled' if existing.budget_enabled else 'disabled'}) was kept; "
            "budgets belong to the dashboard's admins"
        )
    if record.description is not None and record.description != existing.description:
        existing.description = record.description
        existing.save(update_fields=["description"])
        report.count("host", "updated")
    else:
        report.count("host", "unchanged")


# --- lessons -----------------------------------------------------------------------------------


def _lesson_values(record: LessonRecord) -> dict:
    return {
        "kind": record.kind,
        "lesson_id": record.lesson_id,
        "store": record.store,
        "origin": record.origin,
        "superseded_by": record.superseded_by,
        "consolidates": list(record.consolidates),
        "confidence": record.confidence,
        "helpful": record.helpful,
        "harmful": record.harmful,
        "applied": record.applied,
        "tags": list(record.tags),
    }


def _content(x: Lesson | LessonRecord) -> tuple[str, str, str]:
    return (x.namespace, x.subject, x.text)


def _refuse_other_content(
    state: _State, where: tuple[Source, int, int], record: LessonRecord, holder: Lesson | LessonRecord
) -> None:
    """A record whose given hash already names other content: refused, the first content kept (a hash is
    a content address, interchange.md "Text normalization and hashes"; a silent last-wins would lose it)."""
    src, index, number = where
    entity = entity_label(holder.namespace, holder.subject)
    _reject(
        state,
        src,
        index,
        number,
        "lesson",
        "lesson.hash",
        HASH_CONTENT_DIFFERS.format(short=record.hash[:12], host=record.host, entity=entity),
    )


def _apply_lessons(state: _State, chunk: list[tuple[Source, int, int, Record]]) -> None:
    report = state.report
    by_host: dict[str, dict[str, LessonRecord]] = defaultdict(dict)
    where: dict[tuple[str, str], tuple[Source, int, int]] = {}
    for src, index, number, record in chunk:
        assert isinstance(record, LessonRecord)
        earlier = by_host[record.host].get(record.hash)
        if earlier is not None:
            if _content(earlier) != _content(record):
                _refuse_other_content(state, (src, index, number), record, earlier)
                continue
            report.count("lesson", "unchanged")  # the same lesson twice in one chunk: the last wins
        by_host[record.host][record.hash] = record
        where[(record.host, record.hash)] = (src, index, number)
    for host_name, records in by_host.items():
        host = _host(state, host_name)
        # Locked until the batch commits, so a reviewer's decision committing meanwhile is read (and holds)
        # rather than overwritten; (created_at, hash) is the order the decision services lock in.
        rows = Lesson.objects.filter(host=host, hash__in=list(records)).select_for_update()
        existing = {lesson.hash: lesson for lesson in rows.order_by("created_at", "hash")}
        new = []
        status_changed: dict[str, list[Lesson]] = defaultdict(list)
        for h, record in records.items():
            lesson = existing.get(h)
            if lesson is not None and _content(lesson) != _content(record):
                _refuse_other_content(state, where[(host_name, h)], record, lesson)
                continue
            if lesson is None:
                new.append(
                    Lesson(
                        host=host,
                        hash=h,
                        namespace=record.namespace,
                        subject=record.subject,
                        text=record.text,
                        text_hash=text_hash(record.text),
                        created_at=from_ms(record.created_at_ms),
                        status=record.status,
                        **_lesson_values(record),
                    )
                )
                continue
            if _update_lesson(state, lesson, record):
                status_changed[record.status].append(lesson)
        Lesson.objects.bulk_create(new, batch_size=CHUNK)
        report.count("lesson", "created", len(new))
        state.changes.add_lessons(new)
        state.counts.add_lessons(new)
        for status, lessons in status_changed.items():
            lesson_status_set(lessons=lessons, status=status, changes=state.changes, counts=state.counts)


def _update_lesson(state: _State, lesson: Lesson, record: LessonRecord) -> bool:
    """Write the record's changed fields to ``lesson``, except its status: True when the status is to
    change (the caller sets the statuses of a chunk in one statement through the status service)."""
    report = state.report
    changed = [f for f, v in _lesson_values(record).items() if getattr(lesson, f) != v]
    old_key = key_of(lesson)
    held = False
    if record.status != lesson.status:
        # A reviewer's decision newer than the record wins (interchange.md, "lesson"). A record carries no
        # time of its status change (created_at is when the lesson was written, and a host could send
        # any value), so every decision counts as newer: only another decision changes the status.
        if lesson.decided_at is not None:
            held = True
            # superseded_by belongs to the status the decision set: clearing it would unlink the member
            # from the consolidation that superseded it, and a rollback would no longer revive it.
            changed = [f for f in changed if f != "superseded_by"]
            report.add_held(
                f"lesson {lesson.hash[:12]} on {record.host}: stays {lesson.status} "
                f"(the source says {record.status}; a reviewer's decision is newer)"
            )
        else:
            changed.append("status")
    fields = [f for f in changed if f != "status"]
    values = _lesson_values(record)
    for f in fields:
        setattr(lesson, f, values[f])
    if fields:
        lesson.save(update_fields=[*fields, "updated_at"])
    if changed:
        state.changes.keys[lesson.host_id].update({old_key, key_of(lesson)})
    report.count("lesson", "held" if held else "updated" if changed else "unchanged")
    return "status" in changed


# --- verdicts, exposures, corrections, drafts --------------------------------------------------


class _Resolver:
    """Looks up the lessons a chunk refers to, with one query per host and reference kind."""

    def __init__(self, state: _State, records: Iterable[Record]):
        hashes: dict[str, set[str]] = defaultdict(set)
        ids: dict[str, set[tuple[str, str]]] = defaultdict(set)
        for r in records:
            ref = getattr(r, "lesson", None)
            if ref is not None:
                if ref.hash:
                    hashes[r.host].add(ref.hash)
                else:
                    ids[r.host].add((ref.store, ref.lesson_id))
            if isinstance(r, DraftRecord):
                hashes[r.host].update(r.supersedes)
        self.by_hash: dict[tuple[str, str], Lesson] = {}
        self.versions: dict[tuple[str, str, str], list[Lesson]] = defaultdict(list)
        for host_name in set(hashes) | set(ids):
            host = state.hosts.get(host_name) or Host.objects.filter(name=host_name).first()
            if host is None:
                continue
            state.hosts[host_name] = host
            for lesson in Lesson.objects.filter(host=host, hash__in=list(hashes[host_name])):
                self.by_hash[(host_name, lesson.hash)] = lesson
            pairs = ids[host_name]
            if pairs:
                lesson_ids = {lid for _store, lid in pairs}
                for lesson in Lesson.objects.filter(host=host, lesson_id__in=list(lesson_ids)):
                    if (lesson.store, lesson.lesson_id) in pairs:
                        self.versions[(host_name, lesson.store, lesson.lesson_id)].append(lesson)
        for versions in self.versions.values():
            versions.sort(key=lambda v: (v.created_at, v.hash))

    def lesson(self, host: str, ref) -> Lesson | None:
        """The version a verdict names: by hash; by store + id the live version, else the newest."""
        if ref.hash:
            return self.by_hash.get((host, ref.hash))
        versions = self.versions.get((host, ref.store, ref.lesson_id))
        if not versions:
            return None
        return current_version(versions, live=lambda v: v.is_live, newest=lambda v: (v.created_at, v.hash))

    def version_at(self, host: str, ref, shown_at_ms: int) -> Lesson | None:
        """The version current at ``shown_at``: the newest created at or before it, else the current one."""
        if ref.hash:
            return self.by_hash.get((host, ref.hash))
        versions = self.versions.get((host, ref.store, ref.lesson_id)) or []
        earlier = [v for v in versions if to_ms(v.created_at) <= shown_at_ms]
        return earlier[-1] if earlier else self.lesson(host, ref)

    def same_key_with_text(self, host: str, anchor: Lesson, digest: str) -> Lesson | None:
        if anchor.lesson_id is None:
            return anchor if anchor.text_hash == digest else None
        for v in self.versions.get((host, anchor.store, anchor.lesson_id), []):
            if v.text_hash == digest:
                return v
        return anchor if anchor.text_hash == digest else None


def _digest(*parts: object) -> str:
    return sha256_hex("\u001f".join("" if p is None else str(p) for p in parts))


def _apply_references(state: _State, chunk: list[tuple[Source, int, int, Record]]) -> None:
    resolver = _Resolver(state, [r for *_rest, r in chunk])
    verdicts, exposures, corrections = [], [], []
    texts: list[ShownTextItem] = []
    for src, index, number, record in chunk:
        if isinstance(record, VerdictRecord):
            lesson = resolver.lesson(record.host, record.lesson)
            if lesson is None:
                _reject(
                    state,
                    src,
                    index,
                    number,
                    "verdict",
                    "verdict.lesson",
                    f"no {record.lesson.describe()} on host {record.host} in this batch or the database",
                )
                continue
            key = _digest(record.metric, record.horizon_ms, record.measured_at_ms)
            verdicts.append((lesson, key, record))
        elif isinstance(record, ExposureRecord):
            lesson = resolver.version_at(record.host, record.lesson, record.shown_at_ms)
            if lesson is None:
                _reject(
                    state,
                    src,
                    index,
                    number,
                    "exposure",
                    "exposure.lesson",
                    f"no {record.lesson.describe()} on host {record.host} in this batch or the database",
                )
                continue
            digest = record.text_hash or lesson.text_hash
            shown = resolver.same_key_with_text(record.host, lesson, digest)
            lkey = key_of(lesson)
            key = _digest(record.session, lkey, digest, record.shown_at_ms)
            exposures.append((lesson.host_id, shown, lkey, digest, key, record))
            if shown is None and record.text is not None:
                texts.append(ShownTextItem(lesson.host_id, lkey, digest, record.text, record.session))
        elif isinstance(record, CorrectionRecord):
            corrections.append((_host(state, record.host), _digest(record.identity), record))
        elif isinstance(record, DraftRecord):
            _apply_draft(state, resolver, src, index, number, record)
    _write_verdicts(state, verdicts)
    _write_exposures(state, exposures)
    state.changes.sessions.update(shown_texts_keep(texts))
    _write_corrections(state, corrections)


def _verdict_row(item: tuple[Lesson, str, VerdictRecord]) -> Verdict:
    lesson, key, record = item
    return Verdict(
        host_id=lesson.host_id,
        lesson=lesson,
        key=key,
        verdict=record.verdict,
        metric=record.metric,
        baseline=record.baseline,
        current=record.current,
        horizon_ms=record.horizon_ms,
        measured_at=from_ms(record.measured_at_ms),
    )


def _exposure_row(item: tuple) -> Exposure:
    host_id, shown, lkey, digest, key, record = item
    return Exposure(
        host_id=host_id,
        session=record.session,
        lesson_key=lkey,
        lesson=shown,
        text_hash=digest,
        shown_at=from_ms(record.shown_at_ms),
        tier=record.tier,
        key=key,
    )


def _correction_row(item: tuple[Host, str, CorrectionRecord]) -> Correction:
    host, key, record = item
    return Correction(
        host=host,
        session=record.session,
        ext_id=record.id,
        key=key,
        kind=record.kind,
        text=record.text,
        text_hash=text_hash(record.text),
        corrected_at=from_ms(record.corrected_at_ms),
        turn_started_at=from_ms(record.turn_started_at_ms) if record.turn_started_at_ms is not None else None,
    )


# Verdicts are identified per lesson, exposures and corrections per host (by their ``key`` digest).
VERDICT_ROWS = RowKind(rtype="verdict", model=Verdict, scope="lesson_id", build=_verdict_row)
EXPOSURE_ROWS = RowKind(rtype="exposure", model=Exposure, scope="host_id", build=_exposure_row)
CORRECTION_ROWS = RowKind(rtype="correction", model=Correction, scope="host_id", build=_correction_row)


def _write_verdicts(state: _State, items: list[tuple[Lesson, str, VerdictRecord]]) -> None:
    rows = [(lesson.id, key, (lesson, key, record)) for lesson, key, record in items]
    new = insert_new_rows(report=state.report, kind=VERDICT_ROWS, items=rows, batch_size=CHUNK)
    lesson_latest_verdict_refresh(lesson_ids=[lesson.id for lesson, _k, _r in new], counts=state.counts)


def _write_exposures(state: _State, items: list) -> None:
    rows = [(item[0], item[4], item) for item in items]  # (host_id, key, item)
    new = insert_new_rows(report=state.report, kind=EXPOSURE_ROWS, items=rows, batch_size=CHUNK)
    state.changes.sessions.update((host_id, record.session) for host_id, *_rest, record in new)


def _write_corrections(state: _State, items: list[tuple[Host, str, CorrectionRecord]]) -> None:
    rows = [(host.id, key, (host, key, record)) for host, key, record in items]
    new = insert_new_rows(report=state.report, kind=CORRECTION_ROWS, items=rows, batch_size=CHUNK)
    state.changes.sessions.update((host.id, record.session) for host, _k, record in new)


def _apply_draft(
    state: _State, resolver: _Resolver, src: Source, index: int, number: int, record: DraftRecord
) -> None:
    for position, h in enumerate(record.supersedes):
        lesson = resolver.by_hash.get((record.host, h))
        if lesson is None:
            problem = f"no lesson {h} on host {record.host} in this batch or the database"
        elif (lesson.namespace, lesson.subject) != (record.namespace, record.subject):
            problem = (
                f"lesson {h[:12]} is on entity {lesson.namespace}/{lesson.subject}, "
                f"not the draft's {record.namespace}/{record.subject}"
            )
        else:
            continue
        _reject(state, src, index, number, "draft", f"draft.supersedes[{position}]", problem)
        return
    host = _host(state, record.host)
    values = {
        "namespace": record.namespace,
        "subject": record.subject,
        "text": record.text,
        "supersedes": list(record.supersedes),
        "drafted_by": record.drafted_by,
        "triggered_by": record.triggered_by,
        "gate_ground": record.gate_ground,
        "gate_verify": record.gate_verify,
        "confidence": record.confidence,
        "created_at": from_ms(record.created_at_ms),
    }
    draft = Draft.objects.filter(host=host, ext_id=record.identity).first()
    state.counts.add(host.id, record.namespace, record.subject)
    if draft is None:
        Draft.objects.create(host=host, ext_id=record.identity, **values, **draft_principals(record=record))
        state.report.count("draft", "created")
        return
    changed = [f for f, v in values.items() if getattr(draft, f) != v]
    if not changed:
        state.report.count("draft", "unchanged")
    elif draft.status != Draft.Status.PENDING:
        state.report.count("draft", "held")
        state.report.add_held(
            f"draft {draft.ext_id} on {record.host}: kept as {draft.status} by a reviewer's decision"
        )
    else:
        state.counts.add(host.id, draft.namespace, draft.subject)  # its entity before the update
        for f in changed:
            setattr(draft, f, values[f])
        draft.save(update_fields=changed)
        state.report.count("draft", "updated")
