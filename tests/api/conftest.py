"""Fixtures of the API tests: hosts, tokens (raw values), a client that sends a bearer token."""

from __future__ import annotations

import json

import pytest


@pytest.fixture
def hosts(db):
    """Two hosts, both with a budget of 2: ``alpha`` and ``beta``."""
    from lessons.models import Host

    return {
        "alpha": Host.objects.create(name="alpha", max_active=2, budget_enabled=True),
        "beta": Host.objects.create(name="beta", max_active=2, budget_enabled=True),
    }


@pytest.fixture
def make_token(db):
    """``make_token(host=None, ingest=True, read=True, name="t") -> raw token``."""
    from review.services.tokens import token_create

    def make(host=None, *, ingest=True, read=True, name="t"):
        _token, raw = token_create(name=name, host=host, can_ingest=ingest, can_read=read)
        return raw

    return make


@pytest.fixture
def call(client):
    """``call(method, path, token=None, body=None, content_type=...) -> response`` against /api/v1/."""

    def run(method, path, token=None, body=None, content_type="application/json", **extra):
        headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token else {}
        url = "/api/v1" + path
        if method == "get":
            return client.get(url, **headers, **extra)
        data = body if isinstance(body, (bytes, str)) else json.dumps(body) if body is not None else b""
        return client.post(url, data=data, content_type=content_type, **headers, **extra)

    return run
