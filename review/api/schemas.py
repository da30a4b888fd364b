"""The ninja Schemas of the API's bodies (what the OpenAPI document at ``/api/v1/openapi.json`` shows).
docs/decisions.md ("Hosts apply decisions").
"""

from __future__ import annotations

from typing import Any

from ninja import Field, Schema
from pydantic import ConfigDict


class ErrorOut(Schema):
    error: str
    details: list[Any]


class IngestErrorOut(ErrorOut):
    report: dict[str, Any] | None = None


ACK_STATUSES = ["applied", "failed"]


class ChainHeadOut(Schema):
    seq: int = Field(..., description="the seq the decision log ends with (0 before the first decision)")
    hash: str = Field(..., description="that record's hash: a host whose last record differs was cut short")
    at: str = Field(..., description='that record\'s "at" ("" before the first decision)')
    mac: str = Field(..., description="the server's seal of seq, hash and at (HMAC-SHA256 hex): a receipt")


class OutcomeOut(Schema):
    outcome: str = Field(..., description='"supported", "contradicted" or "too_early"')
    sessions_after: int = Field(..., description="the host's sessions with activity after the decision")
    evidence: dict[str, Any] = Field(..., description="the corrections and verdicts it rests on, and why")
    computed_at: str = Field(..., description="when it was computed (UTC)")


class DecisionsOut(Schema):
    decisions: list[dict[str, Any]]
    next_since: int
    has_more: bool
    head: ChainHeadOut
    outcomes: dict[str, OutcomeOut] = Field(
        default_factory=dict,
        description=(
            "DERIVED, not part of any hashed record: the outcome of each decision of this page that has "
            "one, by its seq (did the decision help: supported, contradicted or too early); it changes as "
            "new sessions arrive"
        ),
    )


class PilesOut(Schema):
    piles: list[dict[str, Any]] = Field(..., description="this page's piles, by host, namespace, subject")
    next: str | None = Field(..., description="pass as ?cursor= for the next page; null on the last page")


class AckIn(Schema):
    model_config = ConfigDict(extra="forbid")  # an unknown key is an error, as in an ingest line

    status: str = Field(..., description='"applied" or "failed"', json_schema_extra={"enum": ACK_STATUSES})
    detail: str | None = Field(None, description="why it failed (at most 2000 characters)")


class AckOut(Schema):
    seq: int
    status: str
    detail: str
    acked_at: str
    head: ChainHeadOut


JOB_STATES = ["queued", "running", "succeeded", "failed"]


class JobProgressOut(Schema):
    phase: str = Field(
        ..., description='the pass under way: "validate", "lessons", "references" ("done" at the end)'
    )
    lines_done: int = Field(..., description="lines read in that pass")
    lines_total: int = Field(..., description="lines in the batch")
    percent: int = Field(..., description="0..100 over the three passes")


class JobOut(Schema):
    id: int
    url: str = Field(..., description="this job's address (GET it until state is succeeded or failed)")
    state: str = Field(..., json_schema_extra={"enum": JOB_STATES})
    progress: JobProgressOut
    report: dict[str, Any] | None = Field(None, description="the import report, once finished")
    error: str = Field(..., description="why the job failed (empty otherwise)")
    dry_run: bool
    created_at: str | None
    started_at: str | None
    finished_at: str | None


ERROR_RESPONSES = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 413: ErrorOut}
