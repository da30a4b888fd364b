"""Repeated failed sign-ins lock the username from that address (issue 13, fault 7; django-axes).

Five failures in 15 minutes for one username from one address: a 429 page in the house layout; while locked
the right password is refused too. Other usernames, and the same username elsewhere, are not locked.
"""

from __future__ import annotations

import pytest

LOCKED_TEXT = "Too many failed sign-ins for this username from your address."


def _attempt(client, username: str, password: str, *, address: str = "127.0.0.1"):
    return client.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def _fail(client, username: str, times: int, **kw) -> list[int]:
    return [_attempt(client, username, "wrong", **kw).status_code for _ in range(times)]


def test_four_failures_then_the_right_password_signs_in(client, reviewer):
    assert _fail(client, "rita", 4) == [200, 200, 200, 200]
    response = _attempt(client, "rita", "rita-pass")
    assert (response.status_code, response["Location"]) == (302, "/")


def test_the_fifth_failure_is_answered_429_with_the_house_page(client, reviewer):
    statuses = _fail(client, "rita", 5)
    response = _attempt(client, "rita", "wrong")
    html = response.content.decode()
    assert statuses == [200, 200, 200, 200, 429]
    assert (response.status_code, response["Retry-After"]) == (429, "900")  # the attacker's finding 14
    assert LOCKED_TEXT in html
    assert "<title>Sign-in paused · Lesson Pile Review</title>" in html
    assert "15 minutes" in html


def test_while_locked_the_right_password_is_refused(client, reviewer):
    _fail(client, "rita", 5)
    response = _attempt(client, "rita", "rita-pass")
    assert response.status_code == 429
    assert "_auth_user_id" not in client.session


def test_the_lock_is_per_username_and_address(client, reviewer, viewer):
    _fail(client, "rita", 5)
    assert _attempt(client, "vera", "vera-pass").status_code == 302
    client.logout()
    assert _attempt(client, "rita", "rita-pass", address="10.0.0.9").status_code == 302


def test_the_admin_sign_in_is_no_way_around_the_lock(client, admin_user):
    """The admin's sign-in form signs no one in (review/admin_site.py): it sends to the locked one."""
    _fail(client, "ada", 5)
    response = client.post("/admin/login/", {"username": "ada", "password": "ada-pass"})
    assert (response.status_code, response["Location"]) == (302, "/accounts/login/?next=/admin/login/")
    assert "_auth_user_id" not in client.session


def test_a_hostile_long_username_is_counted_under_its_first_150_characters(client, db):
    """A 10 000-character name once overflowed axes' column on PostgreSQL (500)."""
    from axes.models import AccessAttempt

    assert _fail(client, "v" * 10_000, 5) == [200, 200, 200, 200, 429]
    assert list(AccessAttempt.objects.values_list("username", flat=True)) == ["v" * 150]


@pytest.mark.parametrize("n", [1, 2])
def test_each_test_starts_unlocked(client, reviewer, n):
    """Failures of one test never lock a user of the next (the attempts live in the rolled-back database)."""
    assert _fail(client, "rita", 4) == [200] * 4
    assert _attempt(client, "rita", "rita-pass").status_code == 302
