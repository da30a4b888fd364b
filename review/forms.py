"""Forms of the reviewer pages: the queue filters, retiring members of a pile, restoring a lesson.

The forms check what a person typed (reason 1..500 characters after trimming, a known reason code, at
least one member); the decision services check it again under their lock, with the same texts.
spec: decisions.md, "Actions" (Reason).
"""

from __future__ import annotations

from django import forms

from review.models import NO_REASON_CODE, ReasonCode
from review.services.decisions import REASON_REQUIRED

REASON_MAX = 500
# Error texts the page tests assert.
# Formatted by Django with the trimmed length, as the service words it: REASON_TOO_LONG % {"show_value": 501}.
REASON_TOO_LONG = "The reason is %(show_value)d characters long; at most 500 are allowed."
MEMBERS_REQUIRED = "Select at least one lesson of this pile to retire."
MEMBER_NOT_ON_ENTITY = "A selected lesson is not on this entity; reload the pile and select again."
REASON_CODE_INVALID = "Choose a reason code from the list, or leave it empty."
PILE_VERSION_MISSING = "The pile version is missing; reload the pile and try again."

REASON_CODE_CHOICES = [("", NO_REASON_CODE), *ReasonCode.choices]


class QueueFilterForm(forms.Form):
    """The queue's GET filters, all optional: host (select), namespace and text (case-insensitive
    substrings)."""

    host = forms.ChoiceField(required=False)
    namespace = forms.CharField(required=False, max_length=200, strip=True, label="Namespace contains")
    q = forms.CharField(required=False, max_length=200, strip=True, label="Text")
    recurring = forms.BooleanField(required=False, label="Only piles with recurring members")

    def __init__(self, *args, host_names: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["host"].choices = [("", "All hosts"), *((n, n) for n in host_names)]

    def filters(self) -> dict[str, str | bool]:
        """``{"host", "namespace", "text", "recurring"}`` from valid data ("" / False for unset); all
        unset when invalid. ``recurring``: only piles with a recurring member (recurrence.md)."""
        data = self.cleaned_data if self.is_valid() else {}
        return {
            "host": data.get("host", ""),
            "namespace": data.get("namespace", ""),
            "text": data.get("q", ""),
            "recurring": data.get("recurring", False),
        }


class _ReasonForm(forms.Form):
    reason = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3, "data-counter": str(REASON_MAX)}),
        strip=True,
        max_length=REASON_MAX,
        error_messages={"required": REASON_REQUIRED, "max_length": REASON_TOO_LONG},
    )
    reason_code = forms.ChoiceField(
        choices=REASON_CODE_CHOICES,
        required=False,
        error_messages={"invalid_choice": REASON_CODE_INVALID},
    )

    def clean_reason_code(self) -> str | None:
        return self.cleaned_data["reason_code"] or None


class RetireForm(_ReasonForm):
    """Retire one or more live members of a pile with one reason. ``hashes`` are the entity's lessons
    (any status: a member retired meanwhile is caught as a stale pile by the service, not here).
    """

    members = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": MEMBERS_REQUIRED, "invalid_choice": MEMBER_NOT_ON_ENTITY},
    )
    pile_version = forms.CharField(
        widget=forms.HiddenInput, error_messages={"required": PILE_VERSION_MISSING}, max_length=64
    )

    field_order = ["members", "reason", "reason_code", "pile_version"]

    def __init__(self, *args, hashes: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["members"].choices = [(h, h) for h in hashes]


class RestoreForm(_ReasonForm):
    """Restore a lesson a ``retire`` decision retracted; ``pile_version`` as seen on the lesson page."""

    pile_version = forms.CharField(
        widget=forms.HiddenInput, error_messages={"required": PILE_VERSION_MISSING}, max_length=64
    )
