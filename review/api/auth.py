"""Who calls the API and what it may reach: the bearer token (``review.services.tokens``), its scopes
(``ingest``, ``read``) and its host. docs/decisions.md ("Hosts apply decisions"); docs/interchange.md (host
names).
"""

from __future__ import annotations

from django.http import HttpRequest
from ninja.security import HttpBearer

from lessons.core.interchange import HOST_NAME
from review.api.errors import E_BAD_HOST, E_HOST, E_INVALID, E_SCOPE, ApiError
from review.models import ApiToken
from review.services.tokens import token_authenticate


class TokenAuth(HttpBearer):
    """``Authorization: Bearer <token>`` -> the live ``ApiToken`` (``request.auth``), or 401."""

    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        return token_authenticate(token.strip())


def token_for(request: HttpRequest, scope: str) -> ApiToken:
    """The request's token; 403 when it lacks ``scope`` (``ingest`` or ``read``)."""
    token: ApiToken = request.auth  # type: ignore[attr-defined]
    if not (token.can_ingest if scope == "ingest" else token.can_read):
        raise ApiError(403, E_SCOPE.format(scope=scope))
    return token


def check_host_param(host: str | None) -> None:
    """400 unless ``host`` (when given) is a host name."""
    if host is not None and not HOST_NAME.fullmatch(host):  # fullmatch: "$" would let "name\n" through
        raise ApiError(400, E_INVALID, [E_BAD_HOST])


def hosts_for(token: ApiToken, host: str | None) -> list[str] | None:
    """The host names a request may read: ``[host]``, the token's host, or None (every host).

    403 when ``host`` names another host than a host-scoped token's.
    """
    check_host_param(host)
    if token.host_id is not None:
        if host is not None and host != token.host.name:
            raise ApiError(403, E_HOST.format(host=token.host.name))
        return [token.host.name]
    return [host] if host is not None else None
