"""Django admin for the domain: hosts are editable (name, description); everything else is read-only.

A host's budget (``max_active``, ``budget_enabled``) changes only through the budget page, which records
a ``set_budget`` decision with a reason; lessons, verdicts, exposures, corrections, drafts and recurrence
counts change only through ingest and decisions. So the admin is no back door around the decision log.
docs/decisions.md.
"""

from __future__ import annotations

from django.contrib import admin
from django.urls import NoReverseMatch, reverse
from django.utils.html import format_html

from lessons.core.text import hash8
from lessons.models import Correction, Draft, Exposure, Host, Lesson, RecurrenceCount, Verdict

BUDGET_HELP = "Change the budget on the budget page: it records a set_budget decision with your reason."


class ReadOnlyAdmin(admin.ModelAdmin):
    """View only: no add, change or delete, whoever asks."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Host)
class HostAdmin(admin.ModelAdmin):
    list_display = ("name", "max_active", "budget_enabled", "description", "created_at")
    search_fields = ("name", "description")
    readonly_fields = ("max_active", "budget_enabled", "budget_page", "created_at")
    fields = ("name", "description", "max_active", "budget_enabled", "budget_page", "created_at")

    def get_readonly_fields(self, request, obj=None):
        # A host's name is its identity in every record and decision: set once, when it is added.
        return ("name", *self.readonly_fields) if obj is not None else self.readonly_fields

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # lessons, verdicts and decisions refer to it

    @admin.display(description="Budget")
    def budget_page(self, obj: Host):
        if obj is None or obj.pk is None:
            return "A new host starts with max_active 8 and the budget off. " + BUDGET_HELP
        try:
            url = reverse("review:host_budget", args=[obj.name])
        except NoReverseMatch:
            return BUDGET_HELP
        return format_html('<a href="{}">Edit the budget of {}</a>. {}', url, obj.name, BUDGET_HELP)


@admin.register(Lesson)
class LessonAdmin(ReadOnlyAdmin):
    list_display = (
        "short_hash",
        "host",
        "namespace",
        "subject",
        "status",
        "kind",
        "latest_verdict",
        "created_at",
    )
    list_filter = ("status", "kind", "host")
    search_fields = ("hash", "subject", "namespace", "text", "lesson_id")
    list_select_related = ("host",)

    @admin.display(description="hash")
    def short_hash(self, obj: Lesson) -> str:
        return f"{hash8(obj.hash)}…"


@admin.register(Verdict)
class VerdictAdmin(ReadOnlyAdmin):
    list_display = ("lesson", "host", "verdict", "metric", "measured_at")
    list_filter = ("verdict", "host")
    list_select_related = ("lesson", "host")


@admin.register(Draft)
class DraftAdmin(ReadOnlyAdmin):
    list_display = (
        "ext_id",
        "host",
        "namespace",
        "subject",
        "status",
        "source",
        "gate_ground",
        "gate_verify",
        "created_at",
    )
    list_filter = ("status", "source", "host")
    search_fields = ("ext_id", "subject", "text")
    list_select_related = ("host",)


@admin.register(Exposure)
class ExposureAdmin(ReadOnlyAdmin):
    list_display = ("host", "session", "lesson_key", "shown_at", "tier")
    list_filter = ("host",)
    list_select_related = ("host",)


@admin.register(Correction)
class CorrectionAdmin(ReadOnlyAdmin):
    list_display = ("host", "session", "kind", "corrected_at")
    list_filter = ("kind", "host")
    list_select_related = ("host",)


@admin.register(RecurrenceCount)
class RecurrenceCountAdmin(ReadOnlyAdmin):
    list_display = ("lesson", "sessions_shown", "recurred", "recurred_sessions", "computed_at")
    list_select_related = ("lesson",)
