"""Every page we render, at 1440 and 390 px wide: no horizontal scroll, and zero axe-core violations.

Each page is loaded once; the width changes on the loaded page (the layout is recomputed, nothing is
fetched again), so both checks run at both widths for the cost of one visit. axe-core is the copy bundled in
axe-playwright-python (no network). The API docs page's Swagger UI is django-ninja's bundle: our shell
around it (templates/ninja/swagger.html) must pass, and what axe still finds must be inside #swagger-ui,
exactly the two rules docs/reviewing.md names ("The API docs page").
"""

from __future__ import annotations

import importlib
import io
import zipfile

import pytest

from tests.conftest import CORPORA
from tests.fixtures.browser import browser, sign_in  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = (1440, 390)
ADBUY_PILE = "pile/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture"
ADMIN_PAGES = {
    "queue": "",
    "pile": ADBUY_PILE,
    "lesson": "lessons/adbuy-desk/{lesson}/",
    "hosts": "hosts/",
    "host": "hosts/adbuy-desk/",
    "budget": "hosts/adbuy-desk/budget/",
    "unmatched topics": "hosts/support-triage/unmatched-topics/",
    "decisions": "decisions/",
    "decision": "decisions/1/",
    "revisit": "decisions/revisit/",
    "calibration": "decisions/calibration/",
    "import": "imports/altimate/",
    "draft": "drafts/adbuy-desk/rec-adbuy-consolidate-1/",
    "write a consolidation": "pile/write/?host=adbuy-desk&namespace=desk.adbuy&subject=invoice_capture",
    "not found": "no-such-page/",
    "import job, finished": "imports/jobs/{finished}/",
    "import job, queued": "imports/jobs/{queued}/",
    "recount job, finished": "jobs/{recount_finished}/",
    "recount job, queued": "jobs/{recount_queued}/",
}
# Swagger UI's own markup: each operation row is role=button with a copy button inside (one
# nested-interactive node per operation), and its tag heading (h3) follows the info title (h2) of its
# own header.
SWAGGER_HEADING_ORDER = 1


@pytest.fixture(autouse=True)
def roles(transactional_db):
    from django.apps import apps

    importlib.import_module("review.migrations.0002_roles").create_roles(apps, None)


@pytest.fixture
def world(corpora, reviewer, admin_user, viewer):
    """The corpora with one retire on adbuy-desk (so the log, the lesson's decisions and the not-live list
    have a row); returns that lesson's hash."""
    from lessons.models import Host, Lesson
    from review.services.decisions import lessons_retire

    lesson = Lesson.objects.get(host__name="adbuy-desk", hash__startswith="3d46cb35")
    lessons_retire(
        host=Host.objects.get(name="adbuy-desk"),
        hashes=[lesson.hash],
        actor=reviewer,
        reason="Drifted twice; claims-intake/intake_form style rule.",
        reason_code="drifted",
    )
    from review.services.outcomes import outcomes_refresh

    outcomes_refresh(host="adbuy-desk")  # its outcome: too early (nothing arrived after it)
    return lesson.hash


@pytest.fixture
def jobs(world, admin_user):
    """Two import jobs (an altimate zip, the kind the import job page shows) and two recount jobs for
    their pages: one of each run to its end (the report), one still queued (its progress bar)."""
    from review.models import ImportJob
    from review.services.jobs import job_create, job_run

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted((CORPORA / "altimate-dbt-project").rglob("*")):
            if path.is_file():
                archive.write(path, str(path.relative_to(CORPORA / "altimate-dbt-project")))
    upload = {
        "kind": ImportJob.Kind.ALTIMATE,
        "payload": buffer.getvalue(),
        "options": {"dry_run": False},
        "host": "jobs-host",
        "filename": "learn.zip",
        "created_by": admin_user,
    }
    finished = job_create(**upload)
    job_run(finished.pk)
    queued = job_create(**upload)
    recount = {
        "kind": ImportJob.Kind.RECOUNT,
        "payload": b'{"hosts": {}}',
        "options": {},
        "created_by": admin_user,
    }
    recount_finished = job_create(**recount)
    job_run(recount_finished.pk)
    recount_queued = job_create(**recount)
    return {
        "finished": finished.pk,
        "queued": queued.pk,
        "recount_finished": recount_finished.pk,
        "recount_queued": recount_queued.pk,
    }


