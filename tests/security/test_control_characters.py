"""Control and bidi formatting characters in host-supplied text (issue 21, "also seen"): ESC, BEL and
U+202E come in through ``ingest`` and ``sync_areev``, are stored unchanged (evidence), and every page and
the CSV export show them as ``⟨U+001B⟩``; the JSONL export keeps them exact.
spec: interchange.md, "Control characters in shown text".
"""

from __future__ import annotations

import json
from urllib.parse import urlencode

import pytest

from lessons.core.text import lesson_hash, visible_controls
from lessons.models import Host, Lesson
from review.services.decisions import lessons_retire
from tests.fixtures.importers import run_command

ESC, BEL, RLO = "\x1b", "\x07", "\u202e"
RAW = (ESC, BEL, RLO)
MARKS = ("⟨U+001B⟩", "⟨U+0007⟩", "⟨U+202E⟩")
HOST = "ctl"
NS = "desk"
SUBJECT = f"invoice{RLO}fdp.exe"
TEXT = f"Copy the number{ESC}[2J exactly{BEL} and file it as {RLO}txt.exe"
DRAFT = f"Keep one rule{ESC}[31m: copy every field {RLO}exactly."
REASON = f"Restates rule 1{BEL}{RLO}."


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        (TEXT, "Copy the number⟨U+001B⟩[2J exactly⟨U+0007⟩ and file it as ⟨U+202E⟩txt.exe"),
        ("tab\tline\ncr\r", "tab\tline\ncr\r"),
        (
            "\x00\x7f\x85\u061c\u200e\u200f\u202a\u2066\u2069",
            "⟨U+0000⟩⟨U+007F⟩⟨U+0085⟩⟨U+061C⟩⟨U+200E⟩⟨U+200F⟩⟨U+202A⟩⟨U+2066⟩⟨U+2069⟩",
        ),
        ("café ‘quotes’ 数字 \u200d", "café ‘quotes’ 数字 \u200d"),
    ],
)
def test_control_and_bidi_characters_are_shown_as_code_points_and_nothing_else_changes(text, shown):
    assert visible_controls(text) == shown


@pytest.fixture
def ingested(db, tmp_path, reviewer) -> list[str]:
    """Through ``manage.py ingest``: host ``ctl`` (budget 1) with three lessons on an entity whose subject
    holds U+202E, one holding ESC, BEL and U+202E; a draft of the first two; the third retired with such
    a reason (two live: a pile). The hashes."""
    texts = [TEXT, "Second rule of the pile.", "Third rule of the pile."]
    hashes = [lesson_hash(NS, SUBJECT, t) for t in texts]
    records = [{"type": "host", "name": HOST, "max_active": 1, "budget_enabled": True}]
    records += [
        {
            "type": "lesson",
            "host": HOST,
            "namespace": NS,
            "subject": SUBJECT,
            "text": t,
            "created_at": 1767225600000 + i,
        }
        for i, t in enumerate(texts)
    ]
    records.append(
        {
            "type": "draft",
            "host": HOST,
            "id": "d-1",
            "namespace": NS,
            "subject": SUBJECT,
            "text": DRAFT,
            "supersedes": hashes[:2],
            "drafted_by": "llm:test",
            "gates": {"ground": "pass", "verify": "pass"},
            "created_at": 1767225600100,
        }
    )
    batch = tmp_path / "batch.jsonl"
    batch.write_text("".join(json.dumps(r) + "\n" for r in records))
    code, _out, err = run_command("ingest", str(batch))
    assert code == 0, err
    lessons_retire(host=Host.objects.get(name=HOST), hashes=[hashes[2]], actor=reviewer, reason=REASON)
    return hashes


