"""``python manage.py create_token NAME [--host H] [--scope ingest,read]``: a bearer token for the API.

Prints the raw token once (stdout, one line); only its SHA-256 is stored. ``--host`` limits the token
to one host (default: every host); ``--scope`` is ``ingest``, ``read`` or both (default ``read``).
Exit 1 for an unknown host or scope. README.md, "Commands" (exit codes); review/api/auth.py (scopes).
"""

from __future__ import annotations

from lessons.management.base import Command as BaseCommand
from lessons.models import Host
from review.services.tokens import TokenRefused, parse_scopes, token_create, token_scopes

UNKNOWN_HOST = "No host named {name!r}; create it (ingest a host record) first."


class Command(BaseCommand):
    help = "Create an API bearer token and print it once."

    def add_arguments(self, parser) -> None:
        parser.add_argument("name", help="a label for the token, e.g. the host that uses it")
        parser.add_argument("--host", help="limit the token to this host (default: every host)")
        parser.add_argument("--scope", default="read", help="ingest, read, or ingest,read (default: read)")

    def handle(self, *args, **options) -> None:
        host = None
        if options["host"]:
            host = Host.objects.filter(name=options["host"]).first()
            if host is None:
                self.fail(UNKNOWN_HOST.format(name=options["host"]))
        try:
            can_ingest, can_read = parse_scopes(options["scope"])
            token, raw = token_create(
                name=options["name"], host=host, can_ingest=can_ingest, can_read=can_read
            )
        except TokenRefused as exc:
            self.fail(str(exc))
        where = token.host.name if token.host_id else "every host"
        self.stderr.write(
            f"token {token.name!r} ({token.prefix}…) for {where}, scopes {','.join(token_scopes(token))}; "
            "it is shown once, store it now:"
        )
        self.stdout.write(raw)
