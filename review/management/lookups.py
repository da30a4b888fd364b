"""Resolving what the decision commands name: ``--as USER``, ``--host NAME``, lesson hash prefixes and
draft ids. Each lookup raises ``LookupRefused`` with a message (the command exits 1). README.md, "Commands".
"""

from __future__ import annotations

import re

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser

from lessons.models import Draft, Host, Lesson

HASH_PREFIX_MIN = 8
_HEX = re.compile(r"^[0-9a-f]+$")
_DASHBOARD_ID = re.compile(r"^[0-9]{1,18}$")
AMBIGUOUS_SHOWN = 5

USER_UNKNOWN = "--as {name}: no such user."
HOST_UNKNOWN = "{label} {name}: no such host."
HASH_PREFIX_INVALID = "{value!r} is not a lesson hash: give at least 8 hex characters (0-9, a-f)."
HASH_UNKNOWN = "No lesson hash starts with {prefix}{where}."
HASH_AMBIGUOUS = "{prefix} matches {count} lessons ({matches}); give more characters{hint}."
# A whole hash on several hosts: more characters cannot tell them apart (the attacker's finding 13).
HASH_ON_SEVERAL_HOSTS = "{prefix} is a lesson on {count} hosts ({hosts}); add --host NAME."
LESSONS_ON_SEVERAL_HOSTS = "The lessons named are on several hosts ({hosts}); retire them one host at a time."
DRAFT_UNKNOWN = "No draft {draft_id}{where}."
DRAFT_AMBIGUOUS = "Draft {draft_id} exists on several hosts ({hosts}); add --host NAME."


class LookupRefused(Exception):
    """A name on the command line that names nothing, or more than one thing; ``str()`` is the message."""


def user_by_name(name: str) -> AbstractBaseUser:
    """The user ``--as NAME`` names (active or not: the services refuse an inactive actor)."""
    model = get_user_model()
    user = model._default_manager.filter(**{model.USERNAME_FIELD: name}).first()
    if user is None:
        raise LookupRefused(USER_UNKNOWN.format(name=name))
    return user


def host_by_name(name: str | None, *, label: str = "--host") -> Host | None:
    """The host ``--host NAME`` names, or ``None`` when no ``--host`` was given."""
    if name is None:
        return None
    host = Host.objects.filter(name=name).first()
    if host is None:
        raise LookupRefused(HOST_UNKNOWN.format(label=label, name=name))
    return host


def _where(host: Host | None) -> str:
    return f" on host {host.name}" if host else ""


def lesson_by_prefix(value: str, *, host: Host | None = None) -> Lesson:
    """The one lesson whose hash starts with ``value`` (at least 8 hex characters, any case).

    Ambiguous prefixes list up to five matches as ``host:hash`` (the whole hash, so each can be told
    apart); ``host`` narrows the search.
    """
    prefix = value.strip().lower()
    if len(prefix) < HASH_PREFIX_MIN or len(prefix) > 64 or not _HEX.match(prefix):
        raise LookupRefused(HASH_PREFIX_INVALID.format(value=value))
    qs = Lesson.objects.filter(hash__startswith=prefix).select_related("host").order_by("host__name", "hash")
    if host is not None:
        qs = qs.filter(host=host)
    found = list(qs[: AMBIGUOUS_SHOWN + 1])
    if not found:
        raise LookupRefused(HASH_UNKNOWN.format(prefix=prefix, where=_where(host)))
    if len(found) > 1:
        count = qs.count()
        if len(prefix) == 64:  # a whole hash: only the host can tell its lessons apart
            hosts = ", ".join(x.host.name for x in found[:AMBIGUOUS_SHOWN])
            raise LookupRefused(HASH_ON_SEVERAL_HOSTS.format(prefix=prefix, count=count, hosts=hosts))
        matches = ", ".join(f"{x.host.name}:{x.hash}" for x in found[:AMBIGUOUS_SHOWN])
        if count > AMBIGUOUS_SHOWN:
            matches += ", …"
        several_hosts = len({x.host_id for x in found}) > 1
        hint = " or add --host NAME" if several_hosts and host is None else ""
        raise LookupRefused(HASH_AMBIGUOUS.format(prefix=prefix, count=count, matches=matches, hint=hint))
    return found[0]


def draft_by_id(draft_id: str, *, host: Host | None = None) -> Draft:
    """The draft named by its source id (``Draft.ext_id``), else by the dashboard's numeric id."""
    qs = Draft.objects.select_related("host").order_by("host__name")
    if host is not None:
        qs = qs.filter(host=host)
    found = list(qs.filter(ext_id=draft_id)[:10])
    if len(found) > 1:
        raise LookupRefused(
            DRAFT_AMBIGUOUS.format(draft_id=draft_id, hosts=", ".join(d.host.name for d in found))
        )
    if found:
        return found[0]
    if _DASHBOARD_ID.match(draft_id):
        draft = qs.filter(pk=int(draft_id)).first()
        if draft is not None:
            return draft
    raise LookupRefused(DRAFT_UNKNOWN.format(draft_id=draft_id, where=_where(host)))
