"""Who may do what: every page and action of config/urls.py and review/urls.py against the four personas.

The matrix below names every route; ``test_every_route_is_in_the_matrix`` walks the URL patterns so that a
new page cannot be forgotten (and a removed one cannot linger). Each cell runs on a fresh small world with a
valid request, so a 302 or 200 means the action really went through, and asserts the exact status:

- anonymous: pages and actions redirect to the sign-in page (LoginRequiredMiddleware), 302;
- viewer: reads 200, decisions 403;
- reviewer: reads 200, decisions 302 (done, redirected to the page), admin-only pages and posts 403;
- admin: everything. The admin role is staff (as ``manage.py demo`` creates it), so the Django admin
  opens for it; a signed-in viewer or reviewer gets the product's "Not allowed" page (403), and someone
  signed out the product's sign-in page (302), never the admin's own sign-in form.
- /api/v1/ authenticates by bearer token, never by session: a signed-in session without a token gets 401
  on every data endpoint; the schema and its docs page are public (200); the bare root and unknown
  endpoints are 404.
- /favicon.ico redirects everyone, signed in or not, to the static icon (302).

spec: decisions.md ("Actions": who); review/roles.py; CONTRIBUTING.md ("Login is required by default").
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from django.contrib import admin
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import URLPattern, URLResolver, get_resolver, reverse

from lessons.core.text import lesson_hash
from tests.builders import JAN_15_MS, day_ms, lesson
from tests.conftest import CORPORA, CapturedRows, ingest_records, make_user

PERSONAS = ("anonymous", "viewer", "reviewer", "admin")
NS, SUBJECT = "desk.test", "invoice_capture"
ADMIN_NAMESPACE = "admin"

# Expected status per persona: (anonymous, viewer, reviewer, admin).
READ = (302, 200, 200, 200)
DECIDE = (302, 403, 302, 302)
ADMIN_PAGE = (302, 403, 403, 200)
ADMIN_POST = (302, 403, 403, 302)
ADMIN_UPLOAD = (302, 403, 403, 200)  # the upload answers with its import report
TOKEN_ONLY = (401, 401, 401, 401)
PUBLIC = (200, 200, 200, 200)
DJANGO_ADMIN = (302, 403, 403, 200)  # the product's "Not allowed" page (review/admin_site.py)
PUBLIC_REDIRECT = (302, 302, 302, 302)  # /favicon.ico: to the static icon, signed in or not
DECIDE_PAGE = (302, 403, 200, 200)  # a reviewer's page or preview that writes nothing


@dataclass(frozen=True)
class World:
    """Host ``acme`` (budget 3, on) with lessons ``hashes`` (oldest first) on desk.test/invoice_capture:
    0-1 superseded by no one and named by the pending draft ``d-ok`` (triggered by ``user:trix``); 2-3
    superseded by the approved draft ``d-approved``; 4 retired by a decision; 5-6 live."""

    hashes: list[str]

    @property
    def entity(self) -> dict[str, str]:
        return {"host": "acme", "namespace": NS, "subject": SUBJECT}

    def version(self) -> str:
        from lessons.models import Host
        from lessons.selectors.piles import entity_lessons, pile_version

        host = Host.objects.get(name="acme")
        return pile_version(list(entity_lessons(host=host, namespace=NS, subject=SUBJECT)))


@dataclass(frozen=True)
class Cell:
    """One route and method: ``expect`` per persona; ``args``/``query``/``data`` built from the world."""

    route: str
    expect: tuple[int, int, int, int]
    method: str = "get"
    args: Callable[[World], list] = field(default=lambda w: [])
    query: Callable[[World], dict] | None = None
    data: Callable[[World], dict] | None = None
    json: bool = False


def _altimate_zip() -> SimpleUploadedFile:
    root = CORPORA / "altimate-dbt-project"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, str(path.relative_to(root)))
    return SimpleUploadedFile("learn.zip", buffer.getvalue(), content_type="application/zip")


def _dry_run_job() -> int:
    """A finished dry run of the altimate zip that kept its zip (what "Import this zip now" imports)."""
    from review.models import ImportJob

    payload = _altimate_zip().read()
    job = ImportJob.objects.create(
        kind="altimate", state="succeeded", host="dbt-project", options={"dry_run": True}, payload=payload
    )
    return job.pk


def _recount_job() -> int:
    """A finished recount job (what a large status change from a page starts)."""
    from review.models import ImportJob

    job = ImportJob.objects.create(kind="recount", state="succeeded", report={"hosts": 0, "keys": 0})
    return job.pk


MATRIX: dict[str, list[Cell]] = {
    "login": [Cell("login", PUBLIC)],
    "favicon": [Cell("favicon", PUBLIC_REDIRECT)],
    "logout": [
        Cell("logout", (302, 405, 405, 405)),
        Cell("logout", (302, 302, 302, 302), method="post"),
    ],
    "review:queue": [Cell("review:queue", READ)],
    "review:pile": [Cell("review:pile", READ, query=lambda w: w.entity)],
    "review:pile_retire": [
        Cell(
            "review:pile_retire",
            DECIDE,
            method="post",
            query=lambda w: w.entity,
            data=lambda w: {"members": [w.hashes[5]], "reason": "restated", "pile_version": w.version()},
        )
    ],
    "review:pile_restore": [
        Cell(
            "review:pile_restore",
            DECIDE,
            method="post",
            query=lambda w: w.entity,
            data=lambda w: {
                "lessons": [w.hashes[4]],
                "reason": "needed after all",
                "pile_version": w.version(),
            },
        )
    ],
    "review:pile_claim": [
        Cell(
            "review:pile_claim",
            DECIDE,
            method="post",
            query=lambda w: w.entity,
            data=lambda w: {"do": "claim"},
        )
    ],
    "review:pile_resolve": [
        Cell("review:pile_resolve", DECIDE_PAGE, method="post", query=lambda w: w.entity)
    ],
    "review:pile_mark": [
        Cell(
            "review:pile_mark",
            DECIDE,
            method="post",
            query=lambda w: w.entity,
            data=lambda w: {"do": "split", "split-member": w.hashes[5], "split-reason": "a fact of its own"},
        )
    ],
    "review:pile_write": [Cell("review:pile_write", DECIDE_PAGE, query=lambda w: w.entity)],
    "review:pile_write_matrix": [
        Cell(
            "review:pile_write_matrix",
            DECIDE_PAGE,
            method="post",
            query=lambda w: w.entity,
            data=lambda w: {"text": "One line per fact."},
        )
    ],
    "review:lesson": [Cell("review:lesson", READ, args=lambda w: ["acme", w.hashes[0]])],
    "review:job": [Cell("review:job", READ, args=lambda w: [_recount_job()])],
    "review:lesson_retire": [
        Cell(
            "review:lesson_retire",
            DECIDE,
            method="post",
            args=lambda w: ["acme", w.hashes[6]],
            data=lambda w: {"reason": "restated", "pile_version": w.version()},
        )
    ],
    "review:lesson_restore": [
        Cell(
            "review:lesson_restore",
            DECIDE,
            method="post",
            args=lambda w: ["acme", w.hashes[4]],
            data=lambda w: {"reason": "needed after all", "pile_version": w.version()},
        )
    ],
    "review:hosts": [Cell("review:hosts", READ)],
    "review:host": [Cell("review:host", READ, args=lambda w: ["acme"])],
    "review:import_altimate": [
        Cell("review:import_altimate", ADMIN_PAGE),
        Cell(
            "review:import_altimate",
            ADMIN_UPLOAD,
            method="post",
            data=lambda w: {"archive": _altimate_zip(), "host": "dbt-project", "dry_run": "on"},
        ),
    ],
    "review:import_job": [Cell("review:import_job", ADMIN_PAGE, args=lambda w: [_dry_run_job()])],
    "review:import_job_again": [
        Cell("review:import_job_again", ADMIN_POST, method="post", args=lambda w: [_dry_run_job()])
    ],
    "review:decisions": [Cell("review:decisions", READ)],
    "review:decision": [Cell("review:decision", READ, args=lambda w: ["1"])],
    "review:revisit": [Cell("review:revisit", READ)],
    "review:calibration": [Cell("review:calibration", READ)],
    "review:host_names": [Cell("review:host_names", READ)],
    "review:decisions_export_jsonl": [Cell("review:decisions_export_jsonl", READ)],
    "review:decisions_export_csv": [Cell("review:decisions_export_csv", READ)],
    "review:host_budget": [
        Cell("review:host_budget", ADMIN_PAGE, args=lambda w: ["acme"]),
        Cell(
            "review:host_budget",
            ADMIN_POST,
            method="post",
            args=lambda w: ["acme"],
            data=lambda w: {"max_active": "4", "budget_enabled": "on", "reason": "one more", "save": "1"},
        ),
    ],
    "review:draft": [Cell("review:draft", READ, args=lambda w: ["acme", "d-ok"])],
    "review:draft_approve": [
        Cell(
            "review:draft_approve",
            DECIDE,
            method="post",
            args=lambda w: ["acme", "d-ok"],
            data=lambda w: {"approve-reason": "merge", "approve-pile_version": w.version()},
        )
    ],
    "review:draft_reject": [
        Cell(
            "review:draft_reject",
            DECIDE,
            method="post",
            args=lambda w: ["acme", "d-ok"],
            data=lambda w: {"reject-reason": "not better"},
        )
    ],
    "review:draft_rollback": [
        Cell(
            "review:draft_rollback",
            DECIDE,
            method="post",
            args=lambda w: ["acme", "d-approved"],
            data=lambda w: {"rollback-reason": "worse", "rollback-pile_version": w.version()},
        )
    ],
    "review:unmatched_topics": [Cell("review:unmatched_topics", READ, args=lambda w: ["acme"])],
    "api:openapi-json": [Cell("api:openapi-json", PUBLIC)],
    "api:openapi-view": [Cell("api:openapi-view", PUBLIC)],
    "api:api-root": [Cell("api:api-root", (404, 404, 404, 404))],
    "api:unknown-endpoint": [Cell("api:unknown-endpoint", (404, 404, 404, 404), args=lambda w: ["nope"])],
    "api:ingest": [
        Cell(
            "api:ingest",
            TOKEN_ONLY,
            method="post",
            data=lambda w: {"type": "host", "name": "zeta"},
            json=True,
        )
    ],
    "api:piles": [Cell("api:piles", TOKEN_ONLY)],
    "api:lesson": [Cell("api:lesson", TOKEN_ONLY, args=lambda w: [w.hashes[0]])],
    "api:decisions": [Cell("api:decisions", TOKEN_ONLY)],
    "api:job": [Cell("api:job", TOKEN_ONLY, args=lambda w: [1])],
    "api:ack": [
        Cell(
            "api:ack",
            TOKEN_ONLY,
            method="post",
            args=lambda w: [1],
            data=lambda w: {"status": "applied"},
            json=True,
        )
    ],
}


def _admin_cells() -> list[Cell]:
    """The Django admin: its index, each app's index and each registered model's list."""
    cells = [Cell("admin:index", DJANGO_ADMIN)]
    apps = sorted({model._meta.app_label for model in admin.site._registry})
    cells += [Cell("admin:app_list", DJANGO_ADMIN, args=lambda w, a=a: [a]) for a in apps]
    models = sorted((m._meta.app_label, m._meta.model_name) for m in admin.site._registry)
    cells += [Cell(f"admin:{a}_{m}_changelist", DJANGO_ADMIN) for a, m in models]
    return cells


MATRIX[f"{ADMIN_NAMESPACE}:*"] = _admin_cells()


def _route_names(patterns, namespace: str | None = None) -> set[str]:
    names: set[str] = set()
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            inner = ":".join(x for x in (namespace, pattern.namespace) if x) or None
            if pattern.namespace == ADMIN_NAMESPACE:
                names.add(f"{ADMIN_NAMESPACE}:*")  # Django's admin: covered by _admin_cells
                continue
            names |= _route_names(pattern.url_patterns, inner)
        elif isinstance(pattern, URLPattern):
            assert pattern.name, f"route {pattern.pattern} has no name: the matrix names routes"
            names.add(f"{namespace}:{pattern.name}" if namespace else pattern.name)
    return names


def test_every_route_is_in_the_matrix():
    routes = _route_names(get_resolver().url_patterns)
    assert sorted(routes - set(MATRIX)) == [], "routes missing from the roles matrix"
    assert sorted(set(MATRIX) - routes) == [], "matrix entries for routes that no longer exist"


def build_world() -> World:
    """The world of every cell, built through the real services; its decisions are by reviewer ``rob``."""
    from lessons.models import Draft, Host
    from review.services.consolidation import draft_approve
    from review.services.decisions import lessons_retire

    second_reviewer = make_user("rob", "reviewer")

    texts = [f"Lesson number {i}: record field{i} of every invoice as printed." for i in range(7)]
    hashes = [lesson_hash(NS, SUBJECT, t) for t in texts]
    records: list[dict] = [{"type": "host", "name": "acme", "max_active": 3, "budget_enabled": True}]
    records += [
        lesson(
            host="acme",
            namespace=NS,
            subject=SUBJECT,
            text=t,
            created_at=day_ms(i, start=JAN_15_MS),
            hashed=True,
        )
        for i, t in enumerate(texts)
    ]
    for draft_id, members in (("d-ok", hashes[0:2]), ("d-approved", hashes[2:4])):
        records.append(
            {
                "type": "draft",
                "host": "acme",
                "id": draft_id,
                "namespace": NS,
                "subject": SUBJECT,
                "text": f"Record every field of every invoice as printed ({draft_id}).",
                "supersedes": members,
                "drafted_by": "llm:test",
                "triggered_by": "user:trix",
                "gates": {"ground": "pass", "verify": "pass"},
                "created_at": 1769990400000,
            }
        )
    report = ingest_records(records)
    assert report.ok, report.error_lines()
    draft_approve(draft=Draft.objects.get(ext_id="d-approved"), actor=second_reviewer, reason="merge two")
    lessons_retire(
        host=Host.objects.get(name="acme"), hashes=[hashes[4]], actor=second_reviewer, reason="obsolete"
    )
    return World(hashes=hashes)


@pytest.fixture(scope="session")
def world_rows(django_db_setup, django_db_blocker) -> CapturedRows:
    """The world built once per test session (about 140 cells use it); see ``corpus_rows``."""
    with django_db_blocker.unblock():
        return CapturedRows.capture(build_world)


@pytest.fixture
def world(db, world_rows) -> World:
    """The world restored from the session's rows (built afresh if the test wrote first)."""
    return world_rows.value if world_rows.restore() else build_world()


