"""Attacks on decisions: double submits, smuggled hashes, tampered versions, reasons at the edges,
imports racing decisions, tampering with the chain. spec: decisions.md; interchange.md ("lesson": a
reviewer's decision is never silently undone by an import).
"""

from __future__ import annotations

import io
import json
from urllib.parse import urlencode

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from lessons.core.interchange import MAX_ACTIVE_WANTED
from lessons.core.text import lesson_hash
from lessons.models import Draft, Host, Lesson
from review.log.exports import decisions_jsonl
from review.models import Decision
from review.piles.forms import MEMBER_NOT_ON_ENTITY
from review.services.chain import decision_record, decisions_verify
from review.services.common import REASON_REQUIRED, REASON_TOO_LONG, STALE_PILE
from review.services.consolidation import consolidation_rollback, draft_approve
from review.services.decisions import RESTORE_NOT_BY_RETIRE
from review.web.forms import PILE_VERSION_MISSING, REASON_CODE_INVALID
from tests import builders

NS, SUBJECT, T0 = "desk.test", "invoice_capture", 1768435200000
ENTITY = urlencode({"host": "acme", "namespace": NS, "subject": SUBJECT})


def record(i: int, *, subject: str = SUBJECT, status: str = "live") -> dict:
    """Lesson ``i`` of host acme on this module's namespace (``builders.lesson`` with its defaults)."""
    text = f"Rule {i} for the capture of field {i}."
    return builders.lesson(
        host="acme", namespace=NS, subject=subject, text=text, created_at=T0 + i, status=status
    )


def h(i: int, subject: str = SUBJECT) -> str:
    return lesson_hash(NS, subject, f"Rule {i} for the capture of field {i}.")


@pytest.fixture
def pile(ingest):
    """Host acme (budget 3, on): five live lessons on the entity, one on another subject, one retracted
    by its source; a pending draft superseding lessons 0 and 1."""
    records = [{"type": "host", "name": "acme", "max_active": 3, "budget_enabled": True}]
    records += [record(i) for i in range(5)]
    records += [record(9, subject="other"), record(7, status="retracted")]
    records.append(
        {
            "type": "draft",
            "host": "acme",
            "id": "d-1",
            "namespace": NS,
            "subject": SUBJECT,
            "text": "Rules 0 and 1 for the capture of fields 0 and 1.",
            "supersedes": [h(0), h(1)],
            "drafted_by": "llm:x",
            "gates": {"ground": "pass", "verify": "pass"},
            "created_at": T0 + 50,
        }
    )
    report = ingest(records)
    assert report.ok, report.error_lines()


def version(client) -> str:
    body = client.get(f"/pile/?{ENTITY}").content.decode()
    return body.split('name="pile_version" value="', 1)[1].split('"', 1)[0]


def retire(client, members, reason="Restates another lesson.", **more):
    return client.post(f"/pile/retire/?{ENTITY}", {"members": members, "reason": reason, **more})


def statuses() -> dict[str, str]:
    return dict(Lesson.objects.values_list("hash", "status"))


# --- the retire form ------------------------------------------------------------------------------


def test_a_double_submit_of_one_form_writes_once_and_refuses_the_second_as_stale(as_reviewer, pile):
    seen = version(as_reviewer)
    assert retire(as_reviewer, [h(2)], pile_version=seen).status_code == 302
    second = retire(as_reviewer, [h(2)], pile_version=seen)
    assert second.status_code == 409
    assert STALE_PILE in second.content.decode()
    assert Decision.objects.count() == 1


def test_a_hash_of_another_entity_smuggled_into_the_members_is_refused(as_reviewer, pile):
    before = statuses()
    response = retire(as_reviewer, [h(2), h(9, "other")], pile_version=version(as_reviewer))
    assert response.status_code == 422
    assert MEMBER_NOT_ON_ENTITY in response.content.decode()
    assert statuses() == before and Decision.objects.count() == 0