def check(page, *, swagger: bool = False) -> dict:
    """``{width: problems}`` of the loaded page at each width; ``problems`` lists the overflow (if any)
    and axe's violations as ``rule: nodes``."""
    from axe_playwright_python.sync_playwright import Axe

    axe = Axe()
    found = {}
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        problems = []
        scroll, inner = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
        if scroll > inner:
            problems.append(f"{scroll}px wide in {inner}px")
        violations = axe.run(page).response["violations"]
        if swagger:
            outside = page.evaluate(
                "sels => sels.filter(s => !document.querySelector(s).closest('#swagger-ui'))",
                [node["target"][0] for v in violations for node in v["nodes"]],
            )
            problems += [f"outside Swagger UI: {s}" for s in outside]
            counts = {v["id"]: len(v["nodes"]) for v in violations}
            operations = page.locator("#swagger-ui .opblock").count()
            if counts != {"heading-order": SWAGGER_HEADING_ORDER, "nested-interactive": operations}:
                problems.append(f"Swagger UI's own violations changed: {counts}")
        else:
            problems += [f"{v['id']}: {len(v['nodes'])}" for v in violations]
        if problems:
            found[width] = problems
    return found


def test_every_page_fits_390_and_1440_with_no_axe_violation(world, jobs, browser, live_server, sign_in):  # noqa: F811
    problems = {}
    page = sign_in("ada", "ada-pass")
    base = live_server.url + "/"
    for name, path in ADMIN_PAGES.items():
        page.set_viewport_size({"width": WIDTHS[0], "height": 900})
        page.goto(base + path.format(lesson=world, **jobs))
        problems[name] = check(page)  # leaves the page at 390 px
        if name == "queue":  # at 390 (check leaves it there) no cell's text runs into the next one
            spill = page.eval_on_selector_all(
                "table.queue-table tbody td",
                "els => els.filter(td => td.scrollWidth > td.clientWidth).length",
            )
            assert spill == 0
        if name == "queue":  # finding 13: Import looks like the other links, not disabled
            colours = page.eval_on_selector_all(
                ".mainnav a:not([aria-current])",
                "els => els.map(a => [a.textContent, getComputedStyle(a).color])",
            )
            assert colours == [
                [text, "rgb(31, 35, 40)"] for text in ("Hosts", "Decisions", "Revisit", "Import")
            ]
        if name == "pile":  # stacked rows name each value by its column (keyboard.js's data-label)
            labels = page.evaluate(
                "[...document.querySelector('table.members tr[data-row]').children].map(td => td.dataset.label)"
            )
            assert labels == [
                "Select",
                "Lesson",
                "Text",
                "Created",
                "Origin / kind",
                "Latest verdict",
                "Recurrence",
            ]
        if name == "draft":  # finding 13: "decide ↓" keeps its arrow on its line
            assert page.evaluate("document.querySelector('a.jump').getClientRects().length") == 1
        if name == "not found":
            assert page.locator("[data-testid=not-found]").count() == 1  # ours, not Django's debug page
        else:  # every other page is the page itself (the job pages were once 404s of the wrong kind)
            assert page.locator("[data-testid=not-found]").count() == 0, name

    page.goto(base + "api/v1/docs")
    page.wait_for_selector("#swagger-ui .opblock")
    problems["api docs"] = check(page, swagger=True)
    page.click("text=Back to Lesson Pile Review")
    page.wait_for_url(base)

    vera = sign_in("vera", "vera-pass")
    vera.goto(base + ADBUY_PILE)
    problems["pile, as a viewer"] = check(vera)
    vera.goto(base + "imports/altimate/")
    assert vera.locator("[data-testid=forbidden]").count() == 1
    problems["not allowed"] = check(vera)

    anonymous = browser.new_page()
    try:
        anonymous.goto(base + "accounts/login/")
        problems["sign in"] = check(anonymous)
    finally:
        anonymous.close()

    assert {name: found for name, found in problems.items() if found} == {}
    assert len(problems) == len(ADMIN_PAGES) + 4