@pytest.fixture
def persona_client(client, viewer, reviewer, admin_user):
    def sign(persona: str):
        if persona == "admin":
            admin_user.is_staff = True
            admin_user.save(update_fields=["is_staff"])
        user = {"anonymous": None, "viewer": viewer, "reviewer": reviewer, "admin": admin_user}[persona]
        if user is not None:
            client.force_login(user)
        return client

    return sign


CELLS = [
    pytest.param(cell, persona, id=f"{cell.route}-{cell.method}-{persona}")
    for cells in MATRIX.values()
    for cell in cells
    for persona in PERSONAS
]


@pytest.mark.parametrize(("cell", "persona"), CELLS)
def test_roles_matrix(cell: Cell, persona: str, world: World, persona_client):
    client = persona_client(persona)
    url = reverse(cell.route, args=cell.args(world))
    if cell.query:
        from urllib.parse import urlencode

        url += "?" + urlencode(cell.query(world))
    data = cell.data(world) if cell.data else None
    if cell.json:
        response = getattr(client, cell.method)(url, data=data, content_type="application/json")
    elif cell.method == "post":
        response = client.post(url, data=data or {})
    else:
        response = client.get(url)
    expected = cell.expect[PERSONAS.index(persona)]
    assert response.status_code == expected, (cell.route, cell.method, persona, response.status_code)
    if expected != 302:
        return
    location = response["Location"]
    if cell.route == "favicon":
        assert location == "/static/icons/pile.svg", location
    elif persona == "anonymous":
        assert "login/?next=" in location
    elif cell.route == "logout":
        assert location == reverse("login")
    else:
        assert "login" not in location, location  # the action went through and redirected to its page
