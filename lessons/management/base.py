"""Shared pieces of the management commands: the exit codes of README.md, "Commands", the ``--host NAME``
check and the
importers' report writer."""

from __future__ import annotations

import argparse
import os
import sys

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import DatabaseError

from lessons.core.interchange import HOST_NAME
from lessons.core.text import storable
from lessons.services.disk import disk_full

EXIT_INVALID = 1  # invalid input or a refused action (README.md, "Commands")
EXIT_USAGE = 2  # wrong usage
DISK_FULL = "disk full: nothing was written; free some space and run the command again"
NOT_TEXT = (
    "{option}: {value!r} is not text: it holds a NUL or bytes that are not UTF-8 (is the terminal's "
    "encoding UTF-8?)"
)
# Django's own options that name a module or a folder, not text the command stores or looks up.
_DJANGO_PATHS = ("settings", "pythonpath")


class UsageError(CommandError):
    """Wrong usage of a command: exit status 2."""

    def __init__(self, message: str):
        super().__init__(message, returncode=EXIT_USAGE)


class Command(BaseCommand):
    """Base for the project's commands: argparse mistakes exit 2 with a message, never a traceback; so
    does an argument that is not text (``NOT_TEXT``: a terminal in Latin-1 passes bytes that Python
    keeps as lone surrogates, which no database takes), except the options that name files
    (``path_options``, their ``dest``: the file system takes any bytes)."""

    path_options: tuple[str, ...] = ()

    def create_parser(self, prog_name: str, subcommand: str, **kwargs) -> CommandParser:
        parser = super().create_parser(prog_name, subcommand, **kwargs)
        parser.called_from_command_line = True  # argparse errors exit 2 with usage, not a CommandError
        self._option_names = _option_names(parser)
        return parser

    def fail(self, message: str) -> None:
        """Refuse with exit status 1 (invalid input or refused action)."""
        raise CommandError(message, returncode=EXIT_INVALID)

    def execute(self, *args, **options):
        self._check_text(args, options)
        # A full disk is the operator's to fix, not a bug: one line (DISK_FULL), exit 1. Each write
        # service is one transaction, so nothing of the interrupted work was kept (issue 13, fault 12).
        try:
            return super().execute(*args, **options)
        except (OSError, DatabaseError) as exc:
            if disk_full(exc):
                raise CommandError(DISK_FULL, returncode=EXIT_INVALID) from exc
            raise

    def _check_text(self, args: tuple, options: dict) -> None:
        """``UsageError`` (``NOT_TEXT``) for the first argument that is not text, paths aside."""
        names = getattr(self, "_option_names", {})
        given = [("args", value) for value in args]
        for dest, value in options.items():
            if dest in self.path_options or dest in _DJANGO_PATHS:
                continue
            given.extend((dest, item) for item in (value if isinstance(value, (list, tuple)) else [value]))
        for dest, value in given:
            if isinstance(value, str) and not storable(value):
                raise UsageError(NOT_TEXT.format(option=names.get(dest, dest), value=value))


def _option_names(parser: argparse.ArgumentParser) -> dict[str, str]:
    """``{dest: how the command line spells it}`` of ``parser``'s arguments and its subcommands': the
    long option (``--as``), or a positional's metavar (``HASH``)."""
    names: dict[str, str] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                names.update(_option_names(sub))
        elif action.option_strings:
            names.setdefault(action.dest, action.option_strings[-1])
        else:
            names.setdefault(action.dest, action.metavar if isinstance(action.metavar, str) else action.dest)
    return names


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
