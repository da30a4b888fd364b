"""The conditional pages against every kind of write (an attack that held, kept as a guard): on the demo,
each write below (commands, services, ingests of every record type that shows) is made between two
readings of every page, and no page whose HTML changed kept its ETag (a 304 would have shown it stale),
and each write changed some page (else this guard could not fail). A page's ETag is read with its body;
the CSRF token and the CSP nonce, which change with every answer, are left out of the comparison.
docs/production.md, "Cache"; docs/api.md, "Conditional reads".
"""

from __future__ import annotations

import io
import json
import re
from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client

from lessons.models import Draft, Host, Lesson
from review.models import Decision
from review.roles import roles_ensure
from review.services.acks import decision_ack
from review.services.claims import pile_claim
from review.services.consolidation import draft_approve
from review.services.restatements import restatement_mark
from tests.conftest import ingest_records

pytestmark = pytest.mark.django_db(transaction=True)

PER_ANSWER = re.compile(r'nonce="[^"]*"|name="csrfmiddlewaretoken" value="[^"]*"|X-CSRFToken[^,}]*')


def _pages() -> list[str]:
    """Every page of the demo's data: the lists, each host, each pile and its first lesson, every lesson
    with a text another host holds too, every draft and decision."""
    pages = ["/", "/hosts/", "/decisions/", "/decisions/revisit/", "/decisions/calibration/"]
    pages += [f"/hosts/{name}/" for name in Host.objects.values_list("name", flat=True)]
    seen = set()
    for lesson in Lesson.objects.select_related("host").order_by("id"):
        entity = (lesson.host.name, lesson.namespace, lesson.subject)
        shared = Lesson.objects.filter(text_hash=lesson.text_hash).exclude(host=lesson.host_id).exists()
        if entity not in seen or shared:
            pages.append(f"/lessons/{lesson.host.name}/{lesson.hash}/")
        if entity not in seen:
            seen.add(entity)
            pages.append(
                "/pile/?" + urlencode(dict(zip(("host", "namespace", "subject"), entity, strict=True)))
            )
    pages += [f"/drafts/{d.host.name}/{d.ext_id}/" for d in Draft.objects.select_related("host")]
    pages += [f"/decisions/{seq}/" for seq in Decision.objects.values_list("seq", flat=True)]
    return pages


def _read(client: Client, pages: list[str]) -> dict[str, tuple[str | None, str]]:
    answers = {}
    for page in pages:
        response = client.get(page)
        assert response.status_code == 200, page
        answers[page] = (response.get("ETag"), PER_ANSWER.sub("", response.content.decode()))
    return answers


def _quiet(*args) -> None:
    call_command(*args, stdout=io.StringIO(), stderr=io.StringIO())


@pytest.fixture
def demo():
    # an earlier transactional test's flush removed the roles the data migration made (review.roles)
    roles_ensure()
    _quiet("demo")
    client = Client()
    client.force_login(User.objects.get(username="admin"))
    return client


def test_no_write_leaves_a_changed_page_its_etag(demo):
    reviewer = User.objects.get(username="reviewer")
    live = Lesson.objects.filter(status="live", host__budget_enabled=True).select_related("host")
    first = live.filter(host__name="adbuy-desk", subject="invoice_capture").order_by("id").first()
    mates = list(
        live.filter(namespace=first.namespace, subject=first.subject).order_by("id")[1:3]
    )  # not the one retired
    other = Host.objects.exclude(pk=first.host_id).order_by("name").first()
    draft = Draft.objects.get(ext_id="rec-claims-consolidate-1")  # triggered by priya: reviewer may approve
    writes = {
        "review retire": lambda: _quiet(
            "review", "retire", first.hash, "--as", "reviewer", "--reason", "Dup."
        ),
        "outcomes": lambda: _quiet("outcomes"),
        "budget": lambda: _quiet(
            "budget", first.host.name, "--max-active", "3", "--as", "admin", "--reason", "x"
        ),
        "claim": lambda: pile_claim(
            host=first.host, namespace=first.namespace, subject=first.subject, user=reviewer
        ),
        "mark": lambda: restatement_mark(
            host=first.host, pairs=[(mates[0].hash, mates[1].hash)], same=True, actor=reviewer, reason="Same."
        ),
        "ack": lambda: decision_ack(decision=Decision.objects.order_by("seq").first(), status="applied"),
        "approve": lambda: draft_approve(
            draft=draft, actor=reviewer, reason="Fine.", confirm_dropped_anchors=True
        ),
        "host description": lambda: ingest_records(
            [{"type": "host", "name": first.host.name, "max_active": 8, "description": "Changed."}]
        ),
        "same text on another host": lambda: ingest_records(
            [
                {
                    "type": "lesson",
                    "host": other.name,
                    "namespace": "x",
                    "subject": "y",
                    "text": mates[1].text,
                    "created_at": 1768694400000,
                }
            ]
        ),
        "correction": lambda: ingest_records(
            [
                {
                    "type": "correction",
                    "host": first.host.name,
                    "id": "c-sweep",
                    "kind": "user_correction",
                    "session": "s-sweep",
                    "text": mates[1].text,
                    "corrected_at": 1768694500000,
                }
            ]
        ),
    }
    found = {}
    for name, write in writes.items():
        pages = _pages()
        before = _read(demo, pages)
        write()
        after = _read(demo, pages)
        changed = [p for p in pages if before[p][1] != after[p][1]]
        stale = [p for p in changed if before[p][0] == after[p][0]]
        found[name] = (bool(changed), stale)
    assert found == {name: (True, []) for name in writes}, json.dumps(found, indent=1)
