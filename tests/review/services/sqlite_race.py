"""Race decisions on a file-backed SQLite database configured as in production (IMMEDIATE transactions,
busy timeout), in a process of its own: ``python -m tests.review.services.sqlite_race``.

The pytest SQLite database is in memory with a shared cache, where a second writer gets "database table
is locked" at once instead of waiting, so the production behaviour can only be seen on a file. Prints
one JSON object: the results of each race and whether the chain verifies.
"""

from __future__ import annotations

import json
import os


def main() -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    django.setup()
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command

    from lessons.ingest.passes import ingest_sources
    from lessons.ingest.reading import bytes_source
    from lessons.models import Draft, Host, Lesson
    from review.services.chain import decisions_verify
    from tests.builders import numbered_lesson
    from tests.fixtures.decisions import NS
    from tests.review.services.test_concurrency import race, retire_action, version

    call_command("migrate", verbosity=0)
    users = []
    for name in ("rita", "rob", "ray"):
        user = User.objects.create_user(username=name, password="x")
        user.groups.add(Group.objects.get(name="reviewer"))
        users.append(user)
    records = [{"type": "host", "name": "acme", "max_active": 3, "budget_enabled": True}]
    records += [numbered_lesson(i, namespace=NS) for i in range(5)]
    hashes = [r["hash"] for r in records[1:]]
    records.append(
        {
            "type": "draft",
            "host": "acme",
            "id": "d-1",
            "namespace": "desk.test",
            "subject": "invoice_capture",
            "text": "Merged rule.",
            "supersedes": hashes[3:],
            "drafted_by": "llm:x",
            "gates": {"ground": "pass", "verify": "pass"},
            "created_at": "2026-02-01T00:00:00Z",
        }
    )
    lines = "\n".join(json.dumps(r) for r in records).encode()
    assert ingest_sources(sources=[bytes_source(lines, name="race.jsonl")]).ok
    host = Host.objects.get(name="acme")
    entity = ("desk.test", "invoice_capture")

    seen = version(host, *entity)
    retirements = race(
        [
            retire_action(host, [hashes[0]], users[0], seen),
            retire_action(host, [hashes[1]], users[1], seen),
            retire_action(host, [hashes[2]], users[2], seen),
        ]
    )

    from review.services.consolidation import draft_approve

    seen = version(host, *entity)
    draft = Draft.objects.get(ext_id="d-1")
    approval = race(
        [
            lambda: draft_approve(draft=draft, actor=users[0], reason="one", pile_version=seen),
            retire_action(host, [hashes[4]], users[1], seen),
        ]
    )
    live = Lesson.objects.filter(host=host, status="live").count()
    print(
        json.dumps(
            {"retirements": retirements, "approval": approval, "live": live, "verify": decisions_verify()}
        )
    )


if __name__ == "__main__":
    main()
