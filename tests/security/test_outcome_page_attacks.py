"""Hostile text through the outcome pages (a decision's page with its evidence, revisit, calibration, their
htmx regions), the outcomes export and the API: every session name, correction, reason and user name is
escaped. docs/decisions.md, "Outcomes"; CONTRIBUTING.md ("Lesson text is untrusted")."""

from __future__ import annotations

import io
import json
import time

import pytest
from django.core.management import call_command

from review.models import Decision, DecisionOutcome
from review.services.outcomes import outcomes_refresh
from tests.security.test_page_attacks import P, hostile  # noqa: F401 - the fixture

SESSIONS = ["<script>alert('session2')</script>", "\"><img src=x onerror=alert('session3')>"]
SAID = "<script>alert('said')</script> Third rule three is wrong again"


@pytest.fixture
def judged(ingest, hostile):  # noqa: F811 - the fixture
    """The retire of ``hostile`` contradicted: corrections on its topic in two hostile sessions after it."""
    now = int(time.time() * 1000)
    records = [
        {
            "type": "correction",
            "host": "xss",
            "session": session,
            "kind": "user_correction",
            "text": SAID,
            "corrected_at": now + 1000 * (i + 1),
        }
        for i, session in enumerate(SESSIONS)
    ]
    report = ingest(records)
    assert report.ok, report.error_lines()
    outcomes_refresh(host="xss")
    (outcome,) = DecisionOutcome.objects.all()
    assert outcome.outcome == "contradicted", outcome.evidence
    return outcome.decision


RAW = [*P.values(), *SESSIONS, "<script>alert('said')</script>"]


@pytest.mark.parametrize("htmx", [False, True])
def test_the_outcome_pages_escape_every_hostile_value(client, admin_user, judged, htmx):
    client.force_login(admin_user)
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    paths = [
        f"/decisions/{judged.seq}/",
        "/decisions/revisit/",
        "/decisions/calibration/",
        "/decisions/calibration/?host=xss",
        "/decisions/?outcome=contradicted",
        "/hosts/xss/",
    ]
    for path in paths:
        response = client.get(path, **headers)
        assert response.status_code == 200, path
        body = response.content.decode()
        for payload in RAW:
            assert payload not in body, f"{payload!r} raw on {path}"
    body = client.get(f"/decisions/{judged.seq}/").content.decode()
    assert "&lt;script&gt;alert(&#x27;session2&#x27;)&lt;/script&gt;" in body


def test_the_outcomes_export_keeps_hostile_values_as_data(judged):
    out = io.StringIO()
    call_command("export_outcomes", format="jsonl", stdout=out)
    (record,) = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [c["session"] for c in record["evidence"]["corrections"]] == SESSIONS
    assert record["actor"] == P["username"]


def test_the_api_keeps_hostile_values_as_json(client, judged, admin_user):
    from review.models import ApiToken  # noqa: F401 - only that it exists

    assert Decision.objects.filter(host="xss").exists()
