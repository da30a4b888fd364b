"""Sign-in helpers: the client address and the username a failed attempt is counted under (django-axes),
and a sign-in's bookkeeping that never waits for an import's write lock on SQLite (below).

The client address (issue 21, fault 5). Behind a proxy every request comes from the proxy's address, so a
lockout keyed on ``REMOTE_ADDR`` paused a user for every client. axes reads the address through
django-ipware when that is installed; its modern resolver prefers a public address wherever it finds one
in a list of headers a client can write, and skips a chain whose length differs from the proxy count.
Instead ``client_address`` (``AXES_CLIENT_IP_CALLABLE``) does one documented thing:
``TRUSTED_PROXY_COUNT`` = 0 (the default): ``REMOTE_ADDR``, whatever ``X-Forwarded-For`` says;
``TRUSTED_PROXY_COUNT`` = N: the N-th address from the right of ``X-Forwarded-For``, the one the
outermost trusted proxy appended (nginx ``$proxy_add_x_forwarded_for``). What a client wrote further left
is never used. An IPv6 address counts as its /64 network (a client holds the whole /64, so a fresh address
per attempt would be a fresh limit), an IPv4-mapped one (``::ffff:a.b.c.d``) as its IPv4 address.
docs/production.md, "Behind a proxy".

The limit per address (issue 21, fault 6). axes pauses one username from one address; fresh usernames
were never paused, and each costs a password hash (Django hashes even for an unknown user). So a sign-in
from an address with ``SIGNIN_FAILURES_PER_ADDRESS`` failures within ``AXES_COOLOFF_TIME``, whatever the
usernames, is refused (429) before its form is read (``review.middleware.SignInLimitMiddleware``). The
failures are axes' own records (one indexed sum), so every server process and machine sees the same
count, nothing else is stored, and ``manage.py axes_reset_ip ADDRESS`` lifts the pause.

axes stores the submitted username in a 255-character column: a 10 000-character name (an attack, not a
typo) made PostgreSQL refuse the insert and the sign-in answer 500. The name is counted under its first
150 characters, the longest a Django username can be, without NUL (PostgreSQL text cannot hold one).
"""

from __future__ import annotations

import contextlib
import ipaddress
import logging
from datetime import datetime

from axes.handlers.database import AxesDatabaseHandler
from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth.models import update_last_login
from django.core.checks import Tags, Warning, register
from django.db import OperationalError, connection, transaction
from django.db.models import Sum
from django.http import HttpRequest
from django.utils import timezone

from lessons.services.data_version import uncounted

logger = logging.getLogger(__name__)

USERNAME_MAX = 150  # django.contrib.auth.models.AbstractUser.username
IPV6_CLIENT_PREFIX = 64  # an IPv6 client (one household, one server) is given a whole /64


def client_address(request: HttpRequest) -> str | None:
    """``AXES_CLIENT_IP_CALLABLE``: the client's IP address (text, normalised; an IPv6 one as its /64
    network) as the module docstring says. ``REMOTE_ADDR`` when no proxy is trusted, or when
    ``X-Forwarded-For`` holds fewer entries than ``TRUSTED_PROXY_COUNT`` or no IP address at the trusted
    position (the request did not come through every trusted proxy)."""
    given = request.META.get("REMOTE_ADDR") or None
    remote = _client_key(given or "") or given
    trusted = settings.TRUSTED_PROXY_COUNT
    if not trusted:
        return remote
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
    if len(hops) < trusted:
        return remote
    return _client_key(hops[-trusted]) or remote


def _client_key(text: str) -> str | None:
    """The address ``text`` as one client: IPv4 as is (also written IPv4-mapped, ``::ffff:a.b.c.d``), IPv6
    as its /64 network (``2001:db8:1:2::``, no zone), since one client holds the whole /64; None for text
    that is no IP address."""
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if address.version == 6 and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    if address.version == 6:
        network = ipaddress.IPv6Network((int(address), IPV6_CLIENT_PREFIX), strict=False)
        return str(network.network_address)
    return str(address)


W_NO_TRUSTED_PROXY = (
    "HTTPS=1 puts the site behind a proxy, but TRUSTED_PROXY_COUNT is 0: every client has the proxy's "
    "address, so one client's failed sign-ins pause signing in for all"
)
W_NO_TRUSTED_PROXY_HINT = (
    "Set TRUSTED_PROXY_COUNT to the number of proxies that append to X-Forwarded-For (1 for the nginx "
    "site of docs/production.md); silence review.W001 if none does."
)


