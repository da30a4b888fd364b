"""A body over its route's limit is refused before it is read (issue 21, faults 7 and 8).

A multipart POST with a made-up CSRF cookie and a 512 MiB file part was read and spooled to disk before
the 403 (the sign-in page, the upload page), and a 300 MiB upload by an admin was stored as a job's
payload before the job said it was too large. Each body here is a stream that counts the bytes the server
takes from it: a refused body must be refused with (almost) nothing read.
"""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

from lessons.importers.zipped import MAX_ZIP_BYTES, ZIP_TOO_LARGE
from review.request_body import PAGE_LENGTH_REQUIRED, PAGE_TOO_LARGE, PAGE_UPLOAD_WHAT, PIECE_BYTES

MiB = 1024 * 1024
BOUNDARY = "lpr-boundary"
FORM_LIMIT = 2 * MiB
UPLOAD_LIMIT = MAX_ZIP_BYTES + 64 * 1024


class CountingBody:
    """A request body of ``size`` bytes made on demand (``head``, then zeros, then ``tail``); ``taken``
    counts the bytes read from it."""

    def __init__(self, head: bytes, size: int, tail: bytes = b""):
        self.head, self.tail = head, tail
        self.size = size
        self.taken = 0

    def read(self, n: int = -1) -> bytes:
        left = self.size - self.taken
        n = left if n is None or n < 0 else min(n, left)
        data = self._at(self.taken, self.taken + n)
        self.taken += n
        return data

    def readline(self, n: int = -1) -> bytes:
        window = self._at(self.taken, min(self.size, self.taken + (PIECE_BYTES if n is None or n < 0 else n)))
        line = window[: window.find(b"\n") + 1 or len(window)]
        self.taken += len(line)
        return line

    def _at(self, start: int, end: int) -> bytes:
        body_end = self.size - len(self.tail)
        out = bytearray()
        if start < len(self.head):
            out += self.head[start : min(end, len(self.head))]
        zeros = max(0, min(end, body_end) - max(start, len(self.head)))
        out += bytes(zeros)
        if end > body_end:
            out += self.tail[max(0, start - body_end) : end - body_end]
        return bytes(out)


def multipart_file(size: int) -> CountingBody:
    """A multipart form of ``size`` bytes in all: a CSRF field (not the cookie's), a host, and a file part
    of zeros."""
    head = (
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="csrfmiddlewaretoken"\r\n\r\n{"n" * 32}\r\n'
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="host"\r\n\r\nacme\r\n'
        f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="archive"; filename="big.zip"\r\n'
        "Content-Type: application/zip\r\n\r\n"
    ).encode()
    return CountingBody(head, size, f"\r\n--{BOUNDARY}--\r\n".encode())


def post_stream(client: Client, path: str, body: CountingBody, *, declared: bool = True, **extra):
    """POST ``body`` to ``path`` as a server hands it to Django: with its Content-Length, or (``declared``
    False) chunked, de-chunked by the server (no Content-Length, ``wsgi.input_terminated``)."""
    environ = {"wsgi.input": body, "CONTENT_TYPE": f"multipart/form-data; boundary={BOUNDARY}"}
    if declared:
        environ["CONTENT_LENGTH"] = str(body.size)
    else:
        environ.update(
            {"CONTENT_LENGTH": "", "HTTP_TRANSFER_ENCODING": "chunked", "wsgi.input_terminated": True}
        )
    environ.update(extra)
    return client.generic("POST", path, **environ)


@pytest.fixture
def stranger(db):
    """An anonymous client whose CSRF cookie is made up (the CSRF check is on, as in a browser)."""
    client = Client(enforce_csrf_checks=True)
    client.cookies["csrftoken"] = "m" * 32
    return client


@pytest.fixture
def as_admin(client, admin_user):
    client.force_login(admin_user)
    return client


@pytest.mark.parametrize(
    "path,limit,what",
    [("/accounts/login/", FORM_LIMIT, ""), ("/imports/altimate/", UPLOAD_LIMIT, PAGE_UPLOAD_WHAT)],
)
def test_an_anonymous_upload_over_the_limit_is_refused_unread(stranger, path, limit, what):
    body = multipart_file(64 * MiB)
    response = post_stream(stranger, path, body)
    assert response.status_code == 413
    assert PAGE_TOO_LARGE.format(size=64 * MiB, limit=limit, what=what) in response.content.decode()
    assert body.taken == 0


