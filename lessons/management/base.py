"""Shared pieces of the management commands: the exit codes of README.md, "Commands", the ``--host NAME``
check and the
importers' report writer."""

from __future__ import annotations

import os
import sys

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from lessons.core.interchange import HOST_NAME
from lessons.services.disk import disk_full

EXIT_INVALID = 1  # invalid input or a refused action (README.md, "Commands")
EXIT_USAGE = 2  # wrong usage
DISK_FULL = "disk full: nothing was written; free some space and run the command again"


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

    def execute(self, *args, **options):
        # A full disk is the operator's to fix, not a bug: one line (DISK_FULL), exit 1. Each write
        # service is one transaction, so nothing of the interrupted work was kept (issue 13, fault 12).
        try:
            return super().execute(*args, **options)
        except (OSError, DatabaseError) as exc:
            if disk_full(exc):
                raise CommandError(DISK_FULL, returncode=EXIT_INVALID) from exc
            raise


def write_stream(command: BaseCommand, lines) -> None:
    """Write an export's ``lines`` (a generator of strings, each with its own line end) to stdout. A
    reader that goes away (``| head``) stops it quietly; the generator is closed in any case (releasing a
    server-side cursor before the connection closes)."""
    try:
        for line in lines:
            command.stdout.write(line, ending="")
        command.stdout.flush()
    except BrokenPipeError:
        # Keep Python's exit flush from failing on the closed pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        lines.close()


def write_result(command: BaseCommand, result) -> None:
    """An importer's ``ImportResult`` (lessons.importers.run): notes and errors on stderr, the report and
    the importer's counts on stdout."""
    for line in result.error_lines():
        command.stderr.write(line)
    for note in result.notes():
        command.stderr.write(f"note: {note}")
    for line in result.lines():
        command.stdout.write(line)


def check_host(host: str) -> None:
    """``--host NAME``: a host name (docs/interchange.md, "host"), else ``UsageError`` (exit 2)."""
    if not HOST_NAME.fullmatch(host):
        raise UsageError(f"--host: expected a host name matching {HOST_NAME.pattern}, got {host!r}")