@register(Tags.security, deploy=True)
def check_trusted_proxy(app_configs, **kwargs) -> list[Warning]:
    """``check --deploy``: warns (``review.W001``) when ``HTTPS`` is on and no proxy is trusted."""
    if getattr(settings, "HTTPS", False) and not settings.TRUSTED_PROXY_COUNT:
        return [Warning(W_NO_TRUSTED_PROXY, hint=W_NO_TRUSTED_PROXY_HINT, id="review.W001")]
    return []


def address_failures(address: str | None, *, now: datetime | None = None) -> int:
    """The failed sign-ins recorded from ``address`` (any usernames) whose latest failure is within
    ``AXES_COOLOFF_TIME`` of ``now`` (UTC, default the present); 0 for no address."""
    if address is None:
        return 0
    since = (now or timezone.now()) - settings.AXES_COOLOFF_TIME
    failures = AccessAttempt.objects.filter(ip_address=address, attempt_time__gte=since).aggregate(
        n=Sum("failures_since_start")
    )["n"]
    return failures or 0


def lockout_username(request: HttpRequest, credentials: dict | None = None) -> str | None:
    """``AXES_USERNAME_CALLABLE``: the submitted username (credentials first, else the POST body), cut to
    ``USERNAME_MAX`` characters with NUL removed; None when none was sent."""
    field = settings.AXES_USERNAME_FORM_FIELD
    value = credentials.get(field) if credentials else getattr(request, "POST", {}).get(field)
    if value is None:
        return None
    return str(value).replace("\x00", "")[:USERNAME_MAX]


# --- a sign-in during a large ingest (issue 13, acceptance) ----------------------------------------------
#
# On SQLite one writer holds the database while a background ingest writes its batch. A sign-in must not
# wait for it: its session is stored in files (settings), and what it only keeps for the record — the
# user's ``last_login`` and django-axes' access log and reset of failed attempts — is written when the
# database is free and skipped (logged) when it is not. Skipping loses nothing a sign-in needs: the
# session is kept, a skipped reset leaves earlier failures to expire after ``AXES_COOLOFF_TIME``. On
# PostgreSQL these writes touch rows no ingest holds, and are made as before.


@contextlib.contextmanager
def _no_wait():
    """SQLite: ``busy_timeout`` 0 on this connection for the block (a held lock fails at once), then the
    wait it had before."""
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA busy_timeout")
        (before,) = cursor.fetchone()
        cursor.execute("PRAGMA busy_timeout = 0")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA busy_timeout = {int(before)}")


def record_if_free(what: str, write) -> bool:
    """Run ``write()`` (a sign-in's bookkeeping, named ``what`` in the log) in its own transaction. On
    SQLite it never waits: if another writer holds the database, nothing is written, a warning is logged
    and False returned. Elsewhere it runs as is. Returns whether it was written."""
    if connection.vendor != "sqlite" or connection.in_atomic_block:
        with transaction.atomic():  # a savepoint: a failed write leaves the caller's transaction usable
            write()
        return True
    from review.locking import is_lock_timeout

    connection.ensure_connection()
    try:
        with _no_wait(), transaction.atomic():
            write()
    except OperationalError as exc:
        if not is_lock_timeout(exc):
            raise
        logger.warning("sign-in: %s not recorded, the database is busy (an import is writing)", what)
        return False
    return True


def last_login_if_free(sender, user, **kwargs) -> None:
    """Replaces Django's ``update_last_login`` receiver of ``user_logged_in``: the same update, through
    ``record_if_free``, and not counted as a change of the data (``uncounted``): only the admin shows a
    last sign-in, and it answers no conditional request, so a sign-in leaves every page's tag and kept
    parts as they were (docs/production.md, "Cache")."""
    with uncounted():
        record_if_free("last_login", lambda: update_last_login(sender, user, **kwargs))


class SignInAxesHandler(AxesDatabaseHandler):
    """django-axes' database handler whose success bookkeeping (the access log row, the reset of the
    user's failed attempts) goes through ``record_if_free``. Failed attempts are counted as before: a
    lockout must not be skipped, so a failure during an ingest waits (and may answer 503)."""

    def user_logged_in(self, sender, request, user, **kwargs):
        parent = super().user_logged_in
        record_if_free("the sign-in log", lambda: parent(sender, request, user, **kwargs))
