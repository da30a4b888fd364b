"""A decision's ``evidence`` as people read it: labelled fields (the pile then, the gates, each member's
verdict and recurrence, a written consolidation's text and waivers…), with the raw JSON kept behind a
``<details>`` for auditors. The record itself is unchanged; this is only how the log and a decision's page
show it. docs/decisions.md, "The record" and "The log".

Every value is escaped here (``html_format``): a written consolidation's text and a waiver's reason are
user-written. A key this module does not know is shown as it is, its value as JSON, so nothing the record
holds is hidden.
"""

from __future__ import annotations

import json

from django.utils.safestring import SafeString

from lessons.core.text import hash8
from review.web.format import counted, html_format, shown_in

EVIDENCE_CELL = (
    '<details class="evidence"><summary>{summary}</summary><dl class="evidence">{rows}</dl>'
    '<details class="evidence-raw"><summary>Raw JSON</summary><pre>{raw}</pre></details></details>'
)
ROW = "<dt>{label}</dt><dd>{value}</dd>"
# The labels, in the order they are shown; the tests assert them.
LABELS = {
    "pile": "Pile then",
    "verdict": "Verdict then",
    "recurrence": "Recurrence then",
    "budget": "Budget",
    "piles": "Piles",
    "gates": "Gates",
    "supersedes": "Supersedes",
    "members": "Members then",
    "dropped_anchors": "Dropped anchors",
    "written_by": "Written by",
    "text": "Consolidation text",
    "waivers": "Waived anchors",
}
NO_ANCHOR_DROPPED = "none"
# The recurrence counts shown only when not zero, with their words (docs/piles-and-recurrence.md).
RARE_COUNTS = (
    ("during", "mid-turn"),
    ("unknown", "unknown turn start"),
    ("ambiguous", "ambiguous"),
    ("earlier_version", "earlier version"),
)


def raw_json(evidence: object) -> str:
    """The evidence as indented JSON with sorted keys, non-ASCII kept (what an auditor compares with the
    export's ``evidence``; the export itself is compact: docs/decisions.md, "Exports")."""
    return json.dumps(evidence, indent=2, sort_keys=True, ensure_ascii=False)


def _on_off(enabled: object) -> str:
    return "on" if enabled else "off"


def evidence_summary(evidence: dict) -> str:
    """A one-line summary of the evidence: ``count/max_active``, the verdict and recurrence of a lesson
    decision; ``max_active 8 → 12`` and the pile counts of a budget decision."""
    parts = []
    before, after = evidence.get("before"), evidence.get("after")
    if isinstance(before, dict) and isinstance(after, dict):
        parts.append(f"max_active {before.get('max_active')} → {after.get('max_active')}")
        parts.append(
            f"budget {_on_off(before.get('budget_enabled'))} → {_on_off(after.get('budget_enabled'))}"
        )
        if "piles_before" in evidence and "piles_after" in evidence:
            parts.append(f"piles {evidence['piles_before']} → {evidence['piles_after']}")
    if "count" in evidence and "max_active" in evidence:
        parts.append(f"{evidence['count']}/{evidence['max_active']}")
    if evidence.get("verdict"):
        parts.append(str(evidence["verdict"]))
    recurrence = evidence.get("recurrence")
    if isinstance(recurrence, dict) and "recurred_sessions" in recurrence:
        parts.append(f"recurred in {counted(recurrence['recurred_sessions'], 'session')}")
    return " · ".join(parts) or "see details"


def recurrence_text(counts: object) -> str:
    """The seven recurrence counts in words: ``shown in 12 sessions · recurred 3 times in 2 sessions``, then
    any of ``during``/``unknown``/``ambiguous``/``earlier_version`` not zero (``· 1 ambiguous``). A value
    that is not a dict of counts is shown as JSON. docs/piles-and-recurrence.md, "The seven counts"."""
    if not isinstance(counts, dict):
        return json.dumps(counts, ensure_ascii=False)
    parts = [shown_in(counts.get("sessions_shown"))]
    recurred = counts.get("recurred") or 0
    if recurred:
        sessions = counted(counts.get("recurred_sessions") or 0, "session")
        parts.append(f"recurred {counted(recurred, 'time')} in {sessions}")
    else:
        parts.append("no recurred correction")
    parts += [f"{counts[key]} {words}" for key, words in RARE_COUNTS if counts.get(key)]
    return " · ".join(parts)


def _member(member: object) -> SafeString:
    if not isinstance(member, dict):
        return html_format("<li>{v}</li>", v=json.dumps(member, ensure_ascii=False))
    return html_format(
        '<li><span class="mono">{short}…</span> {verdict} · {recurrence}</li>',
        short=hash8(str(member.get("hash", ""))),
        verdict=member.get("verdict") or "",
        recurrence=recurrence_text(member.get("recurrence")),
    )


