"""The host budget form: ``max_active``, enabled, reason (no reason code). docs/decisions.md, set_budget.

Preview needs only the budget fields; saving also needs a reason. The reason's own rules (trimmed,
1..500 characters) are checked by the service, whose refusal text the page shows on the reason field.
"""

from __future__ import annotations

from django import forms

from lessons.core.interchange import MAX_ACTIVE_MAX, MAX_ACTIVE_MIN, MAX_ACTIVE_WANTED
from review.services.common import REASON_MAX


class BudgetPreviewForm(forms.Form):
    """The budget fields alone: what a preview needs."""

    max_active = forms.IntegerField(
        label="max_active",
        help_text=(
            f"Live lessons an entity may carry before it is a pile ({MAX_ACTIVE_MIN} to {MAX_ACTIVE_MAX})."
        ),
        error_messages={
            "required": MAX_ACTIVE_WANTED,
            "invalid": MAX_ACTIVE_WANTED,
            "min_value": MAX_ACTIVE_WANTED,
            "max_value": MAX_ACTIVE_WANTED,
        },
        min_value=MAX_ACTIVE_MIN,
        max_value=MAX_ACTIVE_MAX,
        widget=forms.NumberInput(attrs={"min": MAX_ACTIVE_MIN, "max": MAX_ACTIVE_MAX}),
    )
    budget_enabled = forms.BooleanField(
        label="Budget enabled", required=False, help_text="Without an enabled budget the host has no piles."
    )


class BudgetForm(BudgetPreviewForm):
    """The budget fields with the reason the decision records."""

    reason = forms.CharField(
        # data-counter: the same live character counter as the retire form (static/js/app.js)
        widget=forms.Textarea(attrs={"rows": 3, "maxlength": REASON_MAX, "data-counter": str(REASON_MAX)}),
        required=False,  # checked by the service (clean_reason), so the page and the CLI say the same
        strip=False,
        help_text="Why the budget changes; hosts read it with the decision.",
    )
    # No reason code: docs/decisions.md's codes are about retiring lessons (duplicate, regressed, ...), none
    # fits a budget change (finding 12), so the budget form offers none and records none.
