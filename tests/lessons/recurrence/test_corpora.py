"""Acceptance on the corpora of tests/data: the counts of the recurrence issue, through the piles JSON and the
``recurrence`` command. spec: docs/piles-and-recurrence.md (and "recurrence" in the JSON); README.md ("Commands")."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from tests.lessons.recurrence.builders import counts

ADVERTISER = "cc844636"
CONTRACT_NUMBER = "ccefde1b"
GROSS_AMOUNT_FORMAT = "36727f00"
FLIGHT_DATES = ("531d6e53", "e0b6ccc3")
GROSS_TOTAL_FILE_TIER = "b65057a8"
L_0A07_CURRENT = "590b48ce"
L_0A07_EARLIER = "954a20ac"


@pytest.fixture
def piles(corpora, capsys):
    call_command("piles", "--format", "json")
    return {p["host"]: p for p in json.loads(capsys.readouterr().out)["piles"]}


@pytest.fixture
def report(corpora, capsys):
    call_command("recurrence", "--format", "json")
    return json.loads(capsys.readouterr().out)


def member(pile: dict, prefix: str) -> dict:
    (found,) = [m for m in pile["members"] if m["hash"].startswith(prefix)]
    return found


def lesson_row(report: dict, prefix: str) -> dict:
    (found,) = [row for row in report["lessons"] if row["hash"].startswith(prefix)]
    return found


def test_advertiser_lesson_recurred_twice_in_two_sessions_in_the_pile_json(piles):
    pile = piles["adbuy-desk"]
    assert pile["target"] == "entity:desk.adbuy/invoice_capture"
    assert member(pile, ADVERTISER)["text"].startswith("Fill Advertiser with the sponsoring committee")
    assert member(pile, ADVERTISER)["recurrence"] == counts(sessions_shown=8, recurred=2, recurred_sessions=2)


def test_contract_number_lesson_recurred_once(piles):
    assert member(piles["adbuy-desk"], CONTRACT_NUMBER)["recurrence"] == counts(
        sessions_shown=8, recurred=1, recurred_sessions=1
    )


def test_gross_amount_formatting_lesson_has_one_correction_of_unknown_timing(piles):
    assert member(piles["adbuy-desk"], GROSS_AMOUNT_FORMAT)["recurrence"] == counts(
        sessions_shown=8, unknown=1
    )


def test_both_flight_date_lessons_are_charged_one_ambiguous_correction(piles):
    for prefix in FLIGHT_DATES:
        assert member(piles["adbuy-desk"], prefix)["recurrence"] == counts(sessions_shown=8, ambiguous=1)


def test_every_other_adbuy_member_has_no_observed_correction(piles):
    charged = {ADVERTISER, CONTRACT_NUMBER, GROSS_AMOUNT_FORMAT, *FLIGHT_DATES}
    others = [m for m in piles["adbuy-desk"]["members"] if m["hash"][:8] not in charged]
    assert len(others) == 5
    assert all(m["recurrence"] == counts(sessions_shown=8) for m in others)


def test_warehouse_l_0a07_current_version_recurred_in_two_sessions_and_has_one_earlier_version(piles):
    assert member(piles["warehouse-sql"], L_0A07_CURRENT)["recurrence"] == counts(
        sessions_shown=2, recurred=2, recurred_sessions=2, earlier_version=1
    )


def test_the_command_reports_the_same_counts_and_flags_recurring_lessons(report):
    assert lesson_row(report, ADVERTISER) | {"text": None} == {
        "host": "adbuy-desk",
        "hash": "cc844636d4273cf9e98d465b13852a8b56a4652619ad97a5752531672a8ce79f",
        "lesson_id": None,
        "store": None,
        "namespace": "desk.adbuy",
        "subject": "invoice_capture",
        "status": "live",
        "text": None,
        "recurrence": counts(sessions_shown=8, recurred=2, recurred_sessions=2),
        "recurring": True,
    }
    assert lesson_row(report, CONTRACT_NUMBER)["recurring"] is False
    assert lesson_row(report, L_0A07_CURRENT)["recurrence"] == counts(
        sessions_shown=2, recurred=2, recurred_sessions=2, earlier_version=1
    )
    assert (
        lesson_row(report, L_0A07_CURRENT)["lesson_id"],
        lesson_row(report, L_0A07_CURRENT)["recurring"],
    ) == (
        "L-0a07",
        True,
    )


def test_a_lesson_reaching_the_session_mid_turn_counts_during(report):
    assert lesson_row(report, GROSS_TOTAL_FILE_TIER)["recurrence"] == counts(sessions_shown=1, during=1)


def test_the_earlier_version_keeps_no_counts_of_its_own(report):
    assert [row for row in report["lessons"] if row["hash"].startswith(L_0A07_EARLIER)] == []


def test_the_command_lists_every_current_version_once(report):
    from lessons.models import Lesson

    assert len(report["lessons"]) == Lesson.objects.count() - 1  # all but L-0a07's earlier text


def test_cycle_year_is_the_only_unmatched_topic_of_adbuy_desk(report):
    assert [(h["host"], h["unmatched_topics"]) for h in report["hosts"]] == [
        ("adbuy-desk", [{"topic": "cycle_year", "sessions": 2}]),
        ("support-triage", []),
        ("warehouse-sql", []),
    ]


def test_coverage_per_host_and_overall(report):
    adbuy = report["hosts"][0]["coverage"]
    assert adbuy == {
        "sessions": 8,
        "exposures": 81,
        "corrections_by_kind": {"tool_retry": 1, "user_correction": 8},
        "attributed": 5,
        "ambiguous": 1,
        "unmatched": 2,
    }
    assert report["coverage"] == {
        "sessions": 11,
        "exposures": 87,
        "corrections_by_kind": {"tool_retry": 1, "user_correction": 11},
        "attributed": 8,
        "ambiguous": 1,
        "unmatched": 2,
    }


def test_recompute_changes_nothing_that_ingest_stored(report, capsys):
    call_command("recurrence", "--format", "json", "--recompute")
    assert json.loads(capsys.readouterr().out) == report


def test_host_filter(corpora, capsys):
    call_command("recurrence", "--format", "json", "--host", "warehouse-sql")
    report = json.loads(capsys.readouterr().out)
    assert {row["host"] for row in report["lessons"]} == {"warehouse-sql"}
    assert [h["host"] for h in report["hosts"]] == ["warehouse-sql"]
    assert report["coverage"]["sessions"] == 3


def test_unknown_host_is_refused_with_exit_status_1(corpora):
    with pytest.raises(CommandError, match="unknown host 'nowhere'") as caught:
        call_command("recurrence", "--host", "nowhere")
    assert caught.value.returncode == 1


def test_text_output_lists_lessons_with_evidence_and_summarizes_the_rest(corpora, capsys):
    call_command("recurrence")
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "adbuy-desk"
    assert lines[1].startswith("  recurring cc844636  -  Fill Advertiser with the sponsoring committee")
    assert lines[2].strip() == "shown in 8 session(s); recurred 2 in 2 session(s)"
    assert "  9 other lesson(s): no observed correction (4 never shown)" in lines
    assert "  unmatched topics: cycle_year (2 sessions)" in lines
    assert "  recurring 590b48ce  team-playbook/L-0a07  Filter test accounts" in out
    assert "shown in 2 session(s); recurred 2 in 2 session(s), earlier version 1" in out
    assert lines[-1] == (
        "all hosts: 11 session(s), 87 exposure(s), corrections: tool_retry 1, user_correction 11; "
        "user corrections attributed 8, ambiguous 1, unmatched 2"
    )
