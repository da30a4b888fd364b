"""The reason fields every decision form shares (retire, restore, the draft actions), and their texts.

The forms check what a person typed (reason 1..500 characters after trimming, a known reason code, at
least one member); the decision services check it again under their lock, with the same texts.
spec: decisions.md, "Actions" (Reason).
"""

from __future__ import annotations

from django import forms

from review.models import NO_REASON_CODE, ReasonCode
from review.services.common import REASON_MAX, REASON_REQUIRED, REASON_TOO_LONG

# Error texts the page tests assert.
# The service's text, left for Django to fill with the trimmed length (``show_value``), so both say the same.
REASON_TOO_LONG_FIELD = REASON_TOO_LONG.format(length="%(show_value)d")
REASON_CODE_INVALID = "Choose a reason code from the list, or leave it empty."
PILE_VERSION_MISSING = "The pile version is missing; reload the pile and try again."

REASON_CODE_CHOICES = [("", NO_REASON_CODE), *ReasonCode.choices]


class ReasonForm(forms.Form):
    """A reason (1..500 characters after trimming) and an optional reason code."""

    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "data-counter": str(REASON_MAX)}),
        strip=True,
        max_length=REASON_MAX,
        error_messages={"required": REASON_REQUIRED, "max_length": REASON_TOO_LONG_FIELD},
    )
    reason_code = forms.ChoiceField(
        choices=REASON_CODE_CHOICES,
        required=False,
        error_messages={"invalid_choice": REASON_CODE_INVALID},
    )

    def clean_reason_code(self) -> str | None:
        return self.cleaned_data["reason_code"] or None
