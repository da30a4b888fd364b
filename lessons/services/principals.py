"""Resolving ``drafted_by``/``triggered_by`` labels to users, and whether a draft names a user.

When a draft arrives the ingest stores the user each label names (``Draft.drafted_by_user``,
``Draft.triggered_by_user``), so that a user renamed later is still the one who triggered it. The
self-approval check asks ``draft_names_user``: the stored ids, and the labels compared by
``lessons.core.principals`` (which also covers a user created after the draft arrived).
docs/interchange.md, "draft: a drafted consolidating lesson" (neither may approve it); issue 13, fault 3.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model

from lessons.core.principals import label_names, name_key, principal_key


def principal_user_id(label: str | None) -> int | None:
    """The id of the user ``label`` names (``principal_key``), or None. Users are few: when no username
    matches case-insensitively in SQL, every username is compared by its key."""
    key = principal_key(label)
    if key is None:
        return None
    users = get_user_model().objects
    for pk, username in users.filter(username__iexact=key).values_list("pk", "username"):
        if name_key(username) == key:
            return pk
    for pk, username in users.order_by("pk").values_list("pk", "username"):
        if name_key(username) == key:
            return pk
    return None


def draft_principals(*, record) -> dict[str, int | None]:
    """``{"drafted_by_user_id": id or None, "triggered_by_user_id": id or None}`` for the new draft row of
    ``record`` (a ``DraftRecord``, or anything with ``drafted_by`` and ``triggered_by``)."""
    return {
        "drafted_by_user_id": principal_user_id(record.drafted_by),
        "triggered_by_user_id": principal_user_id(record.triggered_by),
    }


def draft_names_user(*, draft, user, role: str | None = None) -> bool:
    """Whether ``draft`` was drafted (``role="drafted"``), triggered (``"triggered"``) or either (None) by
    ``user``: by the user id stored when it arrived, or by a label naming ``user``'s username."""
    username = user.get_username()
    checks = {
        "drafted": (draft.drafted_by_user_id, draft.drafted_by),
        "triggered": (draft.triggered_by_user_id, draft.triggered_by),
    }
    for name, (user_id, label) in checks.items():
        if role not in (None, name):
            continue
        if (user_id is not None and user_id == user.pk) or label_names(label, username):
            return True
    return False
