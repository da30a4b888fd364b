"""The reason fields every decision form shares (retire, restore, the draft actions), and their texts.

The forms check what a person typed (reason 1..500 characters after trimming, a known reason code, at
least one member); the decision services check it again under their lock, with the same texts.
docs/decisions.md, "The actions" (Reason).
"""

from __future__ import annotations

from collections.abc import Iterator

from django import forms
from django.utils.choices import BaseChoiceIterator

from review.models import NO_REASON_CODE, ReasonCode
from review.services.common import REASON_MAX, REASON_REQUIRED, REASON_TOO_LONG
from review.web.widgets import LeanSelect

# Finding 7 (issue 12): a retire's Undo restores exactly the retired lessons with this reason, without
# asking for one: the undo is its own decision on the record, and its reason names the one it undoes.
UNDO_REASON = "undo: {reason}"

# Error texts the page tests assert.
# The service's text, left for Django to fill with the trimmed length (``show_value``), so both say the same.
REASON_TOO_LONG_FIELD = REASON_TOO_LONG.format(length="%(show_value)d")
REASON_CODE_INVALID = "Choose a reason code from the list, or leave it empty."
PILE_VERSION_MISSING = "The pile version is missing; reload the pile and try again."
UNDOES_INVALID = "The Undo names its retire decisions by number (1,2,...); reload the page and try again."

REASON_CODE_CHOICES = [("", NO_REASON_CODE), *ReasonCode.choices]


class PlainChoices(BaseChoiceIterator):
    """Choices already in the form Django normalizes them to, ``(value, label)`` pairs of plain strings with
    no groups, set on a choice field as they are: ``field.choices = PlainChoices(pairs)``.

    Django normalizes a list set as choices twice, for the field and again for its widget, one Python call
    per pair (~5 ms for a pile's 240 member hashes: the retire and restore forms of a pile of 200 took 10 ms
    of its page); an instance of ``BaseChoiceIterator`` is taken as it is. Iterating, indexing, ``len``,
    truth and equality are those of the list. Raises ``TypeError`` when a pair is not two strings, so a
    group or a lazy label never reaches a field unnormalized. docs/benchmarks.md, "Session of 2026-12-04,
    eighth"."""

    def __init__(self, pairs: list[tuple[str, str]]):
        for pair in pairs:
            if not (isinstance(pair, tuple) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
                raise TypeError(f"PlainChoices takes (value, label) pairs of strings, not {pair!r}")
        self.pairs = pairs

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(self.pairs)

    def __len__(self) -> int:
        return len(self.pairs)

    def __getitem__(self, index):
        return self.pairs[index]


class ReasonTextForm(forms.Form):
    """A reason (1..500 characters after trimming), without a reason code (a restatement mark's)."""

    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "data-counter": str(REASON_MAX)}),
        strip=True,
        max_length=REASON_MAX,
        error_messages={"required": REASON_REQUIRED, "max_length": REASON_TOO_LONG_FIELD},
    )


class ReasonForm(ReasonTextForm):
    """A reason (1..500 characters after trimming) and an optional reason code."""

    reason_code = forms.ChoiceField(
        choices=REASON_CODE_CHOICES,
        required=False,
        widget=LeanSelect,  # the select templates' HTML without an include per option (~1 ms a page)
        error_messages={"invalid_choice": REASON_CODE_INVALID},
    )

    def clean_reason_code(self) -> str | None:
        return self.cleaned_data["reason_code"] or None


class UndoesField(forms.CharField):
    """The seqs of the retire decisions an Undo reverses, posted as ``"12,13"`` (``undo_offer``): a list
    of ints (``None`` when absent: not an Undo). docs/decisions.md, "The actions" (Undo)."""

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("max_length", 4000)
        kwargs.setdefault("widget", forms.HiddenInput)
        super().__init__(**kwargs)

    def to_python(self, value) -> list[int] | None:
        text = super().to_python(value)
        if not text:
            return None
        parts = text.split(",")
        if not all(p.isascii() and p.isdigit() and len(p) <= 18 for p in parts):
            raise forms.ValidationError(UNDOES_INVALID, code="invalid")
        return [int(p) for p in parts]


def undo_offer(
    *, action: str, hashes: list[str], reason: str, version: str, undoes: list[int], htmx_target: str = ""
) -> dict:
    """The Undo form of a retire's success notice (``review/piles/_undo.html``): it posts to ``action`` the
    ``hashes`` just retired, the reason ``undo: <the original reason>`` (cut to the 500-character limit
    with "…"), the entity's fresh pile ``version`` and ``undoes``, the seqs of that retire's decisions (the
    restore is refused when they are no longer the lessons' latest: ``lessons_restore``); ``htmx_target`` is
    the region it swaps ("" for a plain POST). Issue 12, finding 7."""
    text = UNDO_REASON.format(reason=reason)
    if len(text) > REASON_MAX:
        text = text[: REASON_MAX - 1] + "\u2026"
    return {
        "action": action,
        "hashes": hashes,
        "reason": text,
        "version": version,
        "undoes": ",".join(str(seq) for seq in sorted(undoes)),
        "target": htmx_target,
    }
