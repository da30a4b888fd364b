"""``manage.py verify_decisions [--file EXPORT.jsonl]``: recompute the decision hash chain.

Exit 0 with ``chain intact: N decisions``; exit 1 with the first broken ``seq``, or, for the database,
when the log does not end at the chain head (rows missing at the tail, a rewritten tail:
``review.services.chain_head``). ``--file`` verifies a
JSONL export instead of the database (an export from ``--since`` is verified from its first record's
``prev_hash``). spec: decisions.md, "The record"; cli.md.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator

from lessons.management.base import Command as BaseCommand
from review.services.chain import GENESIS_PREV_HASH, chain_verify, decisions_verify
from review.services.chain_head import chain_head, chain_tail_problem

CHAIN_BROKEN = "chain broken at seq {seq}"
CHAIN_INTACT = "chain intact: {count} decisions"
FILE_UNREADABLE = "{path}: cannot read: {error}"
FILE_LINE_INVALID = "{path}, line {line}: not a JSON object"


class _BadLine(Exception):
    pass


class Command(BaseCommand):
    help = "Recompute the hash chain of the decision log and report the first broken link."

    def add_arguments(self, parser):
        parser.add_argument("--file", metavar="PATH", help="verify a JSONL export instead of the database")

    def handle(self, *args, file, **options):
        if file is None:
            head = chain_head()  # before the rows: a decision appended meanwhile moves it on
            broken, count = decisions_verify()
        else:
            broken, count = self._verify_file(file)
        if broken is not None:
            self.fail(CHAIN_BROKEN.format(seq=broken))
        problem = chain_tail_problem(head=head) if file is None else None
        if problem is not None:
            self.fail(problem)
        self.stdout.write(CHAIN_INTACT.format(count=count))

    def _verify_file(self, path: str) -> tuple[int | None, int]:
        count = 0

        def records(handle) -> Iterator[dict]:
            nonlocal count
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except (ValueError, RecursionError):  # RecursionError: arrays nested a thousand deep
                    raise _BadLine(number) from None
                if not isinstance(record, dict):
                    raise _BadLine(number)
                count += 1
                yield record

        try:
            with open(path, encoding="utf-8") as handle:
                stream = records(handle)
                first = next(stream, None)
                if first is None:
                    return None, 0
                start = GENESIS_PREV_HASH if first.get("seq") == 1 else str(first.get("prev_hash", ""))
                return chain_verify(itertools.chain([first], stream), prev_hash=start), count
        except _BadLine as exc:
            self.fail(FILE_LINE_INVALID.format(path=path, line=exc.args[0]))
        except (OSError, UnicodeDecodeError) as exc:
            self.fail(FILE_UNREADABLE.format(path=path, error=getattr(exc, "strerror", None) or exc))
        raise AssertionError("unreachable")
