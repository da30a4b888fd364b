"""areev end to end through its own binding: a real memory file, the loop run with a scripted model,
``sync_areev``, the pile and draft pages, an approval through the dashboard, ``apply_decisions
--areev``, and the engine read back; then a rollback the same way. No mocks.
spec: importers.md ("areev"), decisions.md ("Hosts apply decisions").
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils.html import escape

from lessons.models import Draft, Lesson
from review.models import Decision
from tests.engines.conftest import HOST, LESSONS, NS, SUBJECT, TRIGGER, loop_live, recalled
from tests.fixtures.drafts import entity_version
from tests.fixtures.importers import run_command
from tests.html import parse

pytestmark = pytest.mark.postgres

ENTITY = {"host": HOST, "namespace": NS, "subject": SUBJECT}


def sync(path, *extra):
    return run_command("sync_areev", str(path), "--host", HOST, "--triggered-by", TRIGGER, *extra)


def apply(path, *extra):
    return run_command("apply_decisions", "--areev", str(path), "--host", HOST, *extra)


def decide(client, draft: Draft, which: str, reason: str) -> Decision:
    """POST the draft page's ``which`` form (approve, rollback) as the signed-in reviewer."""
    response = client.post(
        reverse(f"review:draft_{which}", args=[HOST, draft.ext_id]),
        {f"{which}-reason": reason, f"{which}-pile_version": entity_version(HOST)},
    )
    assert response.status_code == 302
    return Decision.objects.order_by("-seq").first()


def applied_once(path, decision: Decision, done: str, *, dismissed: int = 0) -> None:
    """``apply_decisions`` applies ``decision`` (and nothing else) and acknowledges it applied; an
    approval that resolves the pile also dismisses the engine's pile finding (``dismissed`` lines)."""
    code, out, err = apply(path)
    assert code == 0, err
    line = f"recommendation {decision.draft_id[:8]}… {done} as user:rita"
    lines = out.splitlines()
    assert [lines[0], lines[-1]] == [
        f"applied: #{decision.seq} {decision.action}: {line}",
        "1 applied, 0 refused, 0 skipped",
    ]
    assert [x.split(":")[0] for x in lines[1:-1]] == ["dismissed"] * dismissed
    decision.refresh_from_db()
    assert (decision.ack.status, decision.ack.detail, decision.actor) == ("applied", line, "rita")


def live_in_dashboard() -> list[tuple[str, str]]:
    rows = Lesson.objects.filter(host__name=HOST, namespace=NS, subject=SUBJECT, status="live")
    return sorted(rows.values_list("kind", "text"))


def test_a_draft_approved_in_the_dashboard_is_applied_by_areev_and_a_rollback_undoes_it(
    memory, reviewer, client
):
    path, hashes = memory

    code, out, err = sync(path)
    assert code == 0, err
    assert out.splitlines()[-3:-1] == [
        "imported: 6 line(s); 6 created, 0 unchanged, 0 updated, 0 held, 0 rejected",
        "importer: 5 lessons, 0 grains not lessons, 1 findings, 0 verdicts, 0 outcome rows, "
        "0 unmapped outcome rows, 1 drafts, 0 skipped lines, 0 consolidations the dashboard already holds, "
        "0 lessons the engine no longer holds",
    ]
    assert out.splitlines()[-1].startswith("changes since op 0: ")
    draft = Draft.objects.get(host__name=HOST)
    assert (len(draft.ext_id), draft.supersedes, draft.drafted_by, draft.triggered_by, draft.gates_pass) == (
        64,
        sorted(hashes),
        "llm:scripted-consolidator",
        TRIGGER,
        True,
    )
    assert live_in_dashboard() == sorted(("lesson", t) for t in LESSONS)

    client.force_login(reviewer)
    pile = client.get(reverse("review:pile"), ENTITY)
    assert pile.status_code == 200
    # The page marks the words a member shares with its fact (<mark>), so its text is read, not its markup.
    shown = " ".join(parse(pile.content).find("main").text.split())
    assert [" ".join(t.split()) in shown for t in LESSONS] == [True] * 5
    page = client.get(reverse("review:draft", args=[HOST, draft.ext_id]))
    assert page.status_code == 200 and escape(draft.text) in page.content.decode()

    approval = decide(client, draft, "approve", "Five rules say three things; keep one.")
    assert approval.action == "approve_consolidation"
    applied_once(path, approval, "applied", dismissed=1)  # and the pile finding (issue 24, Build 3)
    (live,) = recalled(path)
    assert (live["fields"]["object"], sorted(live["fields"]["consolidates"])) == (draft.text, sorted(hashes))
    assert loop_live(path) == [live["hash"]]

    assert apply(path)[1].splitlines() == ["0 applied, 0 refused, 0 skipped"]  # nothing applied twice

    code, out, err = sync(path)
    assert code == 0, err
    assert "1 consolidations the dashboard already holds" in out
    assert not out.splitlines()[-1].endswith(": 0")
    assert live_in_dashboard() == [("consolidation", draft.text)]

    rollback = decide(client, draft, "rollback", "Field accuracy dropped after the merge.")
    assert rollback.action == "rollback_consolidation"
    applied_once(path, rollback, "rolled back")
    assert loop_live(path) == sorted(hashes)

    code, out, err = sync(path)
    assert code == 0, err
    assert live_in_dashboard() == sorted(("lesson", t) for t in LESSONS)
