"""The job of an uploaded altimate learn store (a zip): checked, unpacked into a temporary folder,
translated and ingested by the worker. docs/importers.md ("The upload page")."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from lessons.importers.common import SourceError
from lessons.importers.run import ImportResult, altimate_prepare, execute
from lessons.importers.zipped import ZipRefused, extract_zip, learn_root
from review.models import ImportJob

if TYPE_CHECKING:
    from review.services.jobs import JobProgress

State = ImportJob.State


def run(job: ImportJob, progress: JobProgress) -> tuple[str, dict | None, str]:
    """Import the uploaded zip stored in the job (an altimate learn store) for its host, with
    ``progress``; ``(state, report as JSON, error)``."""
    payload = bytes(job.payload or b"")
    options = job.options or {}
    with tempfile.TemporaryDirectory(prefix="lpr-altimate-") as folder:
        try:
            prepared = altimate_zip_prepare(io.BytesIO(payload), len(payload), Path(folder), host=job.host)
        except (ZipRefused, SourceError) as exc:
            return State.FAILED, None, without_folder(str(exc), folder)
        prepared.source = progress.counted(prepared.source)
        progress.total(len(prepared.origins))
        result = execute(prepared, dry_run=bool(options.get("dry_run")), progress=progress)
    return State.SUCCEEDED, upload_report(result), ""


def altimate_zip_prepare(stream: BinaryIO, size: int, folder: Path, *, host: str):
    """Check and unpack the zip into ``folder`` and translate its learn store for ``host``; raises
    ``ZipRefused`` or ``SourceError`` (docs/importers.md, "The upload page")."""
    extract_zip(stream, size, folder)
    return altimate_prepare(path=learn_root(folder), host=host)


def without_folder(message: str, folder: str) -> str:
    """Error texts name paths inside the upload, not the server's temporary folder."""
    return message.replace(f"{folder}/", "").replace(folder, "the zip")


def upload_report(result: ImportResult) -> dict:
    """What the import page shows of an upload's import, as JSON: the ingest report (``report``), its
    ``summary``, the non-empty ``counts`` rows, the importer's ``importer_counts``, the records not
    imported (``error_lines``, each with its place in the store) and the ``notes``."""
    report = result.report
    return {
        "report": report.as_dict(),
        "summary": report.summary_line(),
        "dry_run": report.dry_run,
        "written": report.written,
        "counts": [[rtype, counts] for rtype, counts in report.counts.items() if any(counts.values())],
        "importer_counts": dict(result.translation.counts),
        "error_lines": result.error_lines(),
        "notes": result.notes(),
    }
