"""Web requests while another connection holds the locks they need: each answers 503 with Retry-After and
a clear sentence after at most ``WEB_LOCK_TIMEOUT_SECONDS``, never a 500 or "database is locked"; reads
are answered meanwhile, and the same retire succeeds once the lock is released. spec: issue 13, Build 3.

``run_scenario(hold)`` is shared by the PostgreSQL test (``hold``: a thread of its own holding row locks)
and the SQLite one (``python -m tests.review.web.lock_scenario`` on a file database, where ``hold`` takes
the write lock from a second connection: the test database of pytest is in memory, where a second writer
fails at once instead of waiting).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from contextlib import AbstractContextManager

NS, SUBJECT = "desk.locks", "invoice_capture"
PASSWORD = "rita-lock-pass"


def world() -> tuple[list[str], str]:
    """Host ``acme`` (budget 3) with five live lessons, reviewer ``rita``; returns (hashes, a raw token)."""
    from django.contrib.auth.models import Group, User

    from lessons.ingest.passes import ingest_sources
    from lessons.ingest.reading import bytes_source
    from review.roles import roles_ensure
    from review.services.tokens import token_create
    from tests.builders import numbered_lesson

    records = [{"type": "host", "name": "acme", "max_active": 3, "budget_enabled": True}]
    records += [numbered_lesson(i, namespace=NS) for i in range(5)]
    body = "\n".join(json.dumps(r) for r in records).encode()
    assert ingest_sources(sources=[bytes_source(body)]).ok
    roles_ensure()
    user = User.objects.create_user(username="rita", password=PASSWORD)
    user.groups.add(Group.objects.get(name="reviewer"))
    _token, raw = token_create(name="locks", host=None, can_ingest=True, can_read=True)
    return [r["hash"] for r in records[1:]], raw


def run_scenario(hold: Callable[[], AbstractContextManager], before_request: Callable[[], None]) -> dict:
    """What each request answered while ``hold()`` is held, and after; ``before_request`` runs before
    each request (the PostgreSQL test closes the connection, as the end of a real request does)."""
    from django.contrib.auth.models import User
    from django.test import Client

    from lessons.models import Host
    from lessons.selectors.piles import entity_lessons, pile_version
    from review.models import Decision

    hashes, token = world()
    host = Host.objects.get(name="acme")
    query = f"?host=acme&namespace={NS}&subject={SUBJECT}"
    version = pile_version(list(entity_lessons(host=host, namespace=NS, subject=SUBJECT)))
    form = {"members": [hashes[0]], "reason": "restated", "pile_version": version}
    reviewer = Client(raise_request_exception=False)
    reviewer.force_login(User.objects.get(username="rita"))

    def answer(response) -> dict:
        return {
            "status": response.status_code,
            "retry_after": response.get("Retry-After"),
            "body": response.content.decode(),
        }

    out: dict = {}
    with hold():
        before_request()
        out["retire"] = answer(reviewer.post("/pile/retire/" + query, form))
        before_request()
        out["retire_htmx"] = answer(reviewer.post("/pile/retire/" + query, form, HTTP_HX_REQUEST="true"))
        before_request()
        out["api_ingest"] = answer(
            Client(raise_request_exception=False).post(
                "/api/v1/ingest",
                data=json.dumps({"type": "host", "name": "acme", "description": "busy"}),
                content_type="application/x-ndjson",
                HTTP_AUTHORIZATION=f"Bearer {token}",
            )
        )
        before_request()
        # a read through the API: its token's "last used" hint is skipped, not waited for (attacker's 2)
        out["api_read"] = answer(
            Client(raise_request_exception=False).get(
                "/api/v1/piles?limit=1", HTTP_AUTHORIZATION=f"Bearer {token}"
            )
        )
        before_request()
        out["sign_in"] = answer(
            Client(raise_request_exception=False).post(
                "/accounts/login/", {"username": "rita", "password": PASSWORD}
            )
        )
        before_request()
        out["read_pile"] = answer(reviewer.get("/pile/" + query))
        out["decisions_while_held"] = Decision.objects.count()
    before_request()
    out["retire_after"] = answer(reviewer.post("/pile/retire/" + query, form))
    out["decisions_after"] = Decision.objects.count()
    for name in ("read_pile", "retire_after", "api_read"):
        out[name]["body"] = ""  # long pages: only their status is compared
    return out


def _sqlite_main() -> None:
    import contextlib
    import sqlite3

    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.conf import settings
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    path = settings.DATABASES["default"]["NAME"]

    @contextlib.contextmanager
    def hold():
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # the write lock, as an ingest's write phase holds it
        try:
            yield
        finally:
            other.execute("ROLLBACK")
            other.close()

    print(json.dumps(run_scenario(hold, lambda: None)))


if __name__ == "__main__":
    _sqlite_main()
