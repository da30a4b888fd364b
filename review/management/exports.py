"""What the export commands share (``export_decisions``, ``export_outcomes``, ``export_restatements``):
``--format jsonl|csv`` and ``--host NAME``, the host looked up, the rows streamed to stdout in the chosen
format. docs/decisions.md, "Exports"; README.md, "Commands".
"""

from __future__ import annotations

from collections.abc import Callable, Generator

from lessons.management.base import Command as BaseCommand
from lessons.management.base import write_stream
from lessons.models import Host
from review.management.lookups import LookupRefused, host_by_name


class ExportCommand(BaseCommand):
    """Base of an export command: ``--format jsonl|csv`` (default ``jsonl``), the subclass's own
    arguments (``add_filters``), then ``--host NAME`` with the help ``host_help``. ``handle`` looks the host
    up (an unknown one exits 1 with ``HOST_UNKNOWN``'s line) and streams ``formats[format](rows)`` of
    ``rows(host=..., **options)`` to stdout (``write_stream``: a reader that goes away stops it); each of
    ``formats`` (``"jsonl"``, ``"csv"``) is a generator of lines, each with its own line end."""

    host_help: str
    formats: dict[str, Callable[..., Generator[str]]]

    def add_arguments(self, parser):
        """``--format``, the subclass's ``add_filters``, ``--host``: in that order in ``--help``."""
        parser.add_argument("--format", choices=["jsonl", "csv"], default="jsonl")
        self.add_filters(parser)
        parser.add_argument("--host", help=self.host_help)

    def add_filters(self, parser) -> None:
        """The subclass's arguments between ``--format`` and ``--host``; none by default."""

    def rows(self, *, host: Host | None, **options):
        """What to export: all of it, or only ``host``'s when it is not ``None``."""
        raise NotImplementedError

    def handle(self, *args, format, host, **options):
        """Stream the rows of ``--host`` (all hosts without it) in ``--format``; an unknown host exits 1
        (``HOST_UNKNOWN``) before anything is written."""
        try:
            host_obj = host_by_name(host)
        except LookupRefused as exc:
            self.fail(str(exc))
        write_stream(self, self.formats[format](self.rows(host=host_obj, **options)))
