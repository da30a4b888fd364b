"""Running an importer: database look-ups, the shared ingest, and the combined report.

The translated records go through ``lessons.ingest.passes.ingest_sources`` exactly like
``manage.py ingest`` input, so the report, ``--dry-run`` and the "a reviewer's decision is never
silently undone" rule behave the same. docs/importers.md (first paragraph); docs/interchange.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.db import transaction
from django.db.models import Q

from lessons.core.recurrence import lesson_key
from lessons.core.text import hash8, storable, to_ms
from lessons.ingest.passes import Progress, ingest_sources
from lessons.ingest.reading import Source, lines_source
from lessons.ingest.report import ImportReport
from lessons.models import Exposure, Lesson

from . import altimate, areev
from .altimate_sessions import pin_exposure_texts
from .common import Translation, drop_unresolved, json_dumps, lesson_refs, referenced, validated

REASONS_KEPT = "retirement reasons kept"
# A dry run writes no lesson, so it cannot say which retired lessons keep their reason (a reviewer's newer
# decision may hold one live): the note says why its importer line has no such count.
REASONS_NOT_COUNTED = (
    "a dry run does not count retirement reasons kept: they are counted as the import writes"
)


@dataclass
class Prepared:
    """A translation ready to ingest: the JSON Lines source and, per line, where the record came from."""

    host: str
    translation: Translation
    source: Source
    origins: list[str]
    after_write: Callable[[], None] | None = None


@dataclass
class ImportResult:
    """The ingest report and the importer's own translation (counts and skipped problems)."""

    report: ImportReport
    translation: Translation
    origins: list[str]

    def lines(self) -> list[str]:
        """The report as printed by the commands and shown on the upload page."""
        out = [self.report.table(), self.report.summary_line()]
        counts = ", ".join(f"{n} {name}" for name, n in self.translation.counts.items())
        if counts:
            out.append(f"importer: {counts}")
        return out

    def error_lines(self) -> list[str]:
        """Ingest errors with the source place of each record instead of its translated line number."""
        out = []
        for e in self.report.errors:
            where = self.origins[e.line - 1] if 0 < e.line <= len(self.origins) else f"{e.source}:{e.line}"
            out.append(f"{where}: {e.field}: {e.message}")
        if self.report.error_count > len(self.report.errors):
            out.append(f"... and {self.report.error_count - len(self.report.errors)} more invalid record(s)")
        return out

    def notes(self) -> list[str]:
        return self.translation.problem_lines() + self.report.notes + self.report.held


def _prepare(host: str, translation: Translation, name: str) -> Prepared:
    validated(translation, host=host)
    hashes, ids = lesson_refs(translation)
    want_hashes, want_ids = referenced(translation)
    db_hashes, db_ids = _stored_refs(host, want_hashes - hashes, want_ids - ids)
    drop_unresolved(translation, hashes=hashes | db_hashes, ids=ids | db_ids)
    origins = [item.origin for item in translation.items]
    source = lines_source(json_dumps(item.record for item in translation.items), name=name)
    return Prepared(host=host, translation=translation, source=source, origins=origins)


def _stored_refs(
    host: str, hashes: set[str], ids: set[tuple[str, str]]
) -> tuple[set[str], set[tuple[str, str]]]:
    """Which of the referenced lessons the database already has for ``host`` (two queries at most)."""
    found_hashes: set[str] = set()
    found_ids: set[tuple[str, str]] = set()
    if hashes:
        found_hashes = set(
            Lesson.objects.filter(host__name=host, hash__in=hashes).values_list("hash", flat=True)
        )
    if ids:
        rows = Lesson.objects.filter(host__name=host, lesson_id__in={i for _s, i in ids}).values_list(
            "store", "lesson_id"
        )
        found_ids = {row for row in rows if row in ids}
    return found_hashes, found_ids


def execute(prepared: Prepared, *, dry_run: bool, progress: Progress | None = None) -> ImportResult:
    """Ingest the prepared records (``skip_invalid``: one unresolvable record never blocks the rest)."""
    if dry_run and prepared.translation.retired_reasons:
        prepared.translation.note(REASONS_NOT_COUNTED)
    with transaction.atomic():
        report = ingest_sources(
            sources=[prepared.source],
            default_host=prepared.host,
            skip_invalid=True,
            dry_run=dry_run,
            progress=progress,
        )
        if report.written and prepared.after_write is not None:
            prepared.after_write()
    return ImportResult(report=report, translation=prepared.translation, origins=prepared.origins)


# --- altimate ----------------------------------------------------------------------------------


def altimate_prepare(*, path: Path, host: str) -> Prepared:
    """Translate the learn store at ``path`` for ``host``; raises ``SourceError`` (see ``altimate``)."""
    learn = altimate.find_learn_dir(path)
    stores = [p.name for p in learn.iterdir() if altimate.STORE_NAME.match(p.name)]
    translation = altimate.translate_learn_dir(path, known=_known_versions(host, stores))
    pin_exposure_texts(translation, _stored_exposures(host, translation))
    prepared = _prepare(host, translation, name=f"{path} (altimate)")
    prepared.after_write = lambda: _source_notes_keep(host, translation)
    return prepared


