"""The authentication backend: Django's ``ModelBackend`` with a user's permissions read in one query.

Every page checks a permission (``review.roles``), and ``ModelBackend`` reads the user's own permissions
and their groups' in two queries, once per request. Roles are groups (``review.roles``), so both are
read here in one ``UNION`` (issue 10: a round trip fewer on every page, which PostgreSQL pays per query).
The permissions are the same set, cached on the user object for the request as ``ModelBackend`` does.
"""

from __future__ import annotations

from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.models import Permission


class RoleBackend(ModelBackend):
    """``ModelBackend`` (sign-in, ``get_user``, ``has_perm``) whose ``get_all_permissions`` is one query:
    ``{"app_label.codename", ...}`` of the user's own and their groups' permissions (every permission for
    a superuser; none for an inactive or anonymous user, or for an object). Cached as ``_perm_cache``."""

    def get_all_permissions(self, user_obj, obj=None) -> set[str]:
        if not user_obj.is_active or user_obj.is_anonymous or obj is not None:
            return set()
        if not hasattr(user_obj, "_perm_cache"):
            if user_obj.is_superuser:
                perms = Permission.objects.values_list("content_type__app_label", "codename").order_by()
            else:
                own = self._get_user_permissions(user_obj)
                groups = self._get_group_permissions(user_obj)
                perms = _names(own).union(_names(groups))
            user_obj._perm_cache = {f"{app}.{codename}" for app, codename in perms}
        return user_obj._perm_cache


def _names(permissions):
    return permissions.values_list("content_type__app_label", "codename").order_by()
