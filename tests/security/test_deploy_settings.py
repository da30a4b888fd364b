"""Deployment behind a TLS proxy (issue 13, fault 6): ``HTTPS=1`` turns on what ``check --deploy`` asks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {
    "PATH": "/usr/bin:/bin",
    "DEBUG": "0",
    "SECRET_KEY": "k3Qz8vN2pL7xR4tY9wB6mD1sF5hJ0cG8aE3uI7oP2qW6zX9nVb4Lm2Tq",  # 56 characters, not a real key
    "ALLOWED_HOSTS": "example.org",
    "HTTPS": "1",
    "TRUSTED_PROXY_COUNT": "1",
    "DATABASE_URL": "sqlite:///:memory:",
}
READ_SETTINGS = (
    "import json, django; django.setup(); from django.conf import settings as s; "
    "print(json.dumps({n: getattr(s, n, None) for n in ["
    "'SECURE_PROXY_SSL_HEADER', 'SECURE_SSL_REDIRECT', 'SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE', "
    "'SECURE_HSTS_SECONDS', 'SECURE_HSTS_INCLUDE_SUBDOMAINS', 'SECURE_HSTS_PRELOAD']}))"
)


def _python(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"},
    )


def test_check_deploy_passes_at_warning_level_with_the_production_environment():
    proc = _python("manage.py", "check", "--deploy", "--fail-level", "WARNING", env=PRODUCTION)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == "System check identified no issues (2 silenced).\n"


def test_https_turns_on_the_proxy_header_secure_cookies_hsts_and_the_redirect():
    proc = _python("-c", READ_SETTINGS, env=PRODUCTION)
    assert json.loads(proc.stdout) == {
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
        "SECURE_SSL_REDIRECT": True,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_HSTS_SECONDS": 31536000,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": False,
        "SECURE_HSTS_PRELOAD": False,
    }


def test_hsts_subdomains_and_max_age_come_from_the_environment():
    env = {**PRODUCTION, "HSTS_SECONDS": "3600", "HSTS_INCLUDE_SUBDOMAINS": "yes"}
    values = json.loads(_python("-c", READ_SETTINGS, env=env).stdout)
    assert (values["SECURE_HSTS_SECONDS"], values["SECURE_HSTS_INCLUDE_SUBDOMAINS"]) == (3600, True)


def test_without_https_nothing_assumes_a_proxy():
    env = {**PRODUCTION, "HTTPS": "0"}
    assert json.loads(_python("-c", READ_SETTINGS, env=env).stdout) == {
        "SECURE_PROXY_SSL_HEADER": None,
        "SECURE_SSL_REDIRECT": False,
        "SESSION_COOKIE_SECURE": False,
        "CSRF_COOKIE_SECURE": False,
        "SECURE_HSTS_SECONDS": 0,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": False,
        "SECURE_HSTS_PRELOAD": False,
    }


READ_PROXY = (
    "import json, django; django.setup(); from django.conf import settings as s; "
    "print(json.dumps([s.TRUSTED_PROXY_COUNT, s.AXES_CLIENT_IP_CALLABLE]))"
)


def test_the_trusted_proxies_come_from_the_environment_and_default_to_none():
    """HTTPS=1 says TLS ends at a proxy, not how many proxies append to X-Forwarded-For (issue 21, fault 5)."""
    assert json.loads(_python("-c", READ_PROXY, env=PRODUCTION).stdout) == [1, "review.signin.client_address"]
    env = {k: v for k, v in PRODUCTION.items() if k != "TRUSTED_PROXY_COUNT"}
    assert json.loads(_python("-c", READ_PROXY, env=env).stdout) == [0, "review.signin.client_address"]


def test_check_deploy_warns_when_https_trusts_no_proxy():
    from review.signin import W_NO_TRUSTED_PROXY

    env = {k: v for k, v in PRODUCTION.items() if k != "TRUSTED_PROXY_COUNT"}
    proc = _python("manage.py", "check", "--deploy", "--fail-level", "WARNING", env=env)
    assert proc.returncode == 1
    assert f"?: (review.W001) {W_NO_TRUSTED_PROXY}" in proc.stderr