@pytest.mark.parametrize(
    ("pile_version", "status", "message"),
    [
        ("0" * 64, 409, STALE_PILE),
        ("", 422, PILE_VERSION_MISSING),
        ("x" * 65, 422, "Ensure this value has at most 64 characters (it has 65)."),
    ],
)
def test_a_tampered_pile_version_is_refused_and_nothing_written(
    as_reviewer, pile, pile_version, status, message
):
    response = retire(as_reviewer, [h(2)], pile_version=pile_version)
    assert response.status_code == status
    assert message in response.content.decode()
    assert Decision.objects.count() == 0 and statuses()[h(2)] == "live"


def test_a_reason_code_not_in_the_list_is_refused(as_reviewer, pile):
    response = retire(as_reviewer, [h(2)], pile_version=version(as_reviewer), reason_code="because")
    assert response.status_code == 422
    assert REASON_CODE_INVALID in response.content.decode()
    assert Decision.objects.count() == 0


@pytest.mark.parametrize(
    ("reason", "stored"),
    [
        ("  \n" + "é" * 500 + "\t ", "é" * 500),
        ("\U0001f600" * 500, "\U0001f600" * 500),
        ("e\u0301" * 250, "e\u0301" * 250),
    ],
    ids=["accented-trimmed", "astral", "combining"],
)
def test_a_reason_of_500_characters_after_trimming_is_kept_exactly(as_reviewer, pile, reason, stored):
    assert retire(as_reviewer, [h(2)], reason=reason, pile_version=version(as_reviewer)).status_code == 302
    assert Decision.objects.get().reason == stored


@pytest.mark.parametrize("reason", [" " + "é" * 501 + " ", "\U0001f600" * 501])
def test_a_reason_of_501_characters_is_refused_with_its_length(as_reviewer, pile, reason):
    response = retire(as_reviewer, [h(2)], reason=reason, pile_version=version(as_reviewer))
    assert response.status_code == 422
    assert REASON_TOO_LONG.format(length=501) in response.content.decode()
    assert Decision.objects.count() == 0


@pytest.mark.parametrize("reason", ["", "   ", "\n\t"])
def test_a_blank_reason_is_refused(as_reviewer, pile, reason):
    response = retire(as_reviewer, [h(2)], reason=reason, pile_version=version(as_reviewer))
    assert (response.status_code, REASON_REQUIRED in response.content.decode()) == (422, True)


def test_restoring_a_lesson_its_source_retracted_is_refused_on_the_page(as_reviewer, pile):
    path = f"/lessons/acme/{h(7)}/restore/"
    response = as_reviewer.post(path, {"reason": "Want it back.", "pile_version": version(as_reviewer)})
    assert response.status_code == 422
    assert RESTORE_NOT_BY_RETIRE.format(short=h(7)[:8]).replace("'", "&#x27;") in response.content.decode()
    assert statuses()[h(7)] == "retracted"


# --- budgets --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", MAX_ACTIVE_WANTED),
        ("10001", MAX_ACTIVE_WANTED),
        ("-3", MAX_ACTIVE_WANTED),
        ("abc", MAX_ACTIVE_WANTED),
        ("", MAX_ACTIVE_WANTED),
        ("1e3", MAX_ACTIVE_WANTED),
    ],
)
def test_a_budget_out_of_range_or_not_a_number_is_refused_on_the_page(
    client, admin_user, pile, value, message
):
    client.force_login(admin_user)
    response = client.post(
        "/hosts/acme/budget/",
        {"max_active": value, "budget_enabled": "on", "reason": "Tighter.", "save": "1"},
    )
    assert response.status_code == 400
    assert message in response.content.decode()
    assert (Host.objects.get().max_active, Decision.objects.count()) == (3, 0)


