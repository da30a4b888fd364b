"""The decision's own page (its record and its outcome, with the evidence) and the revisit queue (the
contradicted decisions, newest first, each with its way back). docs/decisions.md, "Outcomes".
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.decorators import permission_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from lessons.core.text import from_ms
from review.log.evidence import evidence_html
from review.models import Action, Decision, DecisionOutcome
from review.outcomes.calibration import calibration_lines, calibration_months
from review.outcomes.format import LABELS, outcome_of
from review.outcomes.forms import CalibrationFilter
from review.outcomes.selectors import live_now
from review.roles import ADMIN, PERM_VIEW_DECISIONS, VIEWER, user_role
from review.web.links import draft_url, lesson_url, pile_href
from review.web.lookups import NotFound, shows_not_found
from review.web.paging import whole_number

DECISION_UNKNOWN_TITLE = "Unknown decision"
DECISION_UNKNOWN = "There is no decision #{seq} in the log."

REVISIT_PER_PAGE = 25
NO_OUTCOME = {
    Action.SET_BUDGET: "A budget change gets no outcome: the piles it made or removed are on the host page.",
    Action.REJECT: "A rejected draft changed no lesson: it gets no outcome.",
}
NOT_YET = "Not judged yet: the outcome is computed when the host sends new sessions, corrections or verdicts."
EMPTY_CALIBRATION = (
    "No decision of yours has an outcome yet: outcomes come from the sessions, corrections and verdicts a"
    " host sends after a decision."
)
EMPTY_CALIBRATION_VIEWER = (
    "A viewer makes no decisions: this page shows a reviewer their own decisions, and an admin the team's."
)
EMPTY_REVISIT = "No contradicted decision: nothing the agent's later sessions argue against."


UNDONE_RETIRE = "Undone since: the lesson is live again."
UNDONE_APPROVE = "Undone since: the consolidation is no longer live (rolled back)."
UNDONE_RESTORE = "Undone since: the lesson is not live any more."


def _way_back(decision: Decision, live: set[tuple[str, str]]) -> tuple[str, str | None, str]:
    """What undoes the decision, and where (a person still gives a reason there): a retire is undone by
    restoring the lesson (its page), an approve by rolling the consolidation back (the draft's page), a
    restore by retiring the lesson again; none when a later decision already did (the third item says so:
    the attacker found the way back offered for a lesson already live again). ``live``: ``live_now``."""
    host = decision.host
    if decision.action == Action.RETIRE and decision.lesson_hash:
        if (host, decision.lesson_hash) in live:
            return "", None, UNDONE_RETIRE
        return "Restore the lesson", lesson_url(host, decision.lesson_hash), ""
    if decision.action == Action.APPROVE and decision.draft_id:
        if decision.created_hash and (host, decision.created_hash) not in live:
            return "", None, UNDONE_APPROVE
        return "Roll the consolidation back", draft_url(host, decision.draft_id), ""
    if decision.action == Action.RESTORE and decision.lesson_hash:
        if (host, decision.lesson_hash) not in live:
            return "", None, UNDONE_RESTORE
        return "Retire the lesson again", lesson_url(host, decision.lesson_hash), ""
    if decision.subject is not None:
        return "Open the pile", pile_href(host, decision.namespace or "", decision.subject), ""
    return "", None, ""


def _evidence(outcome: DecisionOutcome | None) -> dict:
    """The stored evidence with its times as datetimes (UTC) for the template; ``more``: how many
    corrections it counts beyond those it lists (an outcome of rules version 1 counts none)."""
    if outcome is None:
        return {}
    evidence = outcome.evidence or {}
    corrections = [{**c, "at": from_ms(c["at_ms"])} for c in evidence.get("corrections", [])]
    return {
        "why": evidence.get("why", ""),
        "corrections": corrections,
        "more": max(0, evidence.get("corrections_total", len(corrections)) - len(corrections)),
        "verdicts": [{**v, "at": from_ms(v["at_ms"])} for v in evidence.get("verdicts", [])],
    }


@require_GET
@permission_required(PERM_VIEW_DECISIONS, raise_exception=True)
@shows_not_found
def decision(request: HttpRequest, seq: str) -> HttpResponse:
    """Decision ``seq``: the record's fields (its lesson, draft and created consolidation linked to their
    pages), its outcome and the evidence it rests on, and whether a later decision undid it (three queries;
    two for a decision nothing undoes); the way back only for a contradicted one."""
    found, number = None, whole_number(seq)
    if number is not None:
        found = Decision.objects.select_related("outcome", "ack").filter(seq=number).first()
    if found is None:
        raise NotFound(DECISION_UNKNOWN_TITLE, DECISION_UNKNOWN.format(seq=seq))
    outcome = outcome_of(found)
    contradicted = outcome is not None and outcome.outcome == DecisionOutcome.Kind.CONTRADICTED
    # whatever its outcome (or none yet), the page says when a later decision undid it (a newcomer's finding)
    undoable = found.action in (Action.RETIRE, Action.APPROVE, Action.RESTORE)
    way_back, way_back_url, undone = _way_back(found, live_now([found]) if undoable else set())
    context = {
        "decision": found,
        "outcome": outcome,
        "label": LABELS.get(outcome.outcome) if outcome else None,
        "evidence": _evidence(outcome),
        "no_outcome": NO_OUTCOME.get(found.action, NOT_YET),
        "way_back": way_back if contradicted else "",
        "way_back_url": way_back_url,
        "undone": undone if undoable else "",
        "lesson_url": lesson_url(found.host, found.lesson_hash) if found.lesson_hash else None,
        "draft_url": draft_url(found.host, found.draft_id) if found.draft_id else None,
        "created_url": lesson_url(found.host, found.created_hash) if found.created_hash else None,
        "pile_url": pile_href(found.host, found.namespace or "", found.subject) if found.subject else None,
        # the record's evidence as in the log: labelled fields, the raw JSON folded (review/log/evidence.py)
        "record_evidence": evidence_html(found.evidence),
    }
    return render(request, "review/outcomes/decision.html", context)


@require_GET
@permission_required(PERM_VIEW_DECISIONS, raise_exception=True)
def revisit(request: HttpRequest) -> HttpResponse:
    """The contradicted decisions, newest first, ``REVISIT_PER_PAGE`` a page by seq (``?before=SEQ``:
    the page after the one ending at SEQ); each with its way back, or what undid it since (``live_now``).
    Three queries, whatever the log holds."""
    before = whole_number(request.GET.get("before", ""))
    rows = DecisionOutcome.objects.filter(outcome=DecisionOutcome.Kind.CONTRADICTED)
    rows = rows.select_related("decision")
    if before is not None:
        rows = rows.filter(decision__seq__lt=before)
    page = list(rows.order_by("-decision__seq")[: REVISIT_PER_PAGE + 1])
    more = len(page) > REVISIT_PER_PAGE
    page = page[:REVISIT_PER_PAGE]
    items = []
    live = live_now([row.decision for row in page])
    for row in page:
        label, url, undone = _way_back(row.decision, live)
        items.append(
            {
                "outcome": row,
                "decision": row.decision,
                "way_back": label,
                "way_back_url": url,
                "undone": undone,
            }
        )
    context = {
        "items": items,
        "next_before": page[-1].decision.seq if more else None,
        "paged": before is not None,
        "empty": EMPTY_REVISIT,
    }
    return render(request, "review/outcomes/revisit.html", context)


@require_GET
@permission_required(PERM_VIEW_DECISIONS, raise_exception=True)
def calibration(request: HttpRequest) -> HttpResponse:
    """How decisions turned out by month and reason code (over every host, or on ``?host=``), the newest
    ``MONTHS_SHOWN`` months (``?before=YYYY-MM-DD`` pages back): the signed-in user's own; an admin's view
    adds the team's totals and each reviewer's lines (by name, never ranked); a viewer, who decides
    nothing, is told whose decisions the page shows. A few queries, of the rollup, whatever the number of
    decisions."""
    role = user_role(request.user)
    admin = role == ADMIN
    form = CalibrationFilter(request.GET)
    host, before = (form.cleaned_data["host"], form.cleaned_data["before"]) if form.is_valid() else ("", None)
    me = request.user.get_username()
    months, more = calibration_months(actor=None if admin else me, host=host, before=before)
    mine, _ = calibration_lines(actor=me, months=months, host=host)
    team, by_actor = calibration_lines(actor=None, months=months, host=host) if admin else ([], {})
    query = {"host": host} if host else {}
    context = {
        "mine": mine,
        "team": team,
        "by_actor": by_actor,
        "admin": admin,
        "empty": EMPTY_CALIBRATION_VIEWER if role == VIEWER else EMPTY_CALIBRATION,
        "filter": form,
        "host": host,
        "months": months,
        "earlier": "?" + urlencode({**query, "before": months[-1].isoformat()}) if more else "",
        "newest": "?" + urlencode(query) if before else "",
    }
    return render(request, "review/outcomes/calibration.html", context)
