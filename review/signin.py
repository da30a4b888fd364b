"""Sign-in lockout (django-axes) helpers: the username a failed attempt is counted under.

axes stores the submitted username in a 255-character column: a 10 000-character name (an attack, not a
typo) made PostgreSQL refuse the insert and the sign-in answer 500. The name is counted under its first
150 characters, the longest a Django username can be, without NUL (PostgreSQL text cannot hold one).
"""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest

USERNAME_MAX = 150  # django.contrib.auth.models.AbstractUser.username


def lockout_username(request: HttpRequest, credentials: dict | None = None) -> str | None:
    """``AXES_USERNAME_CALLABLE``: the submitted username (credentials first, else the POST body), cut to
    ``USERNAME_MAX`` characters with NUL removed; None when none was sent."""
    field = settings.AXES_USERNAME_FORM_FIELD
    value = credentials.get(field) if credentials else getattr(request, "POST", {}).get(field)
    if value is None:
        return None
    return str(value).replace("\x00", "")[:USERNAME_MAX]