@pytest.mark.parametrize("value", ["0", "10001", "-1", "abc"])
def test_a_budget_out_of_range_on_the_command_line_exits_nonzero(pile, admin_user, value):
    with pytest.raises((CommandError, SystemExit)) as caught:
        call_command(
            "budget",
            "acme",
            f"--max-active={value}",
            "--as",
            "ada",
            "--reason",
            "x",
            stdout=io.StringIO(),
            stderr=io.StringIO(),
        )
    code = caught.value.returncode if isinstance(caught.value, CommandError) else caught.value.code
    assert code in (1, 2)
    assert Host.objects.get().max_active == 3


# --- imports against decisions ----------------------------------------------------------------------


def test_an_import_after_an_approval_does_not_unlink_the_superseded_members(pile, ingest, reviewer):
    """Re-importing the source (members live, no superseded_by) is held by the approval for the status;
    it must not clear superseded_by either, or the rollback no longer finds the members it superseded."""
    draft = Draft.objects.get()
    approval = draft_approve(draft=draft, actor=reviewer, reason="One rule instead of two.")
    report = ingest([record(0), record(1)])
    assert report.counts["lesson"]["held"] == 2
    members = Lesson.objects.filter(hash__in=[h(0), h(1)])
    assert {(m.status, m.superseded_by) for m in members} == {("superseded", approval.created_hash)}
    consolidation_rollback(draft=draft, actor=reviewer, reason="Back to the two rules.")
    assert (statuses()[h(0)], statuses()[h(1)]) == ("live", "live")


def test_approving_after_a_rollback_is_refused(pile, reviewer, second_reviewer):
    from review.services.common import DecisionRefused
    from review.services.consolidation import DRAFT_NOT_PENDING

    draft = Draft.objects.get()
    draft_approve(draft=draft, actor=reviewer, reason="Merge.")
    consolidation_rollback(draft=draft, actor=reviewer, reason="Undo.")
    with pytest.raises(DecisionRefused) as caught:
        draft_approve(draft=draft, actor=second_reviewer, reason="Again.")
    assert str(caught.value) == DRAFT_NOT_PENDING.format(draft="d-1", status="approved")
    assert Decision.objects.count() == 2


# --- the chain ------------------------------------------------------------------------------------


def test_an_update_by_sql_is_found_by_verify_and_by_anyone_checking_the_export(as_reviewer, pile):
    from review.services.chain import chain_verify

    retire(as_reviewer, [h(2)], pile_version=version(as_reviewer))
    retire(as_reviewer, [h(3)], pile_version=version(as_reviewer))
    with connection.cursor() as cursor:
        cursor.execute("UPDATE review_decision SET reason = %s WHERE seq = 1", ["Edited afterwards."])
    assert decisions_verify()[0] == 1
    with pytest.raises(CommandError) as caught:
        call_command("verify_decisions", stdout=io.StringIO(), stderr=io.StringIO())
    assert (caught.value.returncode, str(caught.value)) == (1, "chain broken at seq 1")
    exported = [
        json.loads(line) for line in "".join(decisions_jsonl(Decision.objects.order_by("seq"))).splitlines()
    ]
    assert exported[0]["reason"] == "Edited afterwards."  # the export shows what is stored ...
    assert chain_verify(exported) == 1  # ... and the chain shows it was changed
    assert [decision_record(d)["seq"] for d in Decision.objects.all()] == [1, 2]


# --- two reviewers at once, through the pages (PostgreSQL row locks) -------------------------------


