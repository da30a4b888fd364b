"""The import report: per record type, how many were created, unchanged, updated, held, rejected.

docs/interchange.md, "Errors and the import report".
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lessons.core.interchange import RECORD_TYPES

OUTCOMES = ("created", "unchanged", "updated", "held", "rejected")
MAX_ERRORS_IN_FULL = 100


@dataclass(frozen=True)
class LineError:
    """One invalid line: where (source, line) and what (field, message)."""

    source: str
    line: int
    field: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.field}: {self.message}"

    def as_dict(self) -> dict:
        return {"source": self.source, "line": self.line, "field": self.field, "message": self.message}


@dataclass
class ImportReport:
    """What an ingest did (or, with ``dry_run``, would do). ``written`` is False when nothing was kept."""

    dry_run: bool = False
    skip_invalid: bool = False
    lines: int = 0
    counts: dict[str, dict[str, int]] = field(
        default_factory=lambda: {t: dict.fromkeys(OUTCOMES, 0) for t in (*RECORD_TYPES, "unknown")}
    )
    errors: list[LineError] = field(default_factory=list)
    error_count: int = 0
    notes: list[str] = field(default_factory=list)
    held: list[str] = field(default_factory=list)
    written: bool = False
    extra: dict[str, int] = field(default_factory=dict)
    # With ``only_host``: the lines naming another host, as ``"line N: host NAME"`` (the first
    # ``MAX_ERRORS_IN_FULL``), and how many there were. Not part of ``as_dict``: the API refuses the
    # batch with its own answer.
    outside_host: list[str] = field(default_factory=list)
    outside_host_count: int = 0

    def count(self, rtype: str, outcome: str, n: int = 1) -> None:
        self.counts[rtype][outcome] += n

    def add_error(self, error: LineError, rtype: str | None) -> None:
        self.error_count += 1
        if len(self.errors) < MAX_ERRORS_IN_FULL:
            self.errors.append(error)
        self.count(rtype if rtype in self.counts else "unknown", "rejected")

    def add_held(self, text: str) -> None:
        """A record kept as a reviewer decided; the first ``MAX_ERRORS_IN_FULL`` are listed."""
        if len(self.held) < MAX_ERRORS_IN_FULL:
            self.held.append(text)

    def add_outside_host(self, line: str) -> None:
        """A line whose record names a host the ingest may not write (its error is added separately)."""
        self.outside_host_count += 1
        if len(self.outside_host) < MAX_ERRORS_IN_FULL:
            self.outside_host.append(line)

    def add_detail(self, error: LineError) -> None:
        """Another problem on a line already counted as rejected."""
        if len(self.errors) < MAX_ERRORS_IN_FULL:
            self.errors.append(error)

    def merge(self, later: ImportReport) -> None:
        """Add the validation report of the lines after this report's (the second part of a file
        validated in another process): counts added, its errors and lines listed after this report's
        up to the same limits, as if one report had seen every line."""
        self.lines += later.lines
        self.error_count += later.error_count
        self.errors.extend(later.errors[: max(0, MAX_ERRORS_IN_FULL - len(self.errors))])
        self.outside_host_count += later.outside_host_count
        self.outside_host.extend(later.outside_host[: max(0, MAX_ERRORS_IN_FULL - len(self.outside_host))])
        for rtype, outcomes in later.counts.items():
            for outcome, n in outcomes.items():
                self.counts[rtype][outcome] += n

    @property
    def ok(self) -> bool:
        return self.error_count == 0

    def refused_after_writing(self) -> None:
        """A batch the write phase refused (a reference that did not resolve) was rolled back: keep only
        its rejected lines in the counts, as for a batch refused while reading (nothing was created,
        updated or held). docs/interchange.md, "Errors and the import report"."""
        for counts in self.counts.values():
            for outcome in OUTCOMES:
                if outcome != "rejected":
                    counts[outcome] = 0
        self.held.clear()

    def totals(self) -> dict[str, int]:
        return {o: sum(c[o] for c in self.counts.values()) for o in OUTCOMES}

    def summary_line(self) -> str:
        t = self.totals()
        if self.error_count and not self.skip_invalid:
            head = f"refused: {self.error_count} invalid line(s), nothing written"
        elif self.dry_run:
            head = "dry run, nothing written"
        else:
            head = "imported"
        body = ", ".join(f"{t[o]} {o}" for o in OUTCOMES)
        return f"{head}: {self.lines} line(s); {body}"

    def table(self) -> str:
        """A small fixed-width table of the counts, one row per record type that occurred."""
        rows = [f"{'type':<11}" + "".join(f"{o:>10}" for o in OUTCOMES)]
        for rtype, c in self.counts.items():
            if any(c.values()):
                rows.append(f"{rtype:<11}" + "".join(f"{c[o]:>10}" for o in OUTCOMES))
        return "\n".join(rows)

    def error_lines(self) -> list[str]:
        out = [str(e) for e in self.errors]
        if self.error_count > len(self.errors):
            out.append(f"... and {self.error_count - len(self.errors)} more invalid line(s)")
        return out

    def as_dict(self) -> dict:
        """JSON shape used by the API and ``--format json``."""
        return {
            "ok": self.ok,
            "dry_run": self.dry_run,
            "written": self.written,
            "lines": self.lines,
            "counts": {k: v for k, v in self.counts.items() if any(v.values())},
            "error_count": self.error_count,
            "errors": [e.as_dict() for e in self.errors],
            "held": self.held,
            "notes": self.notes,
        }