def _known_versions(host: str, stores: list[str]) -> list[altimate.KnownVersion]:
    """The stored versions of the stores' lessons for ``host`` (one query)."""
    # A consolidation a reviewer approved has no altimate id until apply_decisions wrote it back and
    # the store was re-imported; it is known by its entity (namespace = store) so it stays one.
    rows = Lesson.objects.filter(
        Q(store__in=stores, lesson_id__isnull=False)
        | Q(kind=Lesson.Kind.CONSOLIDATION, namespace__in=stores, subject=altimate.SUBJECT),
        host__name=host,
    ).order_by("id")
    return [
        altimate.KnownVersion(
            hash=r.hash,
            store=r.store or r.namespace,
            lesson_id=r.lesson_id or "",
            namespace=r.namespace,
            subject=r.subject,
            text=r.text,
            created_at_ms=to_ms(r.created_at),
            status=r.status,
            kind=r.kind,
            origin=r.origin,
            confidence=r.confidence,
            helpful=r.helpful,
            harmful=r.harmful,
            applied=r.applied,
            tags=tuple(r.tags or ()),
            consolidates=tuple(r.consolidates or ()),
        )
        for r in rows
    ]


def _stored_exposures(host: str, translation: Translation) -> dict[tuple[str, str, str, int], str]:
    """Stored text hashes of the exposures the translation has without text (one query)."""
    wanted = {
        (r["session"], lesson_key(hash="", store=r["store"], lesson_id=r["lesson_id"])): (
            r["store"],
            r["lesson_id"],
        )
        for r in (item.record for item in translation.items)
        # a session or id no database can take is left to the ingest, which refuses its line by name
        if r["type"] == "exposure" and "text" not in r and storable(r["session"]) and storable(r["lesson_id"])
    }
    if not wanted:
        return {}
    rows = Exposure.objects.filter(
        host__name=host, session__in={s for s, _k in wanted}, lesson_key__in={k for _s, k in wanted}
    ).values_list("session", "lesson_key", "shown_at", "text_hash")
    stored = {}
    for session, key, shown_at, digest in rows.order_by("id"):
        if (session, key) in wanted and digest:
            store, lesson_id = wanted[(session, key)]
            stored[(session, store, lesson_id, to_ms(shown_at))] = digest
    return stored


def _source_notes_keep(host: str, translation: Translation) -> None:
    """Keep each retired lesson's reason in ``Lesson.source_note`` (the interchange has no field for it).

    Runs in the ingest's transaction. Only lessons whose status now is the store's are touched: a
    retirement held by a reviewer's decision does not get the store's reason; a lesson the store
    holds live again loses its old reason. Counts the retired lessons that carry their reason now
    (changed or not), so importing the same store again reports the same count.
    """
    kept = 0
    hashes = set(translation.retired_reasons) | translation.live_hashes
    for lesson in Lesson.objects.filter(host__name=host, hash__in=hashes).order_by("id"):
        if lesson.hash in translation.retired_reasons and not lesson.is_live:
            note = translation.retired_reasons[lesson.hash]
            kept += 1
        elif lesson.hash in translation.live_hashes and lesson.is_live:
            note = ""
        else:
            continue
        if lesson.source_note != note:
            lesson.source_note = note
            lesson.save(update_fields=["source_note", "updated_at"])
    translation.count(REASONS_KEPT, kept)


# --- areev -------------------------------------------------------------------------------------


def areev_prepare(*, paths: list[Path], host: str, mapping: dict[str, list[str]] | None) -> Prepared:
    """Translate areev JSON files for ``host``; raises ``SourceError`` for an unreadable file or map."""
    translation = areev.translate_files(paths, mapping=mapping, member_times=areev_member_times(host))
    return areev_finish(host, translation, name="areev")


def areev_member_times(host: str) -> Callable[[set[str]], dict[str, int]]:
    """``{hash: created_at ms}`` of the stored lessons of ``host`` among the hashes asked (one query)."""

    def times(hashes: set[str]) -> dict[str, int]:
        rows = Lesson.objects.filter(host__name=host, hash__in=hashes).values_list("hash", "created_at")
        return {digest: to_ms(created) for digest, created in rows}

    return times


def areev_finish(host: str, translation: Translation, *, name: str) -> Prepared:
    """Supersede the stored members of each live consolidation the translation holds, then prepare.

    areev's ``recall`` returns only current heads: a consolidation arrives without its members, which
    the database still holds live. Each such member is sent again as ``superseded`` by the
    consolidation (unless a reviewer's decision is newer: ingest holds it then).
    """
    held = {item.record["hash"] for item in translation.items if item.record["type"] == "lesson"}
    wanted: dict[str, str] = {}
    for item in translation.items:
        r = item.record
        if r["type"] == "lesson" and r.get("kind") == "consolidation" and r.get("status", "live") == "live":
            wanted.update({h: r["hash"] for h in r.get("consolidates", ()) if h not in held})
    if wanted:
        rows = Lesson.objects.filter(host__name=host, hash__in=wanted, status=Lesson.Status.LIVE)
        for lesson in rows.order_by("id"):
            record = stored_lesson_record(
                lesson, status=Lesson.Status.SUPERSEDED, superseded_by=wanted[lesson.hash]
            )
            translation.add(f"{name}: member {hash8(lesson.hash)} of {hash8(wanted[lesson.hash])}", record)
    return _prepare(host, translation, name=name)


def stored_lesson_record(lesson: Lesson, **changes) -> dict:
    """A stored areev lesson as an interchange ``lesson`` record (without ``host``), with ``changes``
    (a new ``status``, ``superseded_by``): how a sync tells ingest that the engine changed it."""
    record = {
        "type": "lesson",
        "hash": lesson.hash,
        "namespace": lesson.namespace,
        "subject": lesson.subject,
        "text": lesson.text,
        "created_at": to_ms(lesson.created_at),
        "kind": lesson.kind,
    }
    if lesson.kind == Lesson.Kind.CONSOLIDATION:
        record["consolidates"] = list(lesson.consolidates)
    for field in ("confidence", "origin"):
        if getattr(lesson, field) is not None:
            record[field] = getattr(lesson, field)
    return {**record, **changes}
