"""In a browser at 1280 and 390: a contradicted retire's page with its evidence and way back, the log's
outcome badge and filter, the revisit queue; axe clean. Screenshots go to artifacts/."""

from __future__ import annotations

import pytest

from tests.fixtures.outcomes import HOST, RETIRED, h, retire, session

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def contradicted(ingest, reviewer, settings):
    from lessons.models import Host
    from tests.builders import lesson
    from tests.fixtures.outcomes import NS, OTHER, SUBJECT

    settings.OUTCOME_SUPPORT_SESSIONS = 3
    records = [{"type": "host", "name": HOST, "max_active": 8, "budget_enabled": True}]
    records += [
        lesson(host=HOST, namespace=NS, subject=SUBJECT, text=t, created_at=1767225600000 + i)
        for i, t in enumerate((RETIRED, OTHER))
    ]
    assert ingest(records).ok
    decision = retire(Host.objects.get(name=HOST), reviewer)
    assert ingest(session(1, hours=1, corrected=True) + session(2, hours=2, corrected=True)).ok
    return decision


@pytest.mark.parametrize("width", [1280, 390])
def test_outcome_pages_in_a_browser(contradicted, sign_in, live_server, artifacts, width):
    from axe_playwright_python.sync_playwright import Axe

    page = sign_in("rita", "rita-pass", width=width)
    page.goto(f"{live_server.url}/decisions/?outcome=contradicted")
    assert page.locator("tr[data-seq]").count() == 1
    assert page.inner_text(f"#decision-{contradicted.seq} .outcome") == "contradicted"
    page.screenshot(path=str(artifacts / f"outcome-log-{width}.png"), full_page=True)
    page.click(f"#decision-{contradicted.seq} td a >> nth=0")
    page.wait_for_url(f"{live_server.url}/decisions/{contradicted.seq}/")
    assert page.inner_text("[data-testid=outcome]").startswith("contradicted")
    page.screenshot(path=str(artifacts / f"outcome-decision-{width}.png"), full_page=True)
    assert Axe().run(page).response["violations"] == []
    scroll, inner = page.evaluate("[document.documentElement.scrollWidth, innerWidth]")
    assert scroll <= inner
    page.goto(f"{live_server.url}/decisions/revisit/")
    page.click("text=Restore the lesson")
    page.wait_for_url(f"{live_server.url}/lessons/{HOST}/{h(RETIRED)}/")
    page.go_back()
    page.screenshot(path=str(artifacts / f"outcome-revisit-{width}.png"), full_page=True)
    assert Axe().run(page).response["violations"] == []
