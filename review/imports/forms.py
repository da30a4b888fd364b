"""The altimate upload form: a zip of a learn folder, the host it belongs to, a dry-run switch.
docs/importers.md (altimate-code); docs/interchange.md (host names).
"""

from __future__ import annotations

from django import forms
from django.core.validators import RegexValidator

from lessons.core.interchange import HOST_NAME

HOST_INVALID = (
    "A host name is 1 to 64 characters: lowercase letters, digits, '.', '_' or '-', "
    "starting with a letter or digit."
)


class AltimateUploadForm(forms.Form):
    archive = forms.FileField(
        label="Zip of the learn folder",
        help_text="A zip of a project's .altimate-code/learn/ folder (or of the project root): "
        "at most 20 MB, 100 MB unpacked, 2000 entries.",
    )
    host = forms.CharField(
        label="Host",
        max_length=64,
        validators=[RegexValidator(HOST_NAME, HOST_INVALID)],
        help_text="The agent host these lessons belong to; a new host starts with its budget off.",
    )
    dry_run = forms.BooleanField(label="Dry run: show the report, write nothing", required=False)
