"""Hostile values through the pages whose HTML is built in Python (issue 10: ``LeanTable``,
``LeanSelect``, the pile's member rows, the hosts rows, the log chart, ``route_path`` / ``target_link``)
and the job pages: every page they reach is parsed, and no element or attribute a value tried to inject
exists, no link is a ``javascript:`` URL, and no page is a 500. spec: CONTRIBUTING.md ("Lesson text is
untrusted").
"""

from __future__ import annotations

from urllib.parse import urlencode

import pytest
from django.contrib.auth.models import User

from lessons.core.text import lesson_hash
from lessons.models import Draft, Host
from review.models import ImportJob
from review.piles.selectors import QUEUE_SORTS
from review.services.decisions import lessons_retire
from review.web.links import draft_url
from tests import builders
from tests.html import inline_text, parse

T0 = 1767225600000
# Each breaks out of one context: element text, a double- or single-quoted attribute, a textarea, a URL.
# An injected element is named ``x-inj``, an injected attribute ``data-inj``.
BREAKS = (
    '"><x-inj></x-inj>',
    "' data-inj='1",
    '" data-inj="1',
    "</textarea><x-inj></x-inj>",
    "</title></script><x-inj></x-inj>",
    "&amp;&lt;x-inj&gt;",
    "javascript:alert(1)",
    "a%2Fb/c%00",
    "\u202eevil\u200b\u2066",
    "w" * 190,
)
HOSTILE = " ".join(BREAKS[:6])  # at most 200 characters for identifiers
LONG_WORD = "x" * 900


def _records():
    """Host ``xss`` (budget 1): two entities with hostile namespaces/subjects, 3 lessons each with hostile
    text, store and lesson id, verdicts, an exposure, a correction, drafts with hostile ids."""
    records = [
        {"type": "host", "name": "xss", "max_active": 1, "budget_enabled": True, "description": HOSTILE}
    ]
    entities = [(HOSTILE[:200], BREAKS[0] + BREAKS[2]), ("javascript:alert(1)", "a%2Fb/c/../" + BREAKS[1])]
    hashes = []
    for e, (ns, subject) in enumerate(entities):
        for i in range(3):
            text = f"{BREAKS[i]} shared words here {BREAKS[3 + i]} {BREAKS[8]} {LONG_WORD if i == 0 else i}"
            hashes.append(lesson_hash(ns, subject, text))
            records.append(
                builders.lesson(
                    host="xss",
                    namespace=ns,
                    subject=subject,
                    text=text,
                    created_at=T0 + 10 * e + i,
                    origin="llm",
                    store=BREAKS[e],
                    lesson_id=BREAKS[3 + i] + str(e),
                    tags=list(BREAKS[:4]),
                )
            )
            records.append(
                {
                    "type": "verdict",
                    "host": "xss",
                    "lesson": hashes[-1],
                    "verdict": BREAKS[i][:64],
                    "metric": BREAKS[3 + i],
                    "baseline": 1,
                    "current": 2,
                    "horizon_ms": 86400000,
                    "measured_at": T0 + 100 + i,
                }
            )
        records.append(
            {
                "type": "draft",
                "host": "xss",
                "id": [BREAKS[0] + "/" + BREAKS[6], BREAKS[7] + BREAKS[1]][e],
                "namespace": ns,
                "subject": subject,
                "text": BREAKS[3] + " draft " + BREAKS[0],
                "supersedes": hashes[-3:-1],
                "drafted_by": BREAKS[2],
                "triggered_by": BREAKS[1],
                "gates": {"ground": "pass", "verify": "pass"},
                "created_at": T0 + 200 + e,
            }
        )
    records += [
        {
            "type": "exposure",
            "host": "xss",
            "session": BREAKS[0],
            "lesson": hashes[0],
            "shown_at": T0 + 300,
            "tier": BREAKS[2],
        },
        {
            "type": "correction",
            "host": "xss",
            "session": BREAKS[0],
            "kind": BREAKS[1],
            "text": BREAKS[3] + " shared words here again",
            "corrected_at": T0 + 301,
        },
    ]
    return records, entities, hashes


@pytest.fixture
def hostile(ingest, reviewer):
    records, entities, hashes = _records()
    report = ingest(records)
    assert report.ok, report.error_lines()
    villain = User.objects.create_user(username="v'\"<x-inj>&", password="x")
    villain.groups.add(*reviewer.groups.all())
    host = Host.objects.get(name="xss")
    lessons_retire(host=host, hashes=[hashes[2]], actor=villain, reason=" ".join(BREAKS[:4]))
    recount = ImportJob.objects.create(
        kind=ImportJob.Kind.RECOUNT,
        state=ImportJob.State.FAILED,
        error=HOSTILE,
        created_by=villain,
        options={},
    )
    done = ImportJob.objects.create(
        kind=ImportJob.Kind.RECOUNT,
        state=ImportJob.State.SUCCEEDED,
        created_by=villain,
        options={},
        report={"hosts": 1, "keys": 2, "sessions": 3, "attributions": 0, "lessons": 0},
    )
    imported = ImportJob.objects.create(
        kind=ImportJob.Kind.ALTIMATE,
        state=ImportJob.State.FAILED,
        host="xss",
        filename=HOSTILE[:255],
        error=HOSTILE,
        created_by=villain,
        options={"dry_run": True},
    )
    return entities, hashes, [recount.pk, done.pk], imported.pk


