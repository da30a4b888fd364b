"""Conditional reads of the API (docs/api.md, "Conditional reads"): a 200 carries an ETag; the same read
with If-None-Match gets 304 without running the endpoint, until a committed write, another token or
another page changes the tag."""

from __future__ import annotations

import pytest

from lessons.core.text import lesson_hash
from review.services.decisions import lessons_retire
from review.services.tokens import token_revoke
from tests.review.api.test_api import ingest_body, three_lessons

# Real commits: the version is raised after a transaction commits, which a test's own transaction never does.
pytestmark = pytest.mark.django_db(transaction=True)


def _get(call, path, token, etag=None):
    extra = {"HTTP_IF_NONE_MATCH": etag} if etag else {}
    return call("get", path, token=token, **extra)


@pytest.mark.parametrize("path", ["/piles", "/decisions", "/lessons/" + lesson_hash("ns", "s", "rule 0")])
def test_the_same_read_again_is_304_with_one_query(hosts, call, make_token, path, django_assert_num_queries):
    ingest_body(three_lessons("alpha"))
    token = make_token()
    first = _get(call, path, token)
    assert first.status_code == 200 and first["ETag"].startswith('"') and len(first["ETag"]) == 34
    assert "Authorization" in first["Vary"]
    with django_assert_num_queries(1):  # the version; no token look-up, no endpoint
        again = _get(call, path, token, first["ETag"])
    assert (again.status_code, again.content, again["ETag"]) == (304, b"", first["ETag"])
    # a list of tags, or the weak form of the same tag, matches too; another tag does not
    assert _get(call, path, token, f'"x", W/{first["ETag"]}').status_code == 304
    assert _get(call, path, token, '"x"').status_code == 200


def test_a_committed_write_changes_the_tag_of_every_read(hosts, call, make_token, reviewer):
    ingest_body(three_lessons("alpha"))
    token = make_token()
    paths = ["/piles", "/decisions?since=0", "/lessons/" + lesson_hash("ns", "s", "rule 1")]
    before = {p: _get(call, p, token)["ETag"] for p in paths}
    lessons_retire(
        host=hosts["alpha"], hashes=[lesson_hash("ns", "s", "rule 0")], actor=reviewer, reason="restates 1"
    )
    for path in paths:
        answer = _get(call, path, token, before[path])
        assert answer.status_code == 200, path
        assert answer["ETag"] != before[path]
    assert _get(call, "/decisions?since=0", token).json()["decisions"][0]["action"] == "retire"


def test_another_token_or_another_page_is_another_tag(hosts, call, make_token):
    one, two = make_token(name="one"), make_token(name="two")
    tag = _get(call, "/piles", one)["ETag"]
    assert _get(call, "/piles", two, tag).status_code == 200
    assert _get(call, "/piles?limit=1", one, tag).status_code == 200
    assert _get(call, "/piles", None, tag).status_code == 401  # no token: no 304, the 401
    assert _get(call, "/piles", "lpr_" + "x" * 43, "*").status_code == 401  # "*" matches nothing


def test_a_revoked_token_gets_401_not_304(hosts, call, make_token, reviewer):
    raw = make_token()
    tag = _get(call, "/piles", raw)["ETag"]
    from review.models import ApiToken

    token_revoke(token=ApiToken.objects.get(), actor=reviewer)
    assert _get(call, "/piles", raw, tag).status_code == 401


def test_errors_and_writes_carry_no_tag(hosts, call, make_token):
    token = make_token()
    assert "ETag" not in _get(call, "/lessons/" + "a" * 64, token)  # 404
    posted = call(
        "post", "/ingest", token=token, body=three_lessons("alpha"), content_type="application/x-ndjson"
    )
    assert "ETag" not in posted


def test_a_database_down_before_the_version_is_still_the_json_503(hosts, call, make_token, monkeypatch):
    import sys

    from django.db import OperationalError

    token = make_token()

    def down():
        raise OperationalError("connection refused")

    monkeypatch.setattr(sys.modules["review.api.conditional"], "current", down)
    monkeypatch.setattr("review.api.auth.token_authenticate", lambda raw: down())
    response = _get(call, "/piles", token)
    assert (response.status_code, response["Retry-After"]) == (503, "60")
    assert response.json()["error"] == "database unavailable"
