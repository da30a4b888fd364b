"""2,000 piles: ``manage.py piles`` and ``GET /api/v1/piles`` read them all with bounded queries (issue 10,
build 3; SQLite failed from ~990 piles with "Expression tree is too large"). spec: docs/piles-and-recurrence.md, README.md ("Commands")."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lessons.core.text import lesson_hash
from lessons.selectors.piles import PILE_CHUNK
from tests.builders import JAN_1_MS, lesson_line

PILES = 2000
HOSTS = ("alpha", "beta", "gamma")


def _entities() -> list[tuple[str, str, str]]:
    """(host, namespace, subject) of every pile: subjects repeat across namespaces and hosts, so a
    members query by subject alone would over-fetch (the reader must match the namespace too)."""
    return [(HOSTS[i % 3], f"ns{i % 5}", f"subject-{i // 15:03d}") for i in range(PILES)]


@pytest.fixture
def many_piles(db, ingest, settings):
    """2,000 entities over three hosts with a budget of 1, each with two live lessons (a pile), and on
    each host one entity within budget whose subject is also a pile's; ingested through the real writer,
    grouped in its transaction (not left to the background regroup, which a bulk ingest of 4,000 lessons
    would: tests/lessons/ingest/test_facts_later.py)."""
    from lessons.models import Host

    settings.FACTS_DEFER_LESSONS = 10_000

    for name in HOSTS:
        Host.objects.create(name=name, max_active=1, budget_enabled=True)
    lines = []
    expected = {}
    for n, (host, namespace, subject) in enumerate(_entities()):
        texts = [f"rule {k} of {namespace}/{subject}" for k in (1, 2)]
        for k, text in enumerate(texts):
            created = JAN_1_MS + n * 10 + k
            lines.append(
                lesson_line(host=host, namespace=namespace, subject=subject, text=text, created_at=created)
            )
        expected[(host, namespace, subject)] = [lesson_hash(namespace, subject, t) for t in texts]
    for host in HOSTS:  # within budget: never a pile, though its subject is one on ns0
        lines.append(
            lesson_line(
                host=host, namespace="ns-quiet", subject="subject-000", text="alone", created_at=JAN_1_MS
            )
        )
    report = ingest(lines)
    assert report.ok, report.error_lines()
    return dict(sorted(expected.items()))


def _keys_and_members(piles: list[dict]) -> dict:
    return {(p["host"], p["namespace"], p["subject"]): [m["hash"] for m in p["members"]] for p in piles}


def test_the_json_command_streams_every_pile_in_bounded_queries(many_piles):
    out = io.StringIO()
    with CaptureQueriesContext(connection) as queries:
        call_command("piles", "--format", "json", stdout=out)
    text = out.getvalue()
    piles = json.loads(text)["piles"]
    assert len(piles) == PILES
    assert _keys_and_members(piles) == many_piles  # the order too: dicts compare unordered, so check it
    assert [(p["host"], p["namespace"], p["subject"]) for p in piles] == list(many_piles)
    assert text == json.dumps({"piles": piles}, indent=2, ensure_ascii=False) + "\n"  # one dump's bytes
    chunks = -(-PILES // PILE_CHUNK)
    # the queue rows, each host when first met, members and drafts per chunk: none per pile
    assert len(queries) == 1 + len(HOSTS) + 2 * chunks
    assert max(len(q["sql"]) for q in queries) < 20_000


def test_the_text_command_lists_every_pile(many_piles):
    out = io.StringIO()
    call_command("piles", stdout=out)
    lines = out.getvalue().splitlines()
    assert lines[-1] == f"{PILES} pile(s)"
    assert len(lines) == 1 + PILES * 3 + 1  # header, each pile and its two members, the total


def test_the_api_pages_through_every_pile_with_its_cursor(many_piles, call, make_token):
    token = make_token()
    seen, cursor, pages = [], None, 0
    while True:
        path = "/piles?limit=500" + (f"&cursor={cursor}" if cursor else "")
        response = call("get", path, token=token)
        assert response.status_code == 200, response.content
        body = response.json()
        assert set(body) == {"piles", "next"}
        seen += body["piles"]
        pages += 1
        cursor = body["next"]
        if cursor is None:
            break
    assert (pages, len(seen)) == (4, PILES)
    assert [(p["host"], p["namespace"], p["subject"]) for p in seen] == list(many_piles)
    assert _keys_and_members(seen) == many_piles


def test_the_api_default_page_is_100_piles(many_piles, call, make_token):
    body = call("get", "/piles?host=beta", token=make_token()).json()
    beta = [k for k in many_piles if k[0] == "beta"]
    assert [(p["host"], p["namespace"], p["subject"]) for p in body["piles"]] == beta[:100]
    assert body["next"] is not None