def _race_posts(clients_and_posts) -> list[int]:
    import threading

    from django.db import connections

    barrier = threading.Barrier(len(clients_and_posts))
    statuses_seen = [0] * len(clients_and_posts)

    def worker(index, client, path, data):
        try:
            barrier.wait(timeout=10)
            statuses_seen[index] = client.post(path, data).status_code
        finally:
            connections.close_all()

    threads = [threading.Thread(target=worker, args=(i, *cp)) for i, cp in enumerate(clients_and_posts)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    return statuses_seen


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_two_reviewers_posting_the_retire_form_at_once_exactly_one_wins(pile, reviewer, second_reviewer):
    from django.test import Client

    clients = []
    for user in (reviewer, second_reviewer):
        client = Client()
        client.force_login(user)
        clients.append(client)
    seen = version(clients[0])
    path = f"/pile/retire/?{ENTITY}"
    got = _race_posts(
        [
            (clients[0], path, {"members": [h(2)], "reason": "a", "pile_version": seen}),
            (clients[1], path, {"members": [h(3)], "reason": "b", "pile_version": seen}),
        ]
    )
    assert sorted(got) == [302, 409]
    assert Decision.objects.count() == 1 and decisions_verify() == (None, 1)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_two_admins_saving_budgets_at_once_both_land_in_one_intact_chain(pile, admin_user):
    from django.contrib.auth.models import Group, User
    from django.test import Client

    other = User.objects.create_user(username="ann", password="x")
    other.groups.add(Group.objects.get(name="admin"))
    clients = []
    for user in (admin_user, other):
        client = Client()
        client.force_login(user)
        clients.append(client)
    path = "/hosts/acme/budget/"
    got = _race_posts(
        [
            (clients[0], path, {"max_active": 4, "budget_enabled": "on", "reason": "a", "save": "1"}),
            (clients[1], path, {"max_active": 5, "budget_enabled": "on", "reason": "b", "save": "1"}),
        ]
    )
    assert sorted(got) == [302, 302]
    last = Decision.objects.order_by("-seq").first()
    assert Host.objects.get().max_active == last.evidence["after"]["max_active"]
    first = Decision.objects.get(seq=1)
    assert last.evidence["before"] == first.evidence["after"]  # the second saw the first's change
    assert decisions_verify() == (None, 2)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks need PostgreSQL")
@pytest.mark.django_db(transaction=True)
def test_an_import_racing_a_retire_never_overwrites_the_decision(pile, reviewer):
    """The retire holds its row locks until commit; an import that read the lesson before that commit must
    not then write the source's status over the decision (interchange.md: held by the decision)."""
    import threading
    import time

    from django.db import connections, transaction

    from lessons.ingest.passes import ingest_sources
    from lessons.ingest.reading import bytes_source
    from review.services.decisions import lessons_retire

    locked, go = threading.Event(), threading.Event()
    reports = []

    def reviewer_thread():
        try:
            with transaction.atomic():
                lessons_retire(host=Host.objects.get(), hashes=[h(2)], actor=reviewer, reason="Duplicate.")
                locked.set()
                go.wait(timeout=10)
        finally:
            connections.close_all()

    def import_thread():
        try:
            locked.wait(timeout=10)
            body = json.dumps({**record(2, status="superseded"), "superseded_by": h(3)}).encode()
            reports.append(ingest_sources(sources=[bytes_source(body, name="race.jsonl")]))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=reviewer_thread), threading.Thread(target=import_thread)]
    for thread in threads:
        thread.start()
    time.sleep(1.0)  # the import is now blocked on the reviewer's row lock
    go.set()
    for thread in threads:
        thread.join(timeout=30)
    lesson = Lesson.objects.get(hash=h(2))
    assert (lesson.status, lesson.superseded_by) == ("retracted", None)
    assert reports[0].counts["lesson"]["held"] == 1


# --- the Django admin is no back door ----------------------------------------------------------------


