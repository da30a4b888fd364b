"""Forms of the queue and the pile page: the queue filters, retiring members of a pile.
spec: decisions.md, "Actions" (Reason).
"""

from __future__ import annotations

from django import forms
from django.utils.choices import BaseChoiceIterator

from review.web.forms import PILE_VERSION_MISSING, ReasonForm
from review.web.widgets import LeanSelect

# Error texts the page tests assert.
MEMBERS_REQUIRED = "Select at least one lesson of this pile to retire."
MEMBER_NOT_ON_ENTITY = "A selected lesson is not on this entity; reload the pile and select again."
RESTORE_REQUIRED = "Select at least one retired lesson to restore."
RESTORE_NOT_RESTORABLE = (
    "A selected lesson is no longer one a retire retracted on this entity; reload the pile and select again."
)


class HostChoices(BaseChoiceIterator):
    """The host filter's choices: ``("", empty_label)`` then ``(name, name)`` for each of ``names``, in
    order. A ``BaseChoiceIterator``, so Django takes it as it is instead of normalizing every pair on each
    request (200 hosts at 1M lessons, issue 10); each iteration starts afresh."""

    def __init__(self, names: list[str], empty_label: str):
        self.names = names
        self.empty_label = empty_label

    def __iter__(self):
        yield "", self.empty_label
        for name in self.names:
            yield name, name


class QueueFilterForm(forms.Form):
    """The queue's GET filters, all optional: host (select), namespace and text (case-insensitive
    substrings)."""

    host = forms.ChoiceField(required=False, widget=LeanSelect)
    namespace = forms.CharField(required=False, max_length=200, strip=True, label="Namespace contains")
    q = forms.CharField(required=False, max_length=200, strip=True, label="Text")
    recurring = forms.BooleanField(required=False, label="Only piles with recurring members")

    def __init__(self, *args, host_names: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["host"].choices = HostChoices(host_names, "All hosts")

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


class RetireForm(ReasonForm):
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


class RestoreManyForm(ReasonForm):
    """Restore one or more retired lessons of a pile with one reason (issue 12, finding 7). ``hashes`` are
    the entity's lessons a retire decision retracted (``PileDetail.restorable``). Its fields' ids start
    with ``restore_`` so they do not clash with the retire form's on the same page."""

    lessons = forms.MultipleChoiceField(
        widget=forms.CheckboxSelectMultiple,
        error_messages={"required": RESTORE_REQUIRED, "invalid_choice": RESTORE_NOT_RESTORABLE},
    )
    pile_version = forms.CharField(
        widget=forms.HiddenInput, error_messages={"required": PILE_VERSION_MISSING}, max_length=64
    )

    field_order = ["lessons", "reason", "reason_code", "pile_version"]

    def __init__(self, *args, hashes: list[str], **kwargs):
        kwargs.setdefault("auto_id", "restore_%s")
        super().__init__(*args, **kwargs)
        self.fields["lessons"].choices = [(h, h) for h in hashes]


class ClaimForm(forms.Form):
    """The claim box's buttons: ``do`` is ``claim``, ``renew`` or ``release`` (issue 12, Build 3)."""

    do = forms.ChoiceField(choices=[("claim", "claim"), ("renew", "renew"), ("release", "release")])
