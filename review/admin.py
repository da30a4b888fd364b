"""Django admin for decisions, acknowledgements and API tokens.

Decisions and acknowledgements are read-only for everyone (the log is append-only and hash-chained;
hosts acknowledge through the API). A token is created from its add form: the raw token is generated
there and shown once in a message; only its SHA-256 is stored. After that only ``name`` changes, and
``revoked`` once: revocation is final (read-only once set, with who revoked it and when; a new token is
the way back). docs/decisions.md, "The record"; docs/api.md, "Tokens".
"""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages

from lessons.admin import ReadOnlyAdmin
from review import accounts_admin  # noqa: F401  (registers the user admin of the three roles)
from review.models import ApiToken, Decision, DecisionAck
from review.roles import PERM_MANAGE_TOKENS
from review.services.tokens import (
    TOKEN_NO_SCOPE,
    token_new_secret,
    token_revoke,
    token_scopes,
    tokens_revoke,
)

TOKEN_SHOWN_ONCE = (
    "Token {name!r} created for {where} with scopes {scopes}. Copy it now, it is not shown again: {raw}"
)
TOKENS_REVOKED = "{n} token(s) revoked: requests with them now get 401."
TOKEN_REVOKED_HELP = (
    "Revocation is final: a revoked token gets 401 from then on; make a new token to replace it."
)


@admin.register(Decision)
class DecisionAdmin(ReadOnlyAdmin):
    list_display = ("seq", "at", "actor", "action", "host", "namespace", "subject", "reason_code")
    list_filter = ("action", "reason_code", "host")
    search_fields = ("actor", "host", "subject", "lesson_hash", "draft_id", "reason", "batch")
    ordering = ("-seq",)


@admin.register(DecisionAck)
class DecisionAckAdmin(ReadOnlyAdmin):
    list_display = ("decision", "status", "acked_at", "token_name", "detail")
    list_filter = ("status",)
    list_select_related = ("decision",)


class ApiTokenForm(forms.ModelForm):
    class Meta:
        model = ApiToken
        fields = ("name", "host", "can_ingest", "can_read", "revoked")
        help_texts = {"revoked": TOKEN_REVOKED_HELP}

    def clean(self):
        data = super().clean()
        if self.instance.pk is None and not (data.get("can_ingest") or data.get("can_read")):
            raise forms.ValidationError(TOKEN_NO_SCOPE)
        return data


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    form = ApiTokenForm
    list_display = (
        "name",
        "prefix",
        "host_label",
        "scopes",
        "revoked",
        "revoked_at",
        "revoked_by",
        "last_used_at",
        "created_at",
        "created_by",
    )
    list_filter = ("revoked", "can_ingest", "can_read", "host")

    # Managing tokens takes the role's "manage tokens" permission besides the model's own (admins have
    # both; review/roles.py).
    def has_module_permission(self, request) -> bool:
        return request.user.has_perm(PERM_MANAGE_TOKENS) and super().has_module_permission(request)

    def has_view_permission(self, request, obj=None) -> bool:
        return request.user.has_perm(PERM_MANAGE_TOKENS) and super().has_view_permission(request, obj)

    def has_add_permission(self, request) -> bool:
        return request.user.has_perm(PERM_MANAGE_TOKENS) and super().has_add_permission(request)

    def has_change_permission(self, request, obj=None) -> bool:
        return request.user.has_perm(PERM_MANAGE_TOKENS) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None) -> bool:
        return request.user.has_perm(PERM_MANAGE_TOKENS) and super().has_delete_permission(request, obj)

    search_fields = ("name", "prefix")
    list_select_related = ("host", "created_by", "revoked_by")
    actions = ["revoke_tokens"]

    def get_fields(self, request, obj=None):
        if obj is None:
            return ("name", "host", "can_ingest", "can_read")
        return (
            "name",
            "prefix",
            "host",
            "can_ingest",
            "can_read",
            "revoked",
            "revoked_at",
            "revoked_by",
            "created_by",
            "created_at",
            "last_used_at",
        )

    def get_readonly_fields(self, request, obj=None):
        if obj is None:
            return ()
        fixed = ("prefix", "host", "can_ingest", "can_read", "revoked_at", "revoked_by")
        if obj.revoked:  # final: no box to untick
            fixed += ("revoked",)
        return (*fixed, "created_by", "created_at", "last_used_at")

    @admin.display(description="host")
    def host_label(self, obj: ApiToken) -> str:
        return obj.host.name if obj.host_id else "every host"

    @admin.display(description="scopes")
    def scopes(self, obj: ApiToken) -> str:
        return ", ".join(token_scopes(obj)) or "none"

    def save_model(self, request, obj: ApiToken, form, change: bool) -> None:
        if change:
            # Only the name is written from the form: a page loaded before someone else revoked the token
            # must not write revoked=False back. Ticking "revoked" goes through the service (who, when).
            obj.save(update_fields=["name"])
            if "revoked" in form.changed_data and form.cleaned_data.get("revoked"):
                token_revoke(token=obj, actor=request.user)
            return
        raw, obj.prefix, obj.token_hash = token_new_secret()
        obj.created_by = request.user
        super().save_model(request, obj, form, change)
        self.message_user(
            request,
            TOKEN_SHOWN_ONCE.format(
                name=obj.name,
                where=obj.host.name if obj.host_id else "every host",
                scopes=", ".join(token_scopes(obj)) or "none",
                raw=raw,
            ),
            messages.WARNING,
        )

    @admin.action(description="Revoke the selected tokens")
    def revoke_tokens(self, request, queryset) -> None:
        n = tokens_revoke(tokens=queryset, actor=request.user)
        self.message_user(request, TOKENS_REVOKED.format(n=n), messages.SUCCESS)
