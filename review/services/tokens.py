"""API bearer tokens: created once (the raw token is shown once), stored as SHA-256, checked per request.

A raw token is ``lpr_`` followed by 43 URL-safe characters (32 random bytes). Only its SHA-256 and its
first 12 characters (``prefix``, to tell tokens apart in lists) are stored, so a database dump cannot
be replayed against the API. docs/decisions.md, "Hosts apply decisions"; review/api/auth.py.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import DatabaseError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from lessons.models import Host
from lessons.services.data_version import uncounted
from lessons.services.disk import disk_full
from review.locking import is_lock_timeout, without_waiting
from review.models import ApiToken

TOKEN_PREFIX = "lpr_"
PREFIX_LENGTH = 12
SCOPES = ("ingest", "read")
# last_used_at is a hint for admins, not an audit trail: write it at most once a minute per token.
LAST_USED_RESOLUTION = timedelta(minutes=1)

TOKEN_NAME_REQUIRED = "A token needs a name (1 to 100 characters)."
TOKEN_NO_SCOPE = "A token needs at least one scope: ingest, read."
TOKEN_SCOPE_UNKNOWN = "Unknown scope {scope!r}; use ingest, read or both, separated by a comma."


class TokenRefused(ValueError):
    """Bad input for a new token; ``str(exc)`` is the message to show."""


def token_digest(raw: str) -> str:
    """Lowercase hex SHA-256 of the raw token's UTF-8 bytes: what the database stores."""
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def parse_scopes(text: str) -> tuple[bool, bool]:
    """``"ingest,read"`` -> ``(can_ingest, can_read)``; raises ``TokenRefused`` for unknown or no scopes."""
    scopes = {part.strip() for part in text.split(",") if part.strip()}
    for scope in sorted(scopes):
        if scope not in SCOPES:
            raise TokenRefused(TOKEN_SCOPE_UNKNOWN.format(scope=scope))
    if not scopes:
        raise TokenRefused(TOKEN_NO_SCOPE)
    return "ingest" in scopes, "read" in scopes


def token_scopes(token: ApiToken) -> list[str]:
    """The token's scopes as names, e.g. ``["ingest", "read"]``."""
    return [name for name, on in (("ingest", token.can_ingest), ("read", token.can_read)) if on]


def token_new_secret() -> tuple[str, str, str]:
    """A fresh raw token with its prefix and digest: ``(raw, prefix, token_hash)``."""
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    return raw, raw[:PREFIX_LENGTH], token_digest(raw)


def token_create(
    *,
    name: str,
    host: Host | None,
    can_ingest: bool,
    can_read: bool,
    created_by: AbstractBaseUser | None = None,
) -> tuple[ApiToken, str]:
    """Create a token; returns ``(token, raw)``. ``raw`` is shown once and never stored.

    ``host`` None means every host. Raises ``TokenRefused`` for an empty name or no scope.
    """
    name = (name or "").strip()
    if not name or len(name) > 100:
        raise TokenRefused(TOKEN_NAME_REQUIRED)
    if not (can_ingest or can_read):
        raise TokenRefused(TOKEN_NO_SCOPE)
    raw, prefix, digest = token_new_secret()
    with transaction.atomic():
        token = ApiToken.objects.create(
            name=name,
            prefix=prefix,
            token_hash=digest,
            host=host,
            can_ingest=can_ingest,
            can_read=can_read,
            created_by=created_by,
        )
    return token, raw


def token_authenticate(raw: str, *, now: datetime | None = None) -> ApiToken | None:
    """The live (not revoked) token whose digest matches ``raw``, with its host; ``None`` otherwise.

    Compares digests through a unique index lookup: the raw token never reaches the database.
    Updates ``last_used_at`` (at most once a minute), except on a full disk (issue 21, fault 11) or while
    another writer holds the lock (a long ingest on SQLite): the request goes on without the hint, at once.
    """
    if not raw or not raw.startswith(TOKEN_PREFIX) or len(raw) > 200:
        return None
    token = (
        ApiToken.objects.select_related("host").filter(token_hash=token_digest(raw), revoked=False).first()
    )
    if token is None:
        return None
    now = now or timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= LAST_USED_RESOLUTION:
        try:
            # bookkeeping: no read shows it (docs/api.md, "Conditional reads"), and none waits for it
            with uncounted(), without_waiting(), transaction.atomic():
                ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        except DatabaseError as exc:
            if not (disk_full(exc) or is_lock_timeout(exc)):
                raise
        token.last_used_at = now
    return token


def tokens_revoke(
    *, tokens: QuerySet[ApiToken], actor: AbstractBaseUser | None, now: datetime | None = None
) -> int:
    """Revoke the live tokens among ``tokens``: every later request with them gets 401. Records ``now``
    (UTC, default the present) and ``actor`` on each; a token already revoked keeps its first revocation.
    Returns how many were revoked by this call. There is no un-revoke: a new token is the way back
    (docs/api.md, "Tokens")."""
    with transaction.atomic():
        return tokens.filter(revoked=False).update(
            revoked=True, revoked_at=now or timezone.now(), revoked_by=actor
        )


def token_revoke(*, token: ApiToken, actor: AbstractBaseUser | None, now: datetime | None = None) -> bool:
    """Revoke one token (``tokens_revoke``); returns False when it was already revoked. ``token`` is
    refreshed with what is stored."""
    revoked = tokens_revoke(tokens=ApiToken.objects.filter(pk=token.pk), actor=actor, now=now) == 1
    token.refresh_from_db(fields=["revoked", "revoked_at", "revoked_by"])
    return revoked
