"""Builders for the draft page tests: the adbuy-desk corpus, the reviewer who triggered its drafts, signed-in
clients and small drafts of any size."""

from __future__ import annotations

import pytest

from tests.builders import JAN_15_MS, day_ms, numbered_lesson
from tests.conftest import ADBUY_FILES, load_corpus

ADBUY = "adbuy-desk"
NS = "desk.adbuy"
SUBJECT = "invoice_capture"
TARGET = "entity:desk.adbuy/invoice_capture"
GATE_FAILED = "rec-adbuy-consolidate-0"
CONSOLIDATE = "rec-adbuy-consolidate-1"


@pytest.fixture
def adbuy(db, corpus_rows):
    """tests/data/adbuy-desk.jsonl alone, as ingested (restored from the session's one ingest)."""
    return load_corpus(corpus_rows, ADBUY_FILES)


@pytest.fixture
def dana(db):
    """The reviewer the adbuy drafts name as ``triggered_by`` (``user:dana``)."""
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user(username="dana", password="dana-pass")
    user.groups.add(Group.objects.get(name="reviewer"))
    return user


@pytest.fixture
def signed_in(client):
    """``signed_in(user)``: the test client signed in as ``user``."""

    def sign(user):
        client.force_login(user)
        return client

    return sign


def member_text(i: int) -> str:
    """The text of lesson ``i`` of a small draft (``field{i}``: one word, unlike the decision tests')."""
    return f"Lesson number {i} about invoice capture field{i}."


@pytest.fixture
def small_draft(ingest):
    """``small_draft(n, texts=None, verdicts=None, text=..., extra=0)``: host ``acme`` (budget 3, enabled)
    with ``n`` live lessons on desk.adbuy/invoice_capture and a pending draft ``d-n`` superseding all of
    them, drafted by ``llm:test`` and triggered by ``user:trix``; ``extra`` more live lessons on the entity
    that the draft does not supersede. Returns the superseded lesson hashes, oldest first."""

    def make(
        n: int,
        *,
        texts: list[str] | None = None,
        verdicts: dict[int, str] | None = None,
        text: str = "Fill every field of the invoice exactly as printed.",
        draft_id: str | None = None,
        gates: dict | None = None,
        extra: int = 0,
    ):
        records: list[dict] = [{"type": "host", "name": "acme", "max_active": 3, "budget_enabled": True}]
        lessons = [
            numbered_lesson(i, namespace=NS, text=texts[i] if texts else member_text(i)) for i in range(n)
        ]
        records += lessons
        records += [numbered_lesson(1000 + i, namespace=NS, text=member_text(1000 + i)) for i in range(extra)]
        for i, verdict in (verdicts or {}).items():
            records.append(
                {
                    "type": "verdict",
                    "host": "acme",
                    "lesson": lessons[i]["hash"],
                    "verdict": verdict,
                    "measured_at": "2026-02-01T00:00:00Z",
                }
            )
        records.append(
            {
                "type": "draft",
                "host": "acme",
                "id": draft_id or f"d-{n}",
                "namespace": NS,
                "subject": SUBJECT,
                "text": text,
                "supersedes": [x["hash"] for x in lessons],
                "drafted_by": "llm:test",
                "triggered_by": "user:trix",
                "gates": gates or {"ground": "pass", "verify": "pass"},
                "confidence": 0.5,
                "created_at": day_ms(100, start=JAN_15_MS),
            }
        )
        report = ingest(records)
        assert report.ok, report.error_lines()
        return [x["hash"] for x in lessons]

    return make


def entity_version(host: str, namespace: str = NS, subject: str = SUBJECT) -> str:
    """The pile version a reviewer who loads the entity now would post."""
    from lessons.models import Host
    from lessons.selectors.piles import entity_lessons, pile_version

    host_obj = Host.objects.get(name=host)
    return pile_version(list(entity_lessons(host=host_obj, namespace=namespace, subject=subject)))


@pytest.fixture
def user_factory(db):
    """``user_factory(username, group="reviewer")``: a user with one role."""
    from django.contrib.auth.models import Group, User

    def make(username: str, group: str = "reviewer"):
        user = User.objects.create_user(username=username, password=f"{username}-pass")
        user.groups.add(Group.objects.get(name=group))
        return user

    return make
