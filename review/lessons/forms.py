"""The lesson page's forms: retiring a live lesson, restoring one a ``retire`` retracted. docs/decisions.md,
"Actions"; issue 12, finding 7."""

from __future__ import annotations

from django import forms

from review.piles.forms import EmptyingConfirmed
from review.web.forms import PILE_VERSION_MISSING, ReasonForm, UndoesField


class RestoreForm(ReasonForm):
    """Restore a lesson a ``retire`` decision retracted; ``pile_version`` as seen on the lesson page."""

    pile_version = forms.CharField(
        widget=forms.HiddenInput, error_messages={"required": PILE_VERSION_MISSING}, max_length=64
    )
    undoes = UndoesField()  # posted by a retire notice's Undo only


class RetireLessonForm(EmptyingConfirmed, RestoreForm):
    """Retire this live lesson (the same fields: a reason, its code, the pile version seen); the same
    service as the pile's retire (``lessons_retire``). ``last_live``: it is the only live lesson of its
    entity as the page showed it, so the retire asks for ``retire_all`` first (the pile version the
    service checks keeps that true; docs/reviewing.md, "Retiring every live lesson")."""

    undoes = None

    def __init__(self, *args, last_live: bool, **kwargs):
        super().__init__(*args, **kwargs)
        self.last_live = last_live
        self.label_retire_all(1)

    def empties_entity(self) -> bool:
        return self.last_live and self.is_bound
