"""The Django admin's site: a signed-in user without admin rights gets the product's "Not allowed"
page, and an anonymous visitor the product's sign-in page, instead of the admin's own sign-in form
(which asked a signed-in viewer to sign in again, and is not one of the product's accessible pages).
docs/production.md, "The Django admin"."""

from __future__ import annotations

from functools import update_wrapper

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.core.exceptions import PermissionDenied
from django.urls import reverse

# The 403 page shows it under "Not allowed".
ADMIN_NOT_ALLOWED = "The Django admin at /admin/ is for admins."


class ReviewAdminSite(admin.AdminSite):
    """Django's AdminSite with its sign-in view answered by the product's pages."""

    def admin_view(self, view, cacheable=False):
        """Every admin view, answered by ``login`` below for a request without admin rights (Django's
        own wrapper redirects those to the admin's sign-in form); signing out stays open to all."""
        wrapped = super().admin_view(view, cacheable)

        def guarded(request, *args, **kwargs):
            signing_out = request.path == reverse("admin:logout", current_app=self.name)
            if not signing_out and not self.has_permission(request):
                return self.login(request)
            return wrapped(request, *args, **kwargs)

        return update_wrapper(guarded, wrapped)

    def login(self, request, extra_context=None):
        """``/admin/login/``, and every admin view for a request without admin rights: ``PermissionDenied``
        (the product's 403 page) for a signed-in user without them, a redirect to the product's sign-in
        for someone signed out; an admin goes on as Django's own view sends them."""
        from django.contrib.auth.views import redirect_to_login  # models: not before the apps load

        if self.has_permission(request):  # signed in as an admin: Django's view sends them on
            return super().login(request, extra_context)
        if request.user.is_authenticated:
            raise PermissionDenied(ADMIN_NOT_ALLOWED)
        return redirect_to_login(request.GET.get("next") or request.get_full_path())


class ReviewAdminConfig(AdminConfig):
    """``django.contrib.admin`` with ``ReviewAdminSite`` as ``admin.site`` (INSTALLED_APPS)."""

    default_site = "review.admin_site.ReviewAdminSite"
