"""Shared pieces of the management commands: the exit codes of cli.md and the ``--as USER`` check."""

from __future__ import annotations

import sys

from django.core.management.base import BaseCommand, CommandError, CommandParser

EXIT_INVALID = 1  # invalid input or a refused action (cli.md)
EXIT_USAGE = 2  # wrong usage


class UsageError(CommandError):
    """Wrong usage of a command: exit status 2."""

    def __init__(self, message: str):
        super().__init__(message, returncode=EXIT_USAGE)


class Command(BaseCommand):
    """Base for the project's commands: argparse mistakes exit 2 with a message, never a traceback."""

    def create_parser(self, prog_name: str, subcommand: str, **kwargs) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.called_from_command_line = True  # argparse errors exit 2 with usage, not a CommandError
        return parser

    def fail(self, message: str) -> None:
        """Refuse with exit status 1 (invalid input or refused action)."""
        raise CommandError(message, returncode=EXIT_INVALID)


def stderr_is_tty() -> bool:
    return sys.stderr.isatty()
