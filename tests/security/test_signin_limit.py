"""Failed sign-ins are limited per client address, whatever the usernames (issue 21, fault 6).

axes pauses one username from one address; 160 attempts over 40 made-up usernames once got no 429 while
each cost a password hash. From SIGNIN_FAILURES_PER_ADDRESS failures on, a sign-in from that address is
refused with a 429 page before its form is read or any password is hashed.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.hashers import MD5PasswordHasher
from django.test import override_settings

from review.middleware import SIGNIN_PAUSED_ADDRESS
from tests.conftest import make_user

LIMIT = 20
SMALL = 3  # the limit of the tests after the first two (fewer requests, the same rule)


class CountingHasher(MD5PasswordHasher):
    """The tests' hasher, counting every hash it makes or checks (``calls``)."""

    calls = 0

    def encode(self, password, salt):
        CountingHasher.calls += 1
        return super().encode(password, salt)


@pytest.fixture
def hashes(settings):
    settings.PASSWORD_HASHERS = ["tests.security.test_signin_limit.CountingHasher"]
    CountingHasher.calls = 0
    return CountingHasher


def _attempt(client, username: str, password: str, *, address: str = "198.51.100.7"):
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def _flood(client, n: int, **kw) -> list[int]:
    """``n`` failed sign-ins, each under a fresh made-up username."""
    return [_attempt(client, f"made-up-{i}", "wrong", **kw).status_code for i in range(n)]


@pytest.fixture
def small_limit(settings):
    settings.SIGNIN_FAILURES_PER_ADDRESS = SMALL


def test_the_default_limit_is_20_failures(settings):
    assert settings.SIGNIN_FAILURES_PER_ADDRESS == LIMIT


def test_fresh_usernames_are_paused_after_the_limit_before_any_hash(
    client, db, hashes, django_assert_num_queries
):
    make_user("rita", "reviewer")
    assert _flood(client, LIMIT) == [200] * LIMIT
    hashed = hashes.calls
    assert hashed >= LIMIT  # each failure cost a hash, even for a username nobody has
    with django_assert_num_queries(1):  # the sum of the address's failures, nothing else
        response = _attempt(client, "made-up-new", "wrong")
    assert response.status_code == 429
    assert _attempt(client, "rita", "rita-pass").status_code == 429  # the right password too
    assert hashes.calls == hashed


def test_the_pause_page_says_why_and_when_to_come_back(client, db, small_limit):
    _flood(client, SMALL)
    response = _attempt(client, "anyone", "wrong")
    assert (response.status_code, response["Retry-After"]) == (429, "900")
    html = response.content.decode()
    assert SIGNIN_PAUSED_ADDRESS.format(address="198.51.100.7", minutes=15) in html
    assert "<title>Sign-in paused · Lesson Pile Review</title>" in html


def test_other_addresses_still_sign_in(client, db, small_limit):
    make_user("rita", "reviewer")
    _flood(client, SMALL)
    response = _attempt(client, "rita", "rita-pass", address="203.0.113.9")
    assert (response.status_code, response["Location"]) == (302, "/")


def test_one_under_the_limit_is_still_heard(client, db, small_limit):
    make_user("rita", "reviewer")
    _flood(client, SMALL - 1)
    assert _attempt(client, "rita", "rita-pass").status_code == 302


def test_failures_older_than_the_cooloff_no_longer_count(client, db, small_limit):
    from datetime import timedelta

    from axes.models import AccessAttempt
    from django.utils import timezone

    make_user("rita", "reviewer")
    _flood(client, SMALL)
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(minutes=15, seconds=1))
    assert _attempt(client, "rita", "rita-pass").status_code == 302


def test_the_limit_comes_from_the_settings(client, db):
    with override_settings(SIGNIN_FAILURES_PER_ADDRESS=2):
        assert _flood(client, 3) == [200, 200, 429]


def test_axes_reset_ip_lifts_the_pause(client, db, small_limit):
    from django.core.management import call_command

    make_user("rita", "reviewer")
    _flood(client, SMALL)
    call_command("axes_reset_ip", "198.51.100.7")
    assert _attempt(client, "rita", "rita-pass").status_code == 302


def test_addresses_of_one_ipv6_network_share_the_limit(client, db, small_limit):
    """An IPv6 client holds a whole /64 (2^64 addresses): a fresh address for each attempt must not be a
    fresh limit. Its failures count under the network, as one IPv4 address's do."""
    statuses = [
        _attempt(client, f"made-up-{i}", "wrong", address=f"2001:db8:1:2::{i + 1:x}").status_code
        for i in range(SMALL + 1)
    ]
    assert statuses == [200] * SMALL + [429]
    assert _attempt(client, "made-up-x", "wrong", address="2001:db8:1:3::1").status_code == 200  # another /64


def test_an_ipv4_client_seen_through_a_dual_stack_socket_is_the_same_client(client, db, small_limit):
    """``::ffff:198.51.100.7`` (a server listening on ``[::]``) and ``198.51.100.7`` are one address; and
    every IPv4 client is not one IPv6 network."""
    assert _flood(client, SMALL, address="::ffff:198.51.100.7") == [200] * SMALL
    assert _attempt(client, "made-up-y", "wrong", address="198.51.100.7").status_code == 429
    assert _attempt(client, "made-up-z", "wrong", address="::ffff:203.0.113.9").status_code == 200
