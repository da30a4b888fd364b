"""The sign-in lockout is keyed on the client's address, never the proxy's (issue 21, fault 5).

Behind the documented proxy every request comes from the proxy's address: five wrong passwords for a user
from one client locked that user for every client. ``TRUSTED_PROXY_COUNT`` names how many proxies append
to ``X-Forwarded-For``; without it a forged header changes nothing. Through the live test server, so the
header and the address are those of real HTTP requests.
"""

from __future__ import annotations

import http.client
import re
import urllib.parse

import pytest
from django.test import RequestFactory, override_settings

from review.signin import client_address
from tests.conftest import make_user


class Browser:
    """One client of the live server: keeps its cookies, sends ``X-Forwarded-For`` when given."""

    def __init__(self, url: str):
        self.host = urllib.parse.urlsplit(url).netloc
        self.cookies: dict[str, str] = {}

    def _send(self, method: str, path: str, body: str | None, headers: dict[str, str]) -> tuple[int, str]:
        connection = http.client.HTTPConnection(self.host, timeout=30)
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        connection.request(method, path, body=body, headers={**headers, "Cookie": cookie})
        response = connection.getresponse()
        for header in response.headers.get_all("Set-Cookie") or []:
            name, value = header.split(";", 1)[0].split("=", 1)
            self.cookies[name] = value
        text = response.read().decode()
        connection.close()
        return response.status, text

    def sign_in(self, username: str, password: str, *, forwarded_for: str | None = None) -> int:
        """The status of a sign-in through the form (its CSRF token read from the page first)."""
        headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
        _status, page = self._send("GET", "/accounts/login/", None, headers)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        body = urllib.parse.urlencode(
            {"username": username, "password": password, "csrfmiddlewaretoken": token}
        )
        headers["Content-Type"] = "application/x-www-form-urlencoded"
        status, _text = self._send("POST", "/accounts/login/", body, headers)
        return status


@pytest.fixture
def rita(transactional_db):
    return make_user("rita", "reviewer")


def _keys() -> list[str]:
    from axes.models import AccessAttempt

    return sorted(AccessAttempt.objects.values_list("ip_address", flat=True))


def test_without_a_trusted_proxy_a_forged_header_does_not_change_the_key(live_server, rita):
    """Five failures, each claiming another address: all counted under the connection's address."""
    attacker = Browser(live_server.url)
    statuses = [attacker.sign_in("rita", "wrong", forwarded_for=f"198.51.100.{i}") for i in range(5)]
    assert statuses == [200, 200, 200, 200, 429]
    assert _keys() == ["127.0.0.1"]
    assert Browser(live_server.url).sign_in("rita", "rita-pass", forwarded_for="203.0.113.9") == 429


@override_settings(TRUSTED_PROXY_COUNT=1)
def test_behind_one_trusted_proxy_the_lock_is_the_clients_alone(live_server, rita):
    """The proxy appends the client's address; what the client wrote to the left is ignored."""
    attacker = Browser(live_server.url)
    forged = [f"10.9.9.{i}, 198.51.100.7" for i in range(5)]  # left: forged by the client; right: the proxy's
    assert [attacker.sign_in("rita", "wrong", forwarded_for=f) for f in forged] == [200, 200, 200, 200, 429]
    assert _keys() == ["198.51.100.7"]
    assert attacker.sign_in("rita", "rita-pass", forwarded_for="198.51.100.7") == 429
    assert Browser(live_server.url).sign_in("rita", "rita-pass", forwarded_for="203.0.113.9") == 302


def _address(forwarded_for: str | None, remote: str = "127.0.0.1") -> str | None:
    meta = {"REMOTE_ADDR": remote}
    if forwarded_for is not None:
        meta["HTTP_X_FORWARDED_FOR"] = forwarded_for
    return client_address(RequestFactory().get("/", **meta))


@pytest.mark.parametrize(
    ("trusted", "forwarded_for", "expected"),
    [
        (0, "198.51.100.7", "127.0.0.1"),
        (1, None, "127.0.0.1"),  # not through the proxy
        (1, "198.51.100.7", "198.51.100.7"),
        (1, " 10.0.0.1 ,  198.51.100.7 ", "198.51.100.7"),
        (1, "198.51.100.7, not-an-address", "127.0.0.1"),
        (1, "2001:DB8::0001", "2001:db8::"),  # an IPv6 client is its /64
        (1, "2001:db8:1:2:aaaa::7", "2001:db8:1:2::"),
        (1, "fe80::1%eth0", "fe80::"),
        (1, "::ffff:198.51.100.7", "198.51.100.7"),
        (0, None, "127.0.0.1"),
        (2, "198.51.100.7", "127.0.0.1"),  # fewer entries than trusted proxies
        (2, "10.9.9.9, 198.51.100.7, 192.0.2.1", "198.51.100.7"),
    ],
)
def test_the_client_address_is_the_entry_the_outermost_trusted_proxy_appended(
    trusted, forwarded_for, expected
):
    with override_settings(TRUSTED_PROXY_COUNT=trusted):
        assert _address(forwarded_for) == expected


def test_an_ipv6_connection_is_keyed_on_its_network_without_a_proxy():
    with override_settings(TRUSTED_PROXY_COUNT=0):
        assert _address("198.51.100.7", remote="2001:db8:1:2::abcd") == "2001:db8:1:2::"
        assert _address(None, remote="::ffff:203.0.113.9") == "203.0.113.9"
