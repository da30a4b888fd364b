"""``manage.py verify_decisions [--file EXPORT.jsonl] [--receipt RECEIPT.json]``: recompute the decision
hash chain.

Exit 0 with ``chain intact: N decisions``; exit 1 with the first broken ``seq``, or, for the database,
when the chain head does not carry this server's seal, or the log does not end at the head (rows missing
at the tail, a rewritten tail: ``review.services.chain_head``). ``--file`` verifies a JSONL export
instead of the database (an export from ``--since`` is verified from its first record's ``prev_hash``).
``--receipt`` also proves the log extends a head receipt a host kept (issue 21, fault 10): the receipt's
seq holds the receipt's hash (for a file: or the file's first record follows it), and, for the database,
the receipt carries this server's seal. docs/decisions.md, "The record"; docs/decisions-verify.md.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator

from lessons.core.text import hash8
from lessons.management.base import Command as BaseCommand
from review.services.chain import GENESIS_PREV_HASH, chain_verify, decisions_verify
from review.services.chain_head import (
    RECEIPT_BEYOND,
    RECEIPT_REWRITTEN,
    RECEIPT_SEAL_BROKEN,
    SEAL_BROKEN,
    chain_receipt,
    chain_tail_problem,
    receipt_problem,
    receipt_sealed,
)

CHAIN_BROKEN = "chain broken at seq {seq}"
CHAIN_INTACT = "chain intact: {count} decisions"
FILE_UNREADABLE = "{path}: cannot read: {error}"
FILE_LINE_INVALID = "{path}, line {line}: not a JSON object"
RECEIPT_INVALID = (
    '{path}: not a chain head receipt: expected a JSON object with "seq" (a whole number) and "hash" '
    '(and "at", "mac"), or an API answer with such a "head"'
)
RECEIPT_EXTENDED = "extends the receipt at seq {seq} ({hash}…)"
RECEIPT_NOT_IN_FILE = "{path}: the receipt's seq {seq} is not in the file (its records: seq {first}..{last})"


class _BadLine(Exception):
    pass


class Command(BaseCommand):
    help = "Recompute the hash chain of the decision log and report the first broken link."
    path_options = ("file", "receipt")  # files: any bytes the file system takes

    def add_arguments(self, parser):
        parser.add_argument("--file", metavar="PATH", help="verify a JSONL export instead of the database")
        parser.add_argument(
            "--receipt", metavar="PATH", help="also prove the log extends this chain head receipt (JSON)"
        )

    def handle(self, *args, file, receipt, **options):
        kept = self._read_receipt(receipt) if receipt is not None else None
        if file is None:
            head = chain_receipt()  # before the rows: a decision appended meanwhile moves it on
            broken, count = decisions_verify()
        else:
            broken, count = self._verify_file(file, receipt=kept)
        if broken is not None:
            self.fail(CHAIN_BROKEN.format(seq=broken))
        if file is None:
            if not receipt_sealed(head):
                self.fail(SEAL_BROKEN.format(seq=head["seq"]))
            problem = chain_tail_problem(head=(head["seq"], head["hash"]))
            if problem is None and kept is not None:
                problem = RECEIPT_SEAL_BROKEN.format(path=receipt) if not receipt_sealed(kept) else None
                problem = problem or receipt_problem(kept)
            if problem is not None:
                self.fail(problem)
        self.stdout.write(CHAIN_INTACT.format(count=count))
        if kept is not None:
            self.stdout.write(RECEIPT_EXTENDED.format(seq=kept["seq"], hash=hash8(kept["hash"])))

    def _read_receipt(self, path: str) -> dict:
        """The receipt in ``path``: ``{"seq", "hash", "at", "mac"}``, or an API answer's ``head``."""
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, UnicodeDecodeError) as exc:
            self.fail(FILE_UNREADABLE.format(path=path, error=getattr(exc, "strerror", None) or exc))
        except (ValueError, RecursionError):
            self.fail(RECEIPT_INVALID.format(path=path))
        if isinstance(data, dict) and isinstance(data.get("head"), dict):
            data = data["head"]
        seq = data.get("seq") if isinstance(data, dict) else None
        if not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
            self.fail(RECEIPT_INVALID.format(path=path))
        if not isinstance(data.get("hash"), str):
            self.fail(RECEIPT_INVALID.format(path=path))
        return {
            "seq": seq,
            "hash": data["hash"],
            "at": str(data.get("at") or ""),
            "mac": str(data.get("mac", "")),
        }

    def _verify_file(self, path: str, *, receipt: dict | None = None) -> tuple[int | None, int]:
        count = 0
        span: dict[str, int] = {}  # the first and the last seq read

        def checked(stream: Iterator[dict]) -> Iterator[dict]:
            """The records, checking the receipt on the way: seq S has its hash, or the first record
            follows S (an export since S)."""
            for record in stream:
                seq = span["last"] = record.get("seq")
                if "first" not in span:
                    span["first"] = seq
                    if receipt is not None and seq == receipt["seq"] + 1:
                        self._receipt_hash(record.get("prev_hash"), receipt)
                if receipt is not None and seq == receipt["seq"]:
                    self._receipt_hash(record.get("hash"), receipt)
                yield record

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
                    if receipt is not None and receipt["seq"] > 0:
                        self.fail(RECEIPT_BEYOND.format(seq=receipt["seq"], last=0))
                    return None, 0
                start = GENESIS_PREV_HASH if first.get("seq") == 1 else str(first.get("prev_hash", ""))
                broken = chain_verify(checked(itertools.chain([first], stream)), prev_hash=start)
                if broken is None and receipt is not None and receipt["seq"] > 0:
                    self._receipt_in(path, receipt, span)
                return broken, count
        except _BadLine as exc:
            self.fail(FILE_LINE_INVALID.format(path=path, line=exc.args[0]))
        except (OSError, UnicodeDecodeError) as exc:
            self.fail(FILE_UNREADABLE.format(path=path, error=getattr(exc, "strerror", None) or exc))
        raise AssertionError("unreachable")

    def _receipt_hash(self, found, receipt: dict) -> None:
        if found != receipt["hash"]:
            row = hash8(str(found))
            self.fail(RECEIPT_REWRITTEN.format(seq=receipt["seq"], row=row, receipt=hash8(receipt["hash"])))

    def _receipt_in(self, path: str, receipt: dict, span: dict[str, int]) -> None:
        """The receipt's seq was among the records, or just before the first."""
        first, last = span["first"], span["last"]
        if not first - 1 <= receipt["seq"] <= last:
            self.fail(RECEIPT_NOT_IN_FILE.format(path=path, seq=receipt["seq"], first=first, last=last))
