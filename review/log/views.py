"""The decision log page and its exports.

docs/decisions.md, "The record".

The page and the exports share one ``DecisionFilter`` (URL parameters ``seq``, ``batch``, ``host``,
``actor``, ``action``, ``reason_code``, ``status``, ``from``, ``to``), so an export link carries exactly
the rows the page shows.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse, StreamingHttpResponse
from django.utils import timezone
from django.utils.functional import lazy
from django.utils.safestring import SafeString
from django.views.decorators.http import require_GET

from lessons.models import Host
from review.log.chart import log_chart
from review.log.exports import decisions_csv, decisions_jsonl
from review.log.filters import filter_decisions
from review.log.selectors import decisions_log, reason_codes_by_week, reason_codes_by_week_rollup
from review.log.tables import DecisionTable
from review.roles import PERM_VIEW_DECISIONS
from review.services.chain_head import chain_head_stamp, chain_receipt
from review.web.fragments import fragment, version_first
from review.web.htmx import render_region
from review.web.lookups import HOST_UNKNOWN, has_nul
from review.web.paging import BoundedPaginator, PageSizeConfig

PER_PAGE = 50
EXPORT_FILTERS_INVALID = "These filters are not valid: {errors}"
TABLE_PARAMS = ("page", "sort", "per_page")
FILTER_PARAMS = ("seq", "batch", "host", "actor", "action", "reason_code", "status", "outcome", "from", "to")
# What the table says when it has no row: the log is empty, or the filters leave nothing.
EMPTY_LOG = "No decisions yet. Every retire, restore, consolidation and budget change will be recorded here."
EMPTY_FILTERED = "No decisions match these filters."


def _unknown_host_first(host: str) -> str:
    """``EMPTY_FILTERED``, after "There is no host named 'x'." when the host filter names no host (one
    query, asked only when the empty table is drawn)."""
    # No host has a NUL (PostgreSQL text cannot hold one, and a query comparing one fails).
    if host and (has_nul(host) or not Host.objects.filter(name=host).exists()):
        return f"{HOST_UNKNOWN.format(host=host)} {EMPTY_FILTERED}"
    return EMPTY_FILTERED


_empty_filtered = lazy(_unknown_host_first, str)


def _empty_text(request: HttpRequest):
    return _empty_filtered(request.GET.get("host", "").strip())


def _filter_query(request: HttpRequest) -> str:
    """The filter parameters of this request (no sort, no page), URL-encoded, for the export links."""
    params = request.GET.copy()
    for key in list(params):
        if key not in FILTER_PARAMS or not params.get(key):
            del params[key]
    return params.urlencode()


@require_GET
@permission_required(PERM_VIEW_DECISIONS, raise_exception=True)
def decisions(request: HttpRequest) -> HttpResponse:
    """The log: filters, a reason-code chart of the filtered set, the table, export links.

    htmx requests (filters, sorting, paging) get only the ``log`` partial; the URL is pushed.
    """
    version_first(request)  # before the filters' and the pages' reads (review/web/fragments.py)
    log_filter = filter_decisions(request.GET, decisions_log())
    decisions = log_filter.qs if log_filter.is_valid() else decisions_log().none()
    filtered = any(request.GET.get(key) for key in FILTER_PARAMS)
    table = DecisionTable(decisions, empty_text=_empty_text(request) if filtered else EMPTY_LOG)
    # the bounded count: a COUNT of the whole log on every view grew with it (1M decisions: seconds)
    PageSizeConfig(request, paginate={"per_page": PER_PAGE, "paginator_class": BoundedPaginator}).configure(
        table
    )
    context = {
        "filter": log_filter,
        "filtered": filtered,
        "seq": log_filter.form.cleaned_data.get("seq") if log_filter.is_valid() else None,
        "batch": log_filter.form.cleaned_data.get("batch") if log_filter.is_valid() else None,
        "table": table,
        # the table drawn, kept by data version and the address (filters, sort, page, page size)
        "table_html": fragment(
            request, ("log_table", request.get_full_path()), lambda: table.as_html(request)
        ),
        "chart": _kept_chart(request, log_filter, decisions),
        "export_query": _filter_query(request),
    }
    return render_region(request, "review/log/decisions.html", "log", context)


@dataclass(frozen=True)
class _DrawnChart:
    """What the page shows of a ``LogChart``, drawn: whether there is a chart, its figures, the hosts cut."""

    charts: bool
    figures: SafeString
    hosts_cut: int


def _kept_chart(request: HttpRequest, log_filter, decisions) -> _DrawnChart:
    """The chart drawn (its SVG figures), kept by data version with the filters it shows
    (``review.web.fragments``): at 1M decisions its 64 figures were most of the page's time."""

    def draw() -> _DrawnChart:
        chart = _chart(log_filter, decisions)
        return _DrawnChart(charts=bool(chart.charts), figures=chart.figures, hosts_cut=chart.hosts_cut)

    # every parameter but the table's paging and sort (a parameter the chart ignores only costs a miss)
    shown = sorted((k, v) for k, v in request.GET.lists() if k not in TABLE_PARAMS)
    return fragment(request, ("log_chart", repr(shown)), draw)


def _chart(log_filter, decisions):
    """The chart of the filtered decisions: from the rollup when no filter but ``host`` is set (the
    same window; its cost does not grow with the log), else from the filtered decisions' window."""
    data = log_filter.form.cleaned_data if log_filter.is_valid() else None
    if data is not None and not any(value for key, value in data.items() if key != "host"):
        window = reason_codes_by_week_rollup(host=data.get("host") or None)
    else:
        window = reason_codes_by_week(decisions)
    return log_chart(window.rows, earlier=window.earlier, host_count=len(window.hosts))


def _export(request: HttpRequest, *, content_type: str, extension: str, body) -> HttpResponse:
    log_filter = filter_decisions(request.GET, decisions_log())
    if not log_filter.is_valid():
        errors = "; ".join(f"{field}: {' '.join(msgs)}" for field, msgs in log_filter.errors.items())
        return HttpResponse(
            EXPORT_FILTERS_INVALID.format(errors=errors), status=400, content_type="text/plain"
        )
    stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
    receipt = chain_receipt()  # read before the rows: an export ends at or past it unless truncated
    response = StreamingHttpResponse(body(log_filter.qs), content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="decisions-{stamp}.{extension}"'
    chain_head_stamp(response, receipt=receipt)
    return response


@require_GET
@permission_required(PERM_VIEW_DECISIONS, raise_exception=True)
def decisions_export_jsonl(request: HttpRequest) -> HttpResponse:
    """``GET /review/decisions/export.jsonl``: the filtered records in ``seq`` order, one a line."""
    return _export(
        request, content_type="application/x-ndjson; charset=utf-8", extension="jsonl", body=decisions_jsonl
    )


@require_GET
@permission_required(PERM_VIEW_DECISIONS, raise_exception=True)
def decisions_export_csv(request: HttpRequest) -> HttpResponse:
    """``GET /review/decisions/export.csv``: the filtered records in ``seq`` order, RFC 4180 CSV."""
    return _export(request, content_type="text/csv; charset=utf-8", extension="csv", body=decisions_csv)
