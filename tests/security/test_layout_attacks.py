"""Layout attack: names, descriptions, texts and reasons with no space to break at (at the length limits
the interchange allows) must not widen a page beyond the window. Screenshots go to artifacts/.
spec: interchange.md (limits: host 64, namespace/subject/ids 200, description and text 1000); decisions.md
(reason 500).
"""

from __future__ import annotations

import importlib
from urllib.parse import urlencode

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HOST = "long-" + "h" * 59
NS, SUBJECT = "n" * 200, "s" * 200
T0 = 1767225600000
PAGES_WITHOUT_DRAFTS = ("/", "pile", "lesson", "/decisions/", "/hosts/", f"/hosts/{HOST}/budget/")


@pytest.fixture(autouse=True)
def roles(transactional_db):
    from django.apps import apps

    importlib.import_module("review.migrations.0002_roles").create_roles(apps, None)


@pytest.fixture
def long_world(ingest, admin_user):
    from lessons.core.text import lesson_hash
    from lessons.models import Host
    from review.services.decisions import lessons_retire

    texts = ["A" * 1000, "B" * 1000, "https://example.com/" + "x" * 980]
    records = [
        {"type": "host", "name": HOST, "max_active": 1, "budget_enabled": True, "description": "D" * 1000}
    ]
    for i, text in enumerate(texts):
        records.append(
            {
                "type": "lesson",
                "host": HOST,
                "namespace": NS,
                "subject": SUBJECT,
                "text": text,
                "created_at": T0 + i,
                "store": "st" * 100,
                "lesson_id": "L-" + "a" * 198,
            }
        )
    first = lesson_hash(NS, SUBJECT, texts[0])
    records.append(
        {
            "type": "verdict",
            "host": HOST,
            "lesson": first,
            "verdict": "v" * 64,
            "metric": "m" * 200,
            "measured_at": T0 + 5,
        }
    )
    records.append(
        {
            "type": "draft",
            "host": HOST,
            "id": "d" * 200,
            "namespace": NS,
            "subject": SUBJECT,
            "text": "C" * 1000,
            "supersedes": [first, lesson_hash(NS, SUBJECT, texts[2])],
            "drafted_by": "llm:" + "q" * 196,
            "gates": {"ground": "pass", "verify": "pass"},
            "created_at": T0 + 8,
        }
    )
    assert ingest(records).ok
    lessons_retire(
        host=Host.objects.get(name=HOST),
        hashes=[lesson_hash(NS, SUBJECT, texts[1])],
        actor=admin_user,
        reason="R" * 500,
        reason_code="other",
    )
    return first


@pytest.mark.parametrize("width", [1280, 1024])
def test_no_page_is_wider_than_the_window_with_unbroken_long_values(long_world, sign_in, artifacts, width):
    page = sign_in("ada", "ada-pass", width=width)
    base = page.url.rstrip("/")
    paths = {
        "pile": "/pile/?" + urlencode({"host": HOST, "namespace": NS, "subject": SUBJECT}),
        "lesson": f"/lessons/{HOST}/{long_world}/",
    }
    for name in PAGES_WITHOUT_DRAFTS:
        path = paths.get(name, name)
        page.goto(base + path)
        page.screenshot(
            path=str(artifacts / f"attack-long-{name.strip('/').replace('/', '-') or 'queue'}-{width}.png")
        )
        widths = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
        assert widths[0] == widths[1], f"{path} is {widths[0]}px wide in a {widths[1]}px window"


def test_the_draft_page_is_not_wider_than_the_window_with_unbroken_long_values(
    long_world, sign_in, artifacts
):
    page = sign_in("ada", "ada-pass", width=1280)
    page.goto(page.url.rstrip("/") + f"/drafts/{HOST}/{'d' * 200}/")
    page.screenshot(path=str(artifacts / "attack-long-draft-1280.png"))
    widths = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert widths[0] == widths[1]
