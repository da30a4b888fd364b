"""The admin upload page: import a zipped ``.altimate-code/learn/`` folder. spec: importers.md.

The zip is checked and unpacked into a temporary folder (``lessons.importers.zipped``), then the
same import as ``manage.py import_altimate`` runs on it; the page shows the same report. Only users
who may add hosts (the admin role) may use it, since an import can create a host.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods

from lessons.importers.common import SourceError
from lessons.importers.run import altimate_prepare, execute
from lessons.importers.zipped import ZipRefused, extract_zip, learn_root
from review.imports.forms import AltimateUploadForm
from review.roles import PERM_IMPORT


@require_http_methods(["GET", "POST"])
@permission_required(PERM_IMPORT, raise_exception=True)
def import_altimate(request: HttpRequest) -> HttpResponse:
    """GET: the upload form. POST: check, unpack and import the zip; the report, or why it was refused."""
    if request.method == "GET":
        return render(request, "review/imports/altimate.html", {"form": AltimateUploadForm(), "result": None})
    form = AltimateUploadForm(request.POST, request.FILES)
    result = None
    status = 200
    if form.is_valid():
        upload = form.cleaned_data["archive"]
        with tempfile.TemporaryDirectory(prefix="lpr-altimate-") as folder:
            try:
                extract_zip(upload, upload.size, Path(folder))
                prepared = altimate_prepare(path=learn_root(Path(folder)), host=form.cleaned_data["host"])
            except (ZipRefused, SourceError) as exc:
                form.add_error("archive", _without_folder(str(exc), folder))
            else:
                result = execute(prepared, dry_run=form.cleaned_data["dry_run"])
    if not form.is_valid():
        status = 400
    context = {
        "form": form,
        "result": result,
        "counts": _count_rows(result) if result else [],
        "error_lines": result.error_lines() if result else [],
        "notes": result.notes() if result else [],
    }
    return render(request, "review/imports/altimate.html", context, status=status)


def _without_folder(message: str, folder: str) -> str:
    """Error texts name paths inside the upload, not the server's temporary folder."""
    return message.replace(f"{folder}/", "").replace(folder, "the zip")


def _count_rows(result) -> list[tuple[str, dict[str, int]]]:
    return [(rtype, counts) for rtype, counts in result.report.counts.items() if any(counts.values())]
