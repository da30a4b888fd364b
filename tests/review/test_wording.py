"""The product never says a lesson was "followed"; the absence of corrections is "no observed
correction". spec: docs/piles-and-recurrence.md, "Per-lesson counts"."""

from __future__ import annotations

import re
from pathlib import Path

from django.core.management import call_command

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
FOLLOWED = re.compile(r"\bfollowed\b", re.IGNORECASE)


def test_no_template_says_followed():
    offending = [
        f"{path.relative_to(TEMPLATES)}:{number}"
        for path in sorted(TEMPLATES.rglob("*.html"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if FOLLOWED.search(line)
    ]
    assert sorted(TEMPLATES.rglob("*.html")), "no templates found"
    assert offending == []


def test_the_recurrence_command_never_says_followed(corpora, capsys):
    call_command("recurrence")
    text = capsys.readouterr().out
    call_command("recurrence", "--format", "json")
    text += capsys.readouterr().out
    assert "no observed correction" in text
    assert not FOLLOWED.search(text)