def pages(hashes: list[str]) -> list[str]:
    entity = urlencode({"host": HOST, "namespace": NS, "subject": SUBJECT})
    return [
        "/",
        f"/?{urlencode({'q': 'invoice'})}",
        f"/pile/?{entity}",
        *(f"/lessons/{HOST}/{h}/" for h in hashes),
        "/hosts/",
        f"/hosts/{HOST}/",
        "/decisions/",
        f"/drafts/{HOST}/d-1/",
    ]


def test_the_stored_text_is_kept_as_it_came(ingested):
    assert Lesson.objects.get(hash=ingested[0]).text == TEXT
    assert Lesson.objects.get(hash=ingested[0]).subject == SUBJECT


def test_no_page_shows_a_raw_control_or_bidi_character(client, admin_user, ingested):
    client.force_login(admin_user)
    for path in pages(ingested):
        response = client.get(path)
        assert response.status_code == 200, path
        body = response.content.decode()
        assert [c for c in RAW if c in body] == [], path
        if path != "/hosts/":  # the hosts page names no entity
            assert "invoice⟨U+202E⟩fdp.exe" in body, path


def test_the_lesson_and_draft_pages_show_the_marks_where_the_characters_are(client, viewer, ingested):
    client.force_login(viewer)
    lesson_page = client.get(f"/lessons/{HOST}/{ingested[0]}/").content.decode()
    assert "Copy the number⟨U+001B⟩[2J exactly⟨U+0007⟩ and file it as ⟨U+202E⟩txt.exe" in lesson_page
    draft_page = client.get(f"/drafts/{HOST}/d-1/").content.decode()
    assert "Keep one rule⟨U+001B⟩[31m: copy every field ⟨U+202E⟩exactly." in draft_page
    log = client.get("/decisions/", HTTP_HX_REQUEST="true").content.decode()
    assert "Restates rule 1⟨U+0007⟩⟨U+202E⟩." in log


def test_the_csv_export_shows_the_marks_and_the_jsonl_keeps_the_characters(client, viewer, ingested):
    client.force_login(viewer)
    csv_text = b"".join(client.get("/review/decisions/export.csv").streaming_content).decode()
    assert [c for c in RAW if c in csv_text] == []
    assert "Restates rule 1⟨U+0007⟩⟨U+202E⟩." in csv_text
    assert "invoice⟨U+202E⟩fdp.exe" in csv_text
    jsonl = b"".join(client.get("/review/decisions/export.jsonl").streaming_content).decode()
    (record,) = [json.loads(line) for line in jsonl.splitlines()]
    assert (record["reason"], record["subject"]) == (REASON, SUBJECT)
    assert '"reason":"Restates rule 1\\u0007\u202e."' in jsonl


@pytest.mark.postgres
def test_a_lesson_synced_from_areev_is_stored_as_it_is_and_shown_marked(db, tmp_path, client, viewer):
    from tests.engines.conftest import lesson_fields, needs_areev, open_memory, release

    needs_areev()
    path = tmp_path / "memory.db"
    handle = open_memory(path, "user:dana")
    grain = handle.add("fact", json.dumps({**lesson_fields(0), "object": TEXT}))
    del handle
    release()
    code, _out, err = run_command("sync_areev", str(path), "--host", HOST)
    assert code == 0, err
    assert Lesson.objects.get(hash=grain).text == TEXT
    client.force_login(viewer)
    body = client.get(f"/lessons/{HOST}/{grain}/").content.decode()
    assert [c for c in RAW if c in body] == []
    assert "Copy the number⟨U+001B⟩[2J exactly⟨U+0007⟩ and file it as ⟨U+202E⟩txt.exe" in body


def test_manage_py_piles_shows_the_marks_and_its_json_keeps_the_characters(ingested):
    code, out, _err = run_command("piles")
    assert code == 0
    assert [c for c in RAW if c in out] == []
    assert "entity:desk/invoice⟨U+202E⟩fdp.exe" in out
    code, out, _err = run_command("piles", "--format", "json")
    (pile,) = json.loads(out)["piles"]
    assert pile["subject"] == SUBJECT
