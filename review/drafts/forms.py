"""Forms of the draft page: approve, reject, roll back a consolidation. docs/decisions.md, "The actions".

Each form carries a reason (1..500 characters after trimming) and an optional reason code; approve and
roll back also carry the pile version the reviewer saw. The three forms share one page, so each has a
prefix (``approve-reason``, ``reject-reason``, ``rollback-reason``). The decision services check
everything again under their lock, with the same texts.
"""

from __future__ import annotations

from django import forms

from review.web.forms import PILE_VERSION_MISSING, ReasonForm

APPROVE_PREFIX = "approve"
REJECT_PREFIX = "reject"
ROLLBACK_PREFIX = "rollback"


class _VersionedForm(ReasonForm):
    pile_version = forms.CharField(
        widget=forms.HiddenInput, error_messages={"required": PILE_VERSION_MISSING}, max_length=64
    )


class ApproveForm(_VersionedForm):
    """Approve a draft. ``confirm_dropped_anchors`` is shown only when the draft drops a full anchor of a
    ``held`` member; the service refuses the approval without it then."""

    confirm_dropped_anchors = forms.BooleanField(required=False)

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("prefix", APPROVE_PREFIX)
        super().__init__(*args, **kwargs)


class RejectForm(ReasonForm):
    """Reject a pending (or stale) draft."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("prefix", REJECT_PREFIX)
        super().__init__(*args, **kwargs)


class RollbackForm(_VersionedForm):
    """Roll back an approved consolidation that is still live."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("prefix", ROLLBACK_PREFIX)
        super().__init__(*args, **kwargs)
