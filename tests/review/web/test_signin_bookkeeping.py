"""A sign-in's bookkeeping (``last_login``, django-axes' access log and the reset of failed attempts) is
written as before when the database is free; on SQLite it is skipped, never waited for, while another
writer holds the database (review/signin.py; the busy case runs in test_lock_wait.py and
tests/review/jobs/test_concurrency_acceptance.py). spec: issue 13, acceptance (sign in during an ingest).
"""

from __future__ import annotations

import pytest
from axes.models import AccessAttempt, AccessLog
from django.contrib.auth.models import User
from django.db import OperationalError
from django.test import Client

from review import signin

pytestmark = pytest.mark.django_db


def test_a_sign_in_records_last_login_the_access_log_and_resets_failures(reviewer):
    client = Client()
    assert client.post("/accounts/login/", {"username": "rita", "password": "wrong"}).status_code == 200
    assert AccessAttempt.objects.filter(username="rita").count() == 1
    assert client.post("/accounts/login/", {"username": "rita", "password": "rita-pass"}).status_code == 302
    assert User.objects.get(username="rita").last_login is not None
    assert list(AccessLog.objects.values_list("username", flat=True)) == ["rita"]
    assert not AccessAttempt.objects.filter(username="rita").exists()


SQLITE = pytest.mark.skipif(signin.connection.vendor != "sqlite", reason="SQLite's one writer")


@SQLITE
@pytest.mark.django_db(transaction=True)
def test_a_busy_database_skips_the_bookkeeping_and_says_so(caplog):
    def busy():
        raise OperationalError("database is locked")

    assert signin.record_if_free("last_login", busy) is False
    assert "sign-in: last_login not recorded, the database is busy (an import is writing)" in caplog.text
    with signin.connection.cursor() as cursor:  # the connection's own wait is back
        cursor.execute("PRAGMA busy_timeout")
        assert cursor.fetchone()[0] > 0


@SQLITE
@pytest.mark.django_db(transaction=True)
def test_other_errors_are_raised():
    def broken():
        raise OperationalError("no such table: auth_user")

    with pytest.raises(OperationalError):
        signin.record_if_free("last_login", broken)
