"""No page logs a CSP violation (or any console message) in chromium (issue 13, fault 6 and acceptance).

Every page kind is visited as a signed-in reviewer and as an admin; a ``securitypolicyviolation`` event or a
console message of any kind fails the test, naming the page.
"""

from __future__ import annotations

import pytest

from tests.security.builders import DRAFT_ID, HOST, NS, SUBJECT, build_pile, retire

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Collects violations from the first moment of every document (before any script of the page runs).
LISTEN = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__violations.push(e.violatedDirective + " " + (e.blockedURI || "inline") + " " + (e.sample || ""));
});
"""


@pytest.fixture
def site(transactional_db):
    """The builders' pile, one retire in the log, the roles (a transactional flush drops the groups)."""
    from django.contrib.auth.models import User

    from review.roles import roles_ensure
    from tests.conftest import make_user

    roles_ensure()
    hashes = build_pile()
    retirer = make_user("rex", "reviewer")
    retire(actor=retirer, hashes=[hashes[3]])
    return {"hashes": hashes, "user_id": User.objects.get(username="rex").pk}


def _pages(site: dict, *, admin: bool) -> list[str]:
    first = site["hashes"][0]
    pages = [
        "/",
        f"/pile/?host={HOST}&namespace={NS}&subject={SUBJECT}",
        f"/lessons/{HOST}/{first}/",
        "/hosts/",
        f"/hosts/{HOST}/",
        "/decisions/",
        "/decisions/?action=retire",
        f"/drafts/{HOST}/{DRAFT_ID}/",
        f"/hosts/{HOST}/unmatched-topics/",
        "/no-such-page/",
        "/api/v1/docs",
    ]
    if admin:
        pages += [
            f"/hosts/{HOST}/budget/",
            "/imports/altimate/",
            "/admin/",
            "/admin/auth/user/",
            f"/admin/auth/user/{site['user_id']}/change/",
            "/admin/lessons/host/",
            "/admin/lessons/lesson/",
            "/admin/review/apitoken/add/",
        ]
    return pages


# The one console line a page answered on purpose with an error status logs (here the 404 page).
EXPECTED_STATUS_LINE = (
    "console error: Failed to load resource: the server responded with a status of {status}"
)


def _problems(page, visit) -> list[str]:
    messages: list[str] = []
    page.on("console", lambda msg: messages.append(f"console {msg.type}: {msg.text}"))
    page.on("pageerror", lambda exc: messages.append(f"page error: {exc}"))
    response = visit()
    page.wait_for_load_state("networkidle")
    if response is not None and response.status >= 400:
        expected = EXPECTED_STATUS_LINE.format(status=response.status)
        messages = [m for m in messages if not m.startswith(expected)]
    return messages + [f"violation: {v}" for v in page.evaluate("window.__violations")]


@pytest.mark.parametrize("persona", ["reviewer", "admin"])
def test_no_page_logs_a_violation_or_a_console_message(site, browser, live_server, persona):
    from tests.conftest import make_user

    user = make_user("pat", persona)
    user.is_staff = persona == "admin"  # the admin role is staff (the user admin keeps it so)
    user.save(update_fields=["is_staff"])
    context = browser.new_context()
    context.add_init_script(LISTEN)
    page = context.new_page()
    page.set_default_timeout(15_000)
    found: dict[str, list[str]] = {}

    def sign_in():
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", user.username)
        page.fill("input[name=password]", "pat-pass")
        page.click("button[type=submit]")
        page.wait_for_url(f"{live_server.url}/")

    problems = _problems(page, sign_in)
    if problems:
        found["/accounts/login/"] = problems
    visited = 0
    for url in _pages(site, admin=persona == "admin"):
        page = context.new_page()
        problems = _problems(page, lambda page=page, url=url: page.goto(f"{live_server.url}{url}"))
        # a page that sent us back to a sign-in form was not visited as this persona
        assert "/login/" not in page.url, url
        visited += 1
        if problems:
            found[url] = problems
        page.close()
    context.close()
    assert found == {}
    assert visited == len(_pages(site, admin=persona == "admin"))
