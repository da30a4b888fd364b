"""The user admin: the admin role manages users and their three roles, never more (issue 13, fault 4).

The admin role holds ``auth.change_user`` so that it can manage accounts; Django's stock ``UserAdmin`` then
lets it tick ``is_superuser`` on itself or grant any raw permission. Here, for anyone but a superuser:

- the form has the username, name, email, active flag and the roles (only the groups viewer, reviewer,
  admin are offered); never ``is_superuser``, ``is_staff`` or ``user_permissions``;
- the staff flag follows the admin role (the Django admin opens for admins only), set on save;
- a superuser can be viewed, but not changed, given a new password or deleted; so can another admin
  (issue 21: an admin set another admin's password, then signed in as them). Admin accounts are managed
  by a superuser; the admin role manages viewers, reviewers and its own account.

A superuser keeps Django's full user admin. README.md ("Commands"); review/roles.py.
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import Group, User

from review.roles import ADMIN, ROLES

ROLE_FIELDSETS = (
    (None, {"fields": ("username", "password")}),
    ("Personal info", {"fields": ("first_name", "last_name", "email")}),
    ("Access", {"fields": ("is_active", "groups")}),
    ("Important dates", {"fields": ("last_login", "date_joined")}),
)
ROLE_ADD_FIELDSETS = (
    (None, {"classes": ("wide",), "fields": ("username", "usable_password", "password1", "password2")}),
)


class RoleUserAdmin(UserAdmin):
    """``UserAdmin`` narrowed to the three roles for a non-superuser (module docstring)."""

    def get_fieldsets(self, request, obj=None):
        if request.user.is_superuser:
            return super().get_fieldsets(request, obj)
        return ROLE_ADD_FIELDSETS if obj is None else ROLE_FIELDSETS

    def get_readonly_fields(self, request, obj=None):
        if request.user.is_superuser:
            return super().get_readonly_fields(request, obj)
        return ("last_login", "date_joined")

    def formfield_for_manytomany(self, db_field, request, **kwargs):
        if db_field.name == "groups" and not request.user.is_superuser:
            kwargs["queryset"] = Group.objects.filter(name__in=ROLES).order_by("name")
        return super().formfield_for_manytomany(db_field, request, **kwargs)

    def has_change_permission(self, request, obj=None):
        # also guards the password form (UserAdmin.user_change_password asks this)
        if _beyond(request.user, obj):
            return False
        return super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        if _beyond(request.user, obj):
            return False
        return super().has_delete_permission(request, obj)

    def save_related(self, request, form, formsets, change) -> None:
        super().save_related(request, form, formsets, change)
        user = form.instance
        if request.user.is_superuser or user.is_superuser:
            return
        staff = user.groups.filter(name=ADMIN).exists()
        if user.is_staff != staff:
            user.is_staff = staff
            user.save(update_fields=["is_staff"])


def _beyond(user, obj) -> bool:
    """Whether account ``obj`` is beyond what ``user`` may change: a superuser, or an admin other than
    ``user`` itself, for anyone but a superuser."""
    if obj is None or user.is_superuser:
        return False
    return obj.is_superuser or (obj.pk != user.pk and obj.groups.filter(name=ADMIN).exists())


admin.site.unregister(User)
admin.site.register(User, RoleUserAdmin)