def test_an_admin_upload_far_over_the_limit_is_refused_unread_and_nothing_stored(as_admin):
    from review.models import ImportJob

    body = multipart_file(40 * MiB)
    response = post_stream(as_admin, "/imports/altimate/", body)
    html = response.content.decode()
    assert response.status_code == 413
    assert PAGE_TOO_LARGE.format(size=40 * MiB, limit=UPLOAD_LIMIT, what=PAGE_UPLOAD_WHAT) in html
    assert "at most 20 MB" in html
    assert body.taken == 0
    assert ImportJob.objects.count() == 0


def test_a_zip_just_over_the_limit_is_refused_413_before_it_is_stored(as_admin):
    """Within the body's slack for the form's fields, the zip itself is judged on its size, unread."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from review.models import ImportJob

    upload = SimpleUploadedFile("big.zip", bytes(MAX_ZIP_BYTES + 1), content_type="application/zip")
    response = as_admin.post("/imports/altimate/", {"archive": upload, "host": "acme"})
    assert response.status_code == 413
    assert ZIP_TOO_LARGE in response.content.decode()
    assert ImportJob.objects.count() == 0


def test_a_signed_in_form_post_over_the_limit_is_refused_unread(as_admin):
    body = multipart_file(3 * MiB)
    response = post_stream(as_admin, "/pile/retire/", body)
    assert response.status_code == 413
    assert body.taken == 0


def test_an_htmx_post_over_the_limit_gets_one_alert(as_admin):
    body = multipart_file(3 * MiB)
    response = post_stream(as_admin, "/pile/retire/", body, HTTP_HX_REQUEST="true")
    sentence = PAGE_TOO_LARGE.format(size=3 * MiB, limit=FORM_LIMIT, what="")
    assert (response.status_code, response.content.decode()) == (
        413,
        f'<div class="notice notice-error" role="alert">{sentence}</div>',
    )


def test_a_chunked_form_post_is_refused_unread(stranger):
    body = multipart_file(64 * MiB)
    response = post_stream(stranger, "/accounts/login/", body, declared=False)
    assert response.status_code == 411
    assert PAGE_LENGTH_REQUIRED in response.content.decode()
    assert body.taken == 0


def test_a_content_length_that_is_not_a_number_is_400(stranger):
    body = multipart_file(1000)
    response = post_stream(stranger, "/accounts/login/", body, declared=False, CONTENT_LENGTH="12abc")
    assert response.status_code == 400
    assert body.taken == 0


@pytest.fixture
def token(db):
    from review.services.tokens import token_create

    return token_create(name="t", host=None, can_ingest=True, can_read=True)[1]


def test_an_api_body_over_its_declared_limit_is_refused_unread(client, token):
    body = CountingBody(b"", 51 * MiB)
    response = post_stream(client, "/api/v1/ingest", body, HTTP_AUTHORIZATION=f"Bearer {token}")
    assert (response.status_code, response.json()) == (
        413,
        {"error": "request body too large", "details": [f"limit is {50 * MiB} bytes"]},
    )
    assert body.taken == 0


def test_a_chunked_api_body_is_read_no_further_than_its_limit(client, token):
    body = CountingBody(b"", 16 * MiB)
    with override_settings(API_MAX_BODY_BYTES=MiB):
        response = post_stream(
            client, "/api/v1/ingest", body, declared=False, HTTP_AUTHORIZATION=f"Bearer {token}"
        )
    assert (response.status_code, response.json()["details"]) == (413, [f"limit is {MiB} bytes"])
    assert MiB < body.taken <= MiB + PIECE_BYTES


def test_a_compressed_api_body_is_415_naming_the_encoding(client, token, db):
    """The attacker's finding 10: a gzip body was read as text and refused as "not valid UTF-8"."""
    import gzip

    from lessons.models import Host

    body = gzip.compress(b'{"type": "host", "name": "zipped"}\n')
    response = client.post(
        "/api/v1/ingest",
        data=body,
        content_type="application/x-ndjson",
        HTTP_CONTENT_ENCODING="gzip",
        HTTP_AUTHORIZATION=f"Bearer {token}",
    )
    assert (response.status_code, response.json()) == (
        415,
        {
            "error": "Content-Encoding gzip is not supported",
            "details": ["send the body uncompressed (no Content-Encoding, or identity)"],
        },
    )
    assert not Host.objects.filter(name="zipped").exists()


def test_a_body_within_the_limit_is_read_as_before(stranger):
    """The sign-in page still reads a form under its limit (the made-up CSRF token is then refused)."""
    body = multipart_file(FORM_LIMIT)
    response = post_stream(stranger, "/accounts/login/", body)
    assert response.status_code == 403
    assert body.taken == FORM_LIMIT