def test_the_admins_bulk_delete_action_cannot_remove_decisions_acks_or_lessons(client, pile, reviewer):
    from django.contrib.auth.models import User

    from review.models import DecisionAck
    from review.services.acks import decision_ack
    from review.services.decisions import lessons_retire

    decision = lessons_retire(host=Host.objects.get(), hashes=[h(2)], actor=reviewer, reason="Duplicate.")[0]
    decision_ack(decision=decision, status="applied")
    client.force_login(User.objects.create_superuser("root", "root@example.invalid", "x"))
    for path, model in (
        ("review/decision", Decision),
        ("review/decisionack", DecisionAck),
        ("lessons/lesson", Lesson),
        ("lessons/host", Host),
    ):
        ids = [str(pk) for pk in model.objects.values_list("pk", flat=True)]
        response = client.post(
            f"/admin/{path}/", {"action": "delete_selected", "_selected_action": ids, "post": "yes"}
        )
        assert response.status_code in (200, 302, 403), path
        assert model.objects.count() == len(ids), path
    assert decisions_verify() == (None, 1)


@pytest.mark.parametrize("label", ["user: rita", " user:rita ", "user:rita\t", "rita "])
def test_a_label_naming_the_reviewer_with_stray_spaces_still_forbids_self_approval(
    pile, ingest, reviewer, label
):
    from review.services.common import DecisionRefused
    from review.services.consolidation import DRAFT_BY_TRIGGER

    draft = {
        "type": "draft",
        "host": "acme",
        "id": "d-2",
        "namespace": NS,
        "subject": SUBJECT,
        "text": "Rules 3 and 4 together.",
        "supersedes": [h(3), h(4)],
        "drafted_by": "llm:x",
        "triggered_by": label,
        "gates": {"ground": "pass", "verify": "pass"},
        "created_at": T0 + 60,
    }
    assert ingest([draft]).ok
    with pytest.raises(DecisionRefused) as caught:
        draft_approve(draft=Draft.objects.get(ext_id="d-2"), actor=reviewer, reason="Looks right.")
    assert str(caught.value) == DRAFT_BY_TRIGGER.format(user="rita", draft="d-2")


@pytest.mark.parametrize("reason", ["\u200b", "\u200b\u200d\ufeff", "\u2060 \u200b"])
def test_a_reason_of_only_invisible_characters_is_refused(as_reviewer, pile, reason):
    response = retire(as_reviewer, [h(2)], reason=reason, pile_version=version(as_reviewer))
    assert (response.status_code, REASON_REQUIRED in response.content.decode()) == (422, True)
    assert Decision.objects.count() == 0


@pytest.mark.parametrize("line", ["[" * 100_000, '{"seq": ' + "1" * 5000 + "}", "[1, 2]"])
def test_verifying_a_file_json_chokes_on_names_the_line(db, tmp_path, line):
    path = tmp_path / "export.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(CommandError) as caught:
        call_command("verify_decisions", "--file", str(path), stdout=io.StringIO(), stderr=io.StringIO())
    assert (caught.value.returncode, str(caught.value)) == (1, f"{path}, line 1: not a JSON object")


def test_a_double_submit_of_the_budget_form_records_one_decision(client, admin_user, pile):
    from review.services.budget import BUDGET_UNCHANGED

    client.force_login(admin_user)
    form = {"max_active": 5, "budget_enabled": "on", "reason": "Room for two more.", "save": "1"}
    assert client.post("/hosts/acme/budget/", form).status_code == 302
    second = client.post("/hosts/acme/budget/", form)
    assert second.status_code == 400
    message = BUDGET_UNCHANGED.format(host="acme", max_active=5, state="enabled")
    assert message in second.content.decode()
    assert Decision.objects.count() == 1


def test_a_double_submit_of_the_restore_form_records_one_decision(as_reviewer, pile):
    assert retire(as_reviewer, [h(2)], pile_version=version(as_reviewer)).status_code == 302
    path = f"/lessons/acme/{h(2)}/restore/"
    seen = version(as_reviewer)
    assert as_reviewer.post(path, {"reason": "Needed after all.", "pile_version": seen}).status_code == 302
    second = as_reviewer.post(path, {"reason": "Needed after all.", "pile_version": seen})
    assert second.status_code == 409
    assert Decision.objects.count() == 2 and statuses()[h(2)] == "live"