def _pages(entities, hashes, jobs, import_job):
    queue_sorts = list(QUEUE_SORTS)  # every column the queue sorts by
    paths = ["/", "/?" + urlencode({"host": "xss", "namespace": BREAKS[0], "q": BREAKS[3]})]
    paths += [f"/?sort={s}" for s in queue_sorts] + [f"/?sort=-{s}" for s in queue_sorts]
    paths += ["/?" + urlencode({"host": BREAKS[0]}), "/?" + urlencode({"sort": BREAKS[1]})]
    for ns, subject in entities:
        entity = urlencode({"host": "xss", "namespace": ns, "subject": subject})
        paths += [f"/pile/?{entity}", f"/pile/?{entity}&keep={BREAKS[0]}", f"/pile/?{entity}&show=all"]
    paths += [f"/lessons/xss/{h}/" for h in hashes]
    paths += [
        "/hosts/",
        "/hosts/xss/",
        "/hosts/xss/?sort=total",
        "/hosts/xss/?sort=-target",
        "/hosts/xss/budget/",
    ]
    paths += ["/hosts/xss/unmatched-topics/", "/decisions/"]
    for params in (
        {"host": "xss"},
        {"actor": "v'\"<x-inj>&"},
        {"batch": BREAKS[0]},
        {"host": BREAKS[1], "actor": BREAKS[0]},
        {"from": BREAKS[0], "to": "2026-01-01"},
    ):
        paths.append("/decisions/?" + urlencode(params))
    paths += [f"/jobs/{j}/" for j in jobs] + [f"/imports/jobs/{import_job}/"]
    paths += [draft_url("xss", d.ext_id) for d in Draft.objects.all()]
    return paths


def assert_nothing_injected(body: str, path: str) -> None:
    root = parse(body)
    for el in root.iter():
        assert not el.tag.startswith("x-inj"), f"injected element on {path}"
        for name, value in el.attrs.items():
            assert name != "data-inj", f"injected attribute on {path}: <{el.tag}>"
            assert not name.startswith("on"), f"event handler {name} on {path}"
            if name in ("href", "src", "action", "formaction", "hx-get", "hx-post", "xlink:href"):
                assert not value.strip().lower().startswith("javascript:"), f"{name}={value!r} on {path}"
        if el.tag == "script":
            assert "x-inj" not in el.text, f"script holds a value on {path}"
        shown = [c for c in el.children if isinstance(c, str)] + list(el.attrs.values())
        for text in shown:  # once unescaped by the parser, a value escaped twice still shows entities
            for twice in ("&lt;/x-inj", "&#x27; data-inj", "&quot; data-inj", "&#39; data-inj"):
                assert twice not in text, f"escaped twice on {path}: <{el.tag}> {text[:80]!r}"


@pytest.mark.parametrize("htmx", [False, True])
def test_hostile_values_inject_nothing_on_any_page(client, admin_user, hostile, htmx):
    client.force_login(admin_user)
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    for path in _pages(*hostile):
        response = client.get(path, **headers)
        assert response.status_code in (200, 400, 404), (path, response.status_code)
        assert_nothing_injected(response.content.decode(), path)


def test_hostile_values_inject_nothing_for_a_viewer(client, viewer, hostile):
    client.force_login(viewer)
    for path in _pages(*hostile):
        response = client.get(path)
        assert response.status_code in (200, 400, 403, 404), (path, response.status_code)
        assert_nothing_injected(response.content.decode(), path)


def test_every_hostile_page_is_found(client, admin_user, hostile):
    """The pages above are the pages meant (a 404 would test nothing)."""
    client.force_login(admin_user)
    entities, hashes, jobs, import_job = hostile
    for ns, subject in entities:
        entity = urlencode({"host": "xss", "namespace": ns, "subject": subject})
        response = client.get(f"/pile/?{entity}")
        assert response.status_code == 200
        shown = inline_text(parse(response.content))  # the shared words are marked: read past the marks
        assert f"{BREAKS[0]} shared words here {BREAKS[3]}" in shown  # the text as sent, once escaped
    hosts = parse(client.get("/hosts/").content).find("tr", data_host="xss")
    assert hosts.find("td", cls="text").text == HOSTILE
    for path in [f"/lessons/xss/{h}/" for h in hashes] + ["/hosts/xss/", f"/imports/jobs/{import_job}/"]:
        assert client.get(path).status_code == 200, path
    for j in jobs:
        assert client.get(f"/jobs/{j}/").status_code == 200
    drafts = [draft_url("xss", d.ext_id) for d in Draft.objects.order_by("pk")]
    assert len(drafts) == 2
    for path in drafts:
        assert client.get(path).status_code == 200, path
