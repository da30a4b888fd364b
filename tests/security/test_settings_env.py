"""Settings refuse an environment value they cannot read (issue 9, item 7): one line, exit 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int

ROOT = Path(__file__).resolve().parents[2]
BOOLEAN_VARIABLES = ["DEBUG", "HTTPS", "HSTS_INCLUDE_SUBDOMAINS"]


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "DATABASE_URL": "sqlite:///:memory:", **env},
    )


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("1", True),
        ("TRUE", True),
        ("Yes", True),
        (" on ", True),
        ("0", False),
        ("False", False),
        ("NO", False),
        ("off", False),
        ("", False),
    ],
)
def test_a_boolean_reads_the_usual_words_in_any_case(monkeypatch, word, expected):
    monkeypatch.setenv("SOME_FLAG", word)
    assert env_bool("SOME_FLAG") is expected


def test_an_unset_boolean_is_its_default(monkeypatch):
    monkeypatch.delenv("SOME_FLAG", raising=False)
    assert env_bool("SOME_FLAG", default=True) is True


@pytest.mark.parametrize("word", ["ture", "2", "enabled", "y e s"])
def test_a_boolean_refuses_any_other_word_naming_variable_and_value(monkeypatch, word):
    monkeypatch.setenv("SOME_FLAG", word)
    with pytest.raises(ImproperlyConfigured) as caught:
        env_bool("SOME_FLAG")
    assert str(caught.value) == f"SOME_FLAG={word!r} is not a boolean; use 1/0, true/false, yes/no or on/off"


def test_a_number_refuses_words(monkeypatch):
    monkeypatch.setenv("SOME_SIZE", "2MB")
    with pytest.raises(ImproperlyConfigured) as caught:
        env_int("SOME_SIZE", default=1, minimum=1)
    assert str(caught.value) == "SOME_SIZE='2MB' is not a whole number of at least 1"


@pytest.mark.parametrize("name", BOOLEAN_VARIABLES)
def test_manage_py_says_which_boolean_it_cannot_read_in_one_line_and_exits_2(name):
    env = {"DEBUG": "1", name: "ture"}
    proc = _manage("check", **env)
    assert proc.returncode == 2
    assert proc.stderr == (f"error: {name}='ture' is not a boolean; use 1/0, true/false, yes/no or on/off\n")


def test_manage_py_says_when_conn_max_age_is_not_a_number_and_exits_2():
    proc = _manage("check", DEBUG="1", CONN_MAX_AGE="1m")
    assert proc.returncode == 2
    assert proc.stderr == "error: CONN_MAX_AGE='1m' is not a whole number of at least 0\n"


def test_wsgi_refuses_an_unreadable_boolean_with_improperly_configured():
    code = (
        "from django.core.exceptions import ImproperlyConfigured\n"
        "try:\n    import config.wsgi\n"
        "except ImproperlyConfigured as exc:\n    print('refused:', exc)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "DEBUG": "ture"},
    )
    assert proc.stdout == "refused: DEBUG='ture' is not a boolean; use 1/0, true/false, yes/no or on/off\n"
