"""Property-based run of the API against its own OpenAPI schema (schemathesis): no request it can
generate from /api/v1/openapi.json makes the server fail, and every answer matches the schema.

The Django WSGI handler is called in-process (schemathesis' WSGI transport), inside the test's
transaction; like Django's test client, the run disconnects ``close_old_connections`` so the
connection holding that transaction stays open.
"""

from __future__ import annotations

import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from lessons.ingest.passes import ingest_sources
from lessons.ingest.reading import bytes_source
from review.services.budget import host_set_budget
from tests.builders import JAN_1_MS, lesson_line

# The ingest body is interchange JSON Lines: text on the wire.
schemathesis.serializer.alias("application/x-ndjson", "text/plain")


@pytest.fixture
def wsgi_app():
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield WSGIHandler()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


def test_no_generated_request_makes_a_server_error(wsgi_app, hosts, make_token, admin_user):
    body = "\n".join(
        lesson_line(host="alpha", namespace="ns", subject="s", text=f"rule {i}", created_at=JAN_1_MS + i)
        for i in range(3)
    )
    assert ingest_sources(sources=[bytes_source(body.encode())]).ok
    host_set_budget(host=hosts["alpha"], actor=admin_user, max_active=3, budget_enabled=True, reason="room")
    raw = make_token()
    schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", wsgi_app)
    seen: dict[str, set[int]] = {}

    @settings(
        max_examples=150,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=schema.as_strategy())
    def run(case):
        # Every case carries the valid token (authentication has its own tests). The ingest body is
        # declared as a string, but not every string is interchange JSON Lines: a 400 with the import
        # report is the documented answer, so "schema-valid data must be accepted" does not apply.
        case.headers = {**(case.headers or {}), "Authorization": f"Bearer {raw}"}
        response = case.call_and_validate(excluded_checks=[positive_data_acceptance])
        seen.setdefault(f"{case.method} {case.path}", set()).add(response.status_code)

    run()
    print(seen)
    assert sorted(seen) == [
        "GET /api/v1/decisions",
        "GET /api/v1/jobs/{job_id}",
        "GET /api/v1/lessons/{lesson_hash}",
        "GET /api/v1/piles",
        "POST /api/v1/decisions/{seq}/ack",
        "POST /api/v1/ingest",
    ]
