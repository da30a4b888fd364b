"""``manage.py create_token NAME [--host H] [--scope ingest,read]``: prints the raw token once."""

from __future__ import annotations

import hashlib
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from review.models import ApiToken


def run(*args):
    out, err = StringIO(), StringIO()
    call_command("create_token", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_create_token_prints_it_once_and_stores_its_hash(hosts):
    out, err = run("alpha-puller", "--host", "alpha", "--scope", "ingest,read")
    raw = out.strip()
    token = ApiToken.objects.get()
    assert (token.name, token.host.name, token.can_ingest, token.can_read) == (
        "alpha-puller",
        "alpha",
        True,
        True,
    )
    assert token.token_hash == hashlib.sha256(raw.encode()).hexdigest()
    assert err == (
        f"token 'alpha-puller' ({token.prefix}…) for alpha, scopes ingest,read; "
        "it is shown once, store it now:\n"
    )


def test_create_token_defaults_to_read_on_every_host(hosts):
    run("reader")
    token = ApiToken.objects.get()
    assert (token.host, token.can_ingest, token.can_read) == (None, False, True)


@pytest.mark.parametrize(
    "args,message",
    [
        (["x", "--host", "gamma"], "No host named 'gamma'; create it (ingest a host record) first."),
        (["x", "--scope", "write"], "Unknown scope 'write'; use ingest, read or both, separated by a comma."),
        (["x", "--scope", ","], "A token needs at least one scope: ingest, read."),
    ],
)
def test_create_token_refuses_bad_input_with_exit_1(hosts, args, message):
    with pytest.raises(CommandError) as exc:
        run(*args)
    assert (str(exc.value), exc.value.returncode) == (message, 1)
    assert ApiToken.objects.count() == 0
