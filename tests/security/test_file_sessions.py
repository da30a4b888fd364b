"""Sessions kept in files on SQLite (config/settings.py, review/signin.py; issue 13): signing out ends the
session for good, a tampered cookie is nobody, and the session directory is private to the server (its
file names are the session keys), never committed and never served.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from config.env import private_dir

REPO = Path(settings.BASE_DIR)
# The settings keep SQLite's sessions in files; the test suite keeps them in the database (tests/conftest.py)
sqlite_only = pytest.mark.skipif(
    settings.SESSION_FILE_PATH is None, reason="file sessions: SQLite's settings"
)


@pytest.fixture(autouse=True)
def file_sessions(settings, tmp_path):
    """The file session engine, as the SQLite settings have it, in a directory of this test's own."""
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.file"
    settings.SESSION_FILE_PATH = private_dir(str(tmp_path / "session-files"))


def _signed_in(user) -> Client:
    client = Client()
    assert client.post("/accounts/login/", {"username": user.username, "password": "pw"}).status_code == 302
    return client


@pytest.fixture
def signed_in(viewer):
    viewer.set_password("pw")
    viewer.save()
    return _signed_in(viewer)


def _session_file(key: str) -> Path:
    return Path(settings.SESSION_FILE_PATH) / f"{settings.SESSION_COOKIE_NAME}{key}"


def test_signing_out_deletes_the_session_and_its_cookie_signs_in_nobody(signed_in):
    key = signed_in.cookies[settings.SESSION_COOKIE_NAME].value
    assert _session_file(key).exists()
    assert signed_in.get("/").status_code == 200
    assert signed_in.post("/accounts/logout/").status_code == 302
    assert not _session_file(key).exists()
    replay = Client()
    replay.cookies[settings.SESSION_COOKIE_NAME] = key  # the cookie kept from before the sign-out
    response = replay.get("/")
    assert (response.status_code, response["Location"]) == (302, "/accounts/login/?next=/")


@pytest.mark.parametrize(
    "cookie",
    [
        "../../db.sqlite3",
        "..%2F..%2Fetc%2Fpasswd",
        "x" * 5000,
        "short",
        "",
        "abc/def" * 4,
        "\xe9" * 40,
        "\\" * 32,
    ],
)
def test_a_tampered_session_cookie_is_nobody(db, signed_in, cookie):
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = cookie
    response = client.get("/")
    assert (response.status_code, response["Location"]) == (302, "/accounts/login/?next=/")


def test_a_cookie_naming_another_session_file_prefix_is_nobody(db, signed_in):
    """A key with the prefix of a real one is another key, not a prefix match."""
    key = signed_in.cookies[settings.SESSION_COOKIE_NAME].value
    client = Client()
    client.cookies[settings.SESSION_COOKIE_NAME] = key[:-1]
    assert client.get("/").status_code == 302


@sqlite_only
def test_the_session_directory_is_readable_by_the_server_user_only():
    """Its file names are the session keys: a directory others may list hands out every session."""
    from config import settings as configured

    mode = stat.S_IMODE(os.stat(configured.SESSION_FILE_PATH).st_mode)
    assert mode == 0o700, oct(mode)


def test_private_dir_makes_a_missing_directory_owner_only(tmp_path):
    path = tmp_path / "a" / "sessions"
    assert private_dir(str(path)) == str(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o700


def test_private_dir_closes_an_existing_open_directory(tmp_path):
    path = tmp_path / "sessions"
    path.mkdir(mode=0o777)
    os.chmod(path, 0o777)
    private_dir(str(path))
    assert stat.S_IMODE(path.stat().st_mode) == 0o700


def test_private_dir_refuses_a_directory_someone_else_owns(tmp_path, monkeypatch):
    path = tmp_path / "sessions"
    path.mkdir()
    owner = path.stat().st_uid
    monkeypatch.setattr(os, "getuid", lambda: owner + 1)
    with pytest.raises(ImproperlyConfigured) as raised:
        private_dir(str(path))
    assert str(raised.value) == (
        f"SESSION_FILE_PATH {path} belongs to another user: set SESSION_FILE_PATH to a directory of the "
        "server's own"
    )


@sqlite_only
def test_the_sessions_directory_is_ignored_by_git_and_not_under_the_static_files():
    """Beside the SQLite file wherever it is (``DATABASE_URL=sqlite:///var/lpr.sqlite3``: ``var/sessions``),
    as ``db.sqlite3`` is ignored at any depth."""
    for path in ("sessions/sessionidabc", "var/sessions/sessionidabc", "db.sqlite3", "var/db.sqlite3"):
        ignored = subprocess.run(["git", "check-ignore", "-q", path], cwd=REPO, check=False).returncode
        assert ignored == 0, path
    from config import settings as configured

    sessions = Path(configured.SESSION_FILE_PATH).resolve()
    served = [Path(settings.STATIC_ROOT), *map(Path, settings.STATICFILES_DIRS)]
    assert not any(sessions.is_relative_to(root.resolve()) for root in served)


def test_a_session_file_is_not_served(db, signed_in):
    key = signed_in.cookies[settings.SESSION_COOKIE_NAME].value
    for path in (
        f"/sessions/sessionid{key}",
        f"/static/../sessions/sessionid{key}",
        f"/static/sessionid{key}",
    ):
        assert signed_in.get(path).status_code == 404, path
