"""URL configuration: sign-in, the review pages, the JSON API, the Django admin."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from review.api import api_urls
from review.web.paths import ADMIN_PREFIX, API_PREFIX
from review.web.site import favicon

# JSON under /api/, and a page that says so when the disk is full (review/server_error.py)
handler500 = "review.server_error.server_error"

urlpatterns = [
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("favicon.ico", favicon, name="favicon"),
    path(ADMIN_PREFIX.lstrip("/"), admin.site.urls),
    path(API_PREFIX.lstrip("/") + "v1/", api_urls()),
    path("", include("review.urls")),
]
