"""Request bodies (issue 13, faults 1 and 7): the API reads its body as a stream up to API_MAX_BODY_BYTES,
chunked or not; a body of unknown length it cannot read is 411; an empty batch is refused, never "written";
form bodies are capped at 2 MiB while the API and the admin upload keep their own limits.
"""

from __future__ import annotations

import io
import json

import pytest
from django.test import override_settings

from review.request_body import E_EMPTY_BATCH, E_LENGTH_REQUIRED, E_LENGTH_REQUIRED_DETAIL
from tests.security.builders import lesson, pile_records


@pytest.fixture
def token(db):
    from review.services.tokens import token_create

    return token_create(name="t", host=None, can_ingest=True, can_read=True)[1]


def _body(records: list[dict]) -> bytes:
    return "\n".join(json.dumps(r) for r in records).encode()


def _chunked_post(client, token: str, body: bytes, *, terminated: bool = True, chunked: bool = True):
    """A POST as a server hands a de-chunked body to Django: no CONTENT_LENGTH, the whole body in
    ``wsgi.input``, ``wsgi.input_terminated`` set (gunicorn does this)."""
    extra = {"CONTENT_LENGTH": "", "wsgi.input": io.BytesIO(body)}
    if chunked:
        extra["HTTP_TRANSFER_ENCODING"] = "chunked"
    if terminated:
        extra["wsgi.input_terminated"] = True
    return client.generic(
        "POST",
        "/api/v1/ingest",
        data=b"",
        content_type="application/x-ndjson",
        HTTP_AUTHORIZATION=f"Bearer {token}",
        **extra,
    )


def test_a_chunked_body_is_read_and_written(client, token):
    from lessons.models import Lesson

    response = _chunked_post(client, token, _body(pile_records()))
    report = response.json()
    assert (response.status_code, report["written"], report["lines"]) == (200, True, 8)
    assert Lesson.objects.filter(host__name="acme").count() == 4


def test_a_chunked_body_over_the_limit_is_413_and_nothing_is_written(client, token):
    from lessons.models import Lesson

    with override_settings(API_MAX_BODY_BYTES=300):
        response = _chunked_post(client, token, _body(pile_records()))
    assert (response.status_code, response.json()) == (
        413,
        {"error": "request body too large", "details": ["limit is 300 bytes"]},
    )
    assert Lesson.objects.count() == 0


def test_a_chunked_body_the_server_does_not_end_is_411(client, token):
    response = _chunked_post(client, token, _body(pile_records()), terminated=False)
    assert (response.status_code, response.json()) == (
        411,
        {"error": E_LENGTH_REQUIRED, "details": [E_LENGTH_REQUIRED_DETAIL]},
    )


@pytest.mark.parametrize("body", [b"", b"\n\n", b"  \r\n\t\n"])
def test_an_empty_batch_is_refused_and_nothing_is_written(client, token, body):
    from lessons.models import Host

    response = client.post(
        "/api/v1/ingest", data=body, content_type="application/x-ndjson", HTTP_AUTHORIZATION=f"Bearer {token}"
    )
    assert (response.status_code, response.json()) == (400, {"error": E_EMPTY_BATCH, "details": []})
    assert Host.objects.count() == 0


def test_a_body_of_neither_length_nor_chunks_is_empty_and_refused(client, token):
    """RFC 9112, 6.3: with neither Content-Length nor Transfer-Encoding a request has no body."""
    response = _chunked_post(client, token, _body(pile_records()), chunked=False)
    assert (response.status_code, response.json()["error"]) == (400, E_EMPTY_BATCH)


def test_an_empty_chunked_batch_is_refused(client, token):
    response = _chunked_post(client, token, b"")
    assert (response.status_code, response.json()["error"]) == (400, E_EMPTY_BATCH)


def test_forms_are_capped_at_2_mib_and_the_api_at_its_own_limit(settings):
    assert (settings.DATA_UPLOAD_MAX_MEMORY_SIZE, settings.API_MAX_BODY_BYTES) == (2 * 1024**2, 50 * 1024**2)


def test_a_sign_in_post_over_the_form_cap_is_refused_unread(client):
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000):
        response = client.post("/accounts/login/", {"username": "x" * 2000, "password": "y"})
    assert response.status_code == 413


def test_an_api_batch_over_the_form_cap_is_still_ingested(client, token):
    from lessons.models import Lesson

    body = _body([lesson(i) for i in range(30)])
    assert len(body) > 1000
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000):
        response = client.post(
            "/api/v1/ingest",
            data=body,
            content_type="application/x-ndjson",
            HTTP_AUTHORIZATION=f"Bearer {token}",
        )
    assert (response.status_code, response.json()["written"]) == (200, True)
    assert Lesson.objects.count() == 30


def test_the_admin_upload_is_held_to_its_own_limit_not_the_form_cap(client, admin_user):
    """A file part over DATA_UPLOAD_MAX_MEMORY_SIZE reaches the import view, which judges it as a zip."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    client.force_login(admin_user)
    upload = SimpleUploadedFile("learn.zip", b"not a zip " * 500, content_type="application/zip")
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000):
        response = client.post("/imports/altimate/", {"archive": upload, "host": "acme"})
    assert response.status_code == 400
    assert "zip" in response.content.decode().lower()