def _written_rows(written: object) -> list[tuple[str, SafeString | str]]:
    if not isinstance(written, dict):
        return [("written", json.dumps(written, ensure_ascii=False))]
    rows: list[tuple[str, SafeString | str]] = [
        (LABELS["written_by"], str(written.get("by", ""))),
        (LABELS["text"], html_format('<div class="lesson-text">{text}</div>', text=written.get("text", ""))),
    ]
    waivers = written.get("waivers")
    if isinstance(waivers, dict) and waivers:
        items = "".join(
            html_format("<li><code>{anchor}</code>: {reason}</li>", anchor=a, reason=r)
            for a, r in sorted(waivers.items())
        )
        rows.append((LABELS["waivers"], SafeString(f"<ul>{items}</ul>")))
    return rows


def evidence_rows(evidence: dict) -> list[tuple[str, SafeString | str]]:
    """``(label, value)`` pairs of what ``evidence`` holds, in ``LABELS`` order, then its other keys
    (``key``, JSON) sorted; a value is a plain string (escaped when shown) or markup already escaped.

    Lesson decisions (``count``, ``max_active``, ``verdict``, ``recurrence``), budget decisions
    (``before``, ``after``, ``piles_before``, ``piles_after``) and draft decisions (``gates``,
    ``supersedes``, ``members``, ``dropped_anchors``, ``written``): docs/decisions.md, "The record"."""
    rows: list[tuple[str, SafeString | str]] = []
    covered: set[str] = set()

    def add(keys: tuple[str, ...], label: str, value: SafeString | str) -> None:
        rows.append((label, value))
        covered.update(keys)

    if "count" in evidence and "max_active" in evidence:
        add(
            ("count", "max_active"),
            LABELS["pile"],
            f"{evidence['count']} live, budget {evidence['max_active']}",
        )
    if "verdict" in evidence:
        add(("verdict",), LABELS["verdict"], str(evidence["verdict"]))
    if "recurrence" in evidence:
        add(("recurrence",), LABELS["recurrence"], recurrence_text(evidence["recurrence"]))
    before, after = evidence.get("before"), evidence.get("after")
    if isinstance(before, dict) and isinstance(after, dict):
        budget = (
            f"max_active {before.get('max_active')} → {after.get('max_active')},"
            f" {_on_off(before.get('budget_enabled'))} → {_on_off(after.get('budget_enabled'))}"
        )
        add(("before", "after"), LABELS["budget"], budget)
    if "piles_before" in evidence and "piles_after" in evidence:
        piles = f"{evidence['piles_before']} → {evidence['piles_after']}"
        add(("piles_before", "piles_after"), LABELS["piles"], piles)
    gates = evidence.get("gates")
    if isinstance(gates, dict):
        add(("gates",), LABELS["gates"], f"GROUND {gates.get('ground')} · VERIFY {gates.get('verify')}")
    supersedes = evidence.get("supersedes")
    members = evidence.get("members")
    if isinstance(supersedes, list):
        # the members listed next show their hashes; only those not among them are named here
        listed = (
            {m.get("hash") for m in members if isinstance(m, dict)} if isinstance(members, list) else set()
        )
        missing = ", ".join(f"{hash8(str(h))}…" for h in supersedes if h not in listed)
        text = counted(len(supersedes), "lesson") + (
            f"; not on the entity then: {missing}" if missing else ""
        )
        add(("supersedes",), LABELS["supersedes"], text)
    if isinstance(members, list):
        items = "".join(_member(m) for m in members)
        add(("members",), LABELS["members"], SafeString(f"<ul>{items}</ul>") if items else "none")
    dropped = evidence.get("dropped_anchors")
    if isinstance(dropped, list):
        shown = ", ".join(f"`{a}`" for a in dropped) if dropped else NO_ANCHOR_DROPPED
        add(("dropped_anchors",), LABELS["dropped_anchors"], shown)
    if "written" in evidence:
        rows.extend(_written_rows(evidence["written"]))
        covered.add("written")
    rows += [
        (str(key), value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
        for key, value in sorted(evidence.items(), key=lambda kv: str(kv[0]))
        if key not in covered
    ]
    return rows


def evidence_html(evidence: object) -> SafeString:
    """The log's evidence cell (and a decision page's record): ``<details>`` with ``evidence_summary``, the
    readable fields (``evidence_rows``) and, behind a nested ``<details>``, the raw JSON (``raw_json``).
    ``evidence`` not a dict: the summary of none, no fields, the raw JSON only."""
    as_dict = evidence if isinstance(evidence, dict) else {}
    rows = "".join(html_format(ROW, label=label, value=value) for label, value in evidence_rows(as_dict))
    return html_format(
        EVIDENCE_CELL,
        summary=evidence_summary(as_dict),
        rows=SafeString(rows),
        raw=raw_json(evidence if evidence else {}),
    )
