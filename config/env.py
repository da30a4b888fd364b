"""Reading settings from the environment: a value that cannot be read stops the start, naming it.

A typo such as ``DEBUG=ture`` must never be read as "off" (or "on") in silence: the settings module
raises ``ImproperlyConfigured`` with one sentence; ``manage.py`` prints it as one line and exits 2.
"""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off"})
E_BOOL = "{name}={value!r} is not a boolean; use 1/0, true/false, yes/no or on/off"
E_INT = "{name}={value!r} is not a whole number of at least {minimum}"


def env_bool(name: str, *, default: bool = False) -> bool:
    """The boolean environment variable ``name`` (any case, spaces around ignored); ``default`` when
    unset or empty. Raises ``ImproperlyConfigured`` (``E_BOOL``) for any other word."""
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    word = value.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ImproperlyConfigured(E_BOOL.format(name=name, value=value))


def env_int(name: str, *, default: int, minimum: int = 0) -> int:
    """The whole-number environment variable ``name``; ``default`` when unset or empty. Raises
    ``ImproperlyConfigured`` (``E_INT``) for anything else or a value below ``minimum``."""
    value = os.environ.get(name)
    if value is None or not value.strip():
        return default
    try:
        number = int(value.strip())
    except ValueError:
        number = None
    if number is None or number < minimum:
        raise ImproperlyConfigured(E_INT.format(name=name, value=value, minimum=minimum))
    return number


def env_list(name: str, *, default: str = "") -> list[str]:
    """The comma-separated environment variable ``name`` as a list, blanks dropped."""
    return [part.strip() for part in os.environ.get(name, default).split(",") if part.strip()]


E_NOT_OURS = (
    "SESSION_FILE_PATH {path} belongs to another user: "
    "set SESSION_FILE_PATH to a directory of the server's own"
)


def private_dir(path: str) -> str:
    """Make ``path`` (with its parents) a directory only its owner may list, read or enter (mode 0700),
    and return it. For the file sessions: their names are the session keys, so anyone who can list the
    directory can sign in as anyone (a 0755 directory, or one another user made in ``/tmp`` first).
    Raises ``ImproperlyConfigured`` (``E_NOT_OURS``) when the directory belongs to another user."""
    os.makedirs(path, mode=0o700, exist_ok=True)
    if os.stat(path).st_uid != os.getuid():
        raise ImproperlyConfigured(E_NOT_OURS.format(path=path))
    os.chmod(path, 0o700)
    return path
