"""The ninja Schemas of the API's bodies (what the OpenAPI document at ``/api/v1/openapi.json`` shows).
spec: decisions.md ("Hosts apply decisions").
"""

from __future__ import annotations

from typing import Any

from ninja import Field, Schema


class ErrorOut(Schema):
    error: str
    details: list[Any]


class IngestErrorOut(ErrorOut):
    report: dict[str, Any] | None = None


class DecisionsOut(Schema):
    decisions: list[dict[str, Any]]
    next_since: int
    has_more: bool


class AckIn(Schema):
    status: str = Field(..., description='"applied" or "failed"')
    detail: str | None = Field(None, description="why it failed (at most 2000 characters)")


class AckOut(Schema):
    seq: int
    status: str
    detail: str
    acked_at: str


ERROR_RESPONSES = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 413: ErrorOut}
