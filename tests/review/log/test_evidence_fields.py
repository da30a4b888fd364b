"""A decision's evidence in the log reads as labelled fields (the pile then, gates, members, a written
consolidation's text and waivers…), its raw JSON folded beneath for auditors (``review.log.evidence``)."""

from __future__ import annotations

import json

from django.utils.html import escape
from hypothesis import given, settings

from review.log.evidence import evidence_html, evidence_rows, raw_json, recurrence_text
from review.log.tables import DecisionTable
from review.models import Decision
from tests.html import inline_text, parse
from tests.review.log.test_log_cells import EVIDENCE

ZERO = dict.fromkeys(
    ("sessions_shown", "recurred", "recurred_sessions", "during", "unknown", "ambiguous", "earlier_version"),
    0,
)
WRITTEN_APPROVAL = {
    "count": 10,
    "max_active": 8,
    "supersedes": ["ab" * 32, "cd" * 32, "ef" * 32],  # the third no longer on the entity then
    "gates": {"ground": "not_run", "verify": "not_run"},
    "members": [
        {"hash": "ab" * 32, "verdict": "held", "recurrence": {**ZERO, "sessions_shown": 12}},
        {
            "hash": "cd" * 32,
            "verdict": "not applied by the loop",
            "recurrence": {
                **ZERO,
                "sessions_shown": 1,
                "recurred": 3,
                "recurred_sessions": 2,
                "ambiguous": 1,
            },
        },
    ],
    "dropped_anchors": ["Gross Amount"],
    "written": {
        "by": "reviewer:rita",
        "text": "Copy <b>Gross Amount</b> as printed.",
        "waivers": {"Gross Amount": "said by the other rule"},
    },
}


def shown(rows) -> list[tuple[str, str]]:
    return [(label, inline_text(parse(f"<div>{value}</div>").find("div"))) for label, value in rows]


def test_recurrence_reads_as_words():
    assert recurrence_text(ZERO) == "not shown in any session yet · no recurred correction"
    counts = {
        **ZERO,
        "sessions_shown": 1,
        "recurred": 1,
        "recurred_sessions": 1,
        "during": 2,
        "earlier_version": 1,
    }
    assert recurrence_text(counts) == (
        "shown in 1 session · recurred 1 time in 1 session · 2 mid-turn · 1 earlier version"
    )
    assert recurrence_text([1, 2]) == "[1, 2]"


def test_an_approval_of_a_written_consolidation_reads_field_by_field():
    assert shown(evidence_rows(WRITTEN_APPROVAL)) == [
        ("Pile then", "10 live, budget 8"),
        ("Gates", "GROUND not_run · VERIFY not_run"),
        ("Supersedes", "3 lessons; not on the entity then: efefefef…"),
        (
            "Members then",
            "abababab… held · shown in 12 sessions · no recurred correction "
            "cdcdcdcd… not applied by the loop · shown in 1 session · recurred 3 times in 2 sessions · 1 ambiguous",
        ),
        ("Dropped anchors", "`Gross Amount`"),
        ("Written by", "reviewer:rita"),
        ("Consolidation text", "Copy <b>Gross Amount</b> as printed."),
        ("Waived anchors", "Gross Amount: said by the other rule"),
    ]


def test_a_lesson_and_a_budget_decision_read_field_by_field_and_unknown_keys_stay():
    retire = {"count": 9, "max_active": 8, "verdict": "drifted", "recurrence": ZERO, "x<y>": [1]}
    assert shown(evidence_rows(retire)) == [
        ("Pile then", "9 live, budget 8"),
        ("Verdict then", "drifted"),
        ("Recurrence then", "not shown in any session yet · no recurred correction"),
        ("x<y>", "[1]"),
    ]
    budget = {
        "before": {"max_active": 8, "budget_enabled": True},
        "after": {"max_active": 12, "budget_enabled": False},
        "piles_before": 3,
        "piles_after": 1,
    }
    assert shown(evidence_rows(budget)) == [("Budget", "max_active 8 → 12, on → off"), ("Piles", "3 → 1")]
    assert shown(evidence_rows({"count": 3, "gates": "pass"})) == [("count", "3"), ("gates", "pass")]


def test_the_cell_escapes_the_written_text_and_folds_the_raw_json():
    cell = evidence_html(WRITTEN_APPROVAL)
    assert "<b>Gross" not in cell and "Copy &lt;b&gt;Gross Amount&lt;/b&gt; as printed." in cell
    outer = parse(cell).find("details", "evidence")
    assert inline_text(outer.find("summary")) == "10/8"
    raw = outer.find("details", "evidence-raw")
    assert "open" not in raw.attrs and "open" not in outer.attrs
    assert inline_text(raw.find("summary")) == "Raw JSON"
    assert json.loads(raw.find("pre").text) == WRITTEN_APPROVAL
    assert f"<pre>{escape(raw_json(WRITTEN_APPROVAL))}</pre>" in cell  # indented, line by line


@settings(max_examples=200, deadline=None)
@given(evidence=EVIDENCE)
def test_any_evidence_renders_with_its_raw_json(evidence):
    cell = DecisionTable([]).render_evidence(Decision(evidence=evidence))
    assert f"<pre>{escape(raw_json(evidence or {}))}</pre>" in cell


def test_the_log_shows_an_approval_as_fields(small_draft, second_reviewer, as_viewer):
    from lessons.models import Draft
    from review.services.consolidation import draft_approve

    hashes = small_draft(2, verdicts={0: "held"})
    draft_approve(draft=Draft.objects.get(ext_id="d-2"), actor=second_reviewer, reason="merge")
    decision = Decision.objects.get()
    page = parse(as_viewer.get("/decisions/").content)
    cell = page.find("tr", id=f"decision-{decision.seq}").find("details", "evidence")
    fields = [(inline_text(dt), dd) for dt, dd in zip(cell.find_all("dt"), cell.find_all("dd"), strict=True)]
    members = [inline_text(li) for li in fields[3][1].find_all("li")]
    assert members == [
        f"{hashes[0][:8]}… held · not shown in any session yet · no recurred correction",
        f"{hashes[1][:8]}… not applied by the loop · not shown in any session yet · no recurred correction",
    ]
    fields = [(label, members if label == "Members then" else inline_text(dd)) for label, dd in fields]
    assert fields == [
        ("Pile then", "2 live, budget 3"),
        ("Gates", "GROUND pass · VERIFY pass"),
        ("Supersedes", "2 lessons"),
        ("Members then", members),
        ("Dropped anchors", "none"),
    ]
    assert json.loads(cell.find("details", "evidence-raw").find("pre").text) == decision.evidence


def test_the_decision_page_shows_the_same_fields_in_its_record(small_draft, second_reviewer, as_viewer):
    from lessons.models import Draft
    from review.services.consolidation import draft_approve

    small_draft(2)
    decision = draft_approve(draft=Draft.objects.get(ext_id="d-2"), actor=second_reviewer, reason="merge")
    page = parse(as_viewer.get(f"/decisions/{decision.seq}/").content)
    cell = page.find(data_testid="record-evidence")
    assert inline_text(cell.find("summary")) == "2/3"
    labels = [inline_text(dt) for dt in cell.find("dl", "evidence").find_all("dt")]
    assert labels == ["Pile then", "Gates", "Supersedes", "Members then", "Dropped anchors"]
    assert (
        f"<pre>{escape(raw_json(decision.evidence))}</pre>"
        in as_viewer.get(f"/decisions/{decision.seq}/").content.decode()
    )
